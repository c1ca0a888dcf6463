package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	"github.com/spf13/cobra"
)

// `merge STORE... -o OUT`: the runs of results stores kept on several machines
// gathered into one, and each sharded run whose shards are all there merged into
// the whole run (engine.MergeShards).
func newMergeCmd(env *Env) *cobra.Command {
	var out string
	var only []string
	cmd := &cobra.Command{Use: "merge [STORE... -o OUT]",
		Short: "Gather results stores from several machines into one, merging the shards of each sharded run",
		Long: `merge copies the runs of the stores given into OUT, and makes the whole run of each sharded run
whose shards are all there. Without stores it merges the sharded runs of --results in place:
the shards of a run that shared one store (PostgreSQL) are already together. A sharded run
that cannot be merged (a shard missing or different) is named with the reason and left
out; merge fails only when it could merge none, or one asked for with --group.`,
		Example: `  pgbakeoff merge a.db b.db c.db d.db -o all.db
  pgbakeoff merge --results postgres://bench@results/pgbakeoff`}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the results store to write the runs to, created if absent (with stores to merge)")
	cmd.Flags().StringArrayVar(&only, "group", nil, "merge only this shard group (repeatable); it is an error if it cannot be merged")
	cmd.RunE = func(cmd *cobra.Command, inputs []string) error {
		inPlace := len(inputs) == 0
		switch {
		case inPlace && out != "":
			return usageError{errors.New("merge -o OUT needs the stores to merge into it")}
		case inPlace:
			out, _ = cmd.Flags().GetString("results")
			inputs = []string{out}
		case out == "":
			return usageError{errors.New("merge needs -o OUT: the results store to write the runs to")}
		}
		if err := checkMergePaths(inputs, out, inPlace); err != nil {
			return usageError{err}
		}
		ctx, stop := env.Interrupt(cmd.Context())
		defer stop()
		// Everything is read and every sharded run merged before anything is written:
		// a store of another run or a missing shard changes nothing.
		runs, groups, order, err := readShardRuns(ctx, env, inputs)
		if err != nil {
			return err
		}
		mergedBefore := map[string]bool{}
		for _, d := range runs {
			if d.Labels["shards"] != "" {
				mergedBefore[d.Labels["shard_group"]] = true
			}
		}
		for _, g := range only {
			if groups[g] == nil {
				return usageError{fmt.Errorf("--group %s: no sharded run of that group in %s", g, redactAll(inputs))}
			}
		}
		ready, refused := mergeable(env, order, groups, only, mergedBefore)
		// Runs of no shard group are gathered as they are: with them there is
		// something to write, and only a group asked for by name fails the merge.
		plain := !inPlace && slices.ContainsFunc(runs, func(d *store.RunDetail) bool { _, _, ok := engine.ShardsOf(&d.Run); return !ok })
		if err := refusedError(refused, len(ready), only, plain); err != nil {
			return fmt.Errorf("%w; nothing was written", err)
		}

		st, err := openForWriting(ctx, env, out)
		if err != nil {
			return err
		}
		defer st.Close()
		have, err := st.Runs(ctx, store.Filter{})
		if err != nil {
			return err
		}
		if !inPlace {
			if err := copyRuns(ctx, env, st, runs, have, len(inputs)); err != nil {
				return err
			}
		}
		if len(order) == 0 && inPlace {
			fmt.Fprintf(env.Stdout, "%s holds no sharded run to merge\n", st.Path())
		}
		if err := saveGroups(ctx, env, st, ready, groups, have); err != nil {
			return err
		}
		return nil
	}
	return cmd
}

// mergeable are the groups whose shards can be merged now, of those asked for
// (all when only is empty); refused names each that cannot, with the reason,
// which it also prints.
func mergeable(env *Env, order []string, groups map[string][]engine.ShardRun, only []string, mergedBefore map[string]bool) (ready []string, refused map[string]error) {
	refused = map[string]error{}
	for _, g := range order {
		if len(only) > 0 && !slices.Contains(only, g) {
			continue
		}
		switch {
		case mergedBefore[g]:
			fmt.Fprintf(env.Stdout, "%s: merged before\n", g)
		case engine.StillRunning(groups[g], env.Now()):
			fmt.Fprintf(env.Stdout, "%s: a shard is still running; merge once every shard has ended\n", g)
			if slices.Contains(only, g) {
				refused[g] = errors.New("a shard is still running; merge once every shard has ended")
			}
		default:
			if _, _, err := engine.MergeShards(groups[g]); err != nil {
				refused[g] = err
				fmt.Fprintf(env.Stdout, "%s: not merged: %v\n", g, err)
				continue
			}
			ready = append(ready, g)
		}
	}
	return ready, refused
}

// refusedError fails merge when a group asked for by name could not be merged,
// or when none could be while some could not and no other run is to be
// gathered (plain).
func refusedError(refused map[string]error, merged int, only []string, plain bool) error {
	for _, g := range only {
		if err := refused[g]; err != nil {
			return fmt.Errorf("--group %s cannot be merged: %w", g, err)
		}
	}
	switch {
	case merged > 0 || len(refused) == 0 || plain && len(only) == 0:
		return nil
	case len(refused) == 1:
		for _, err := range refused {
			return err
		}
	}
	return fmt.Errorf("none of the %d sharded runs can be merged (each is named above with the reason)", len(refused))
}

// redactAll names stores for a message, without their passwords.
func redactAll(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = target.Redact(p)
	}
	return strings.Join(out, ", ")
}

// readShardRuns reads every run of the stores at paths, and the shard runs among
// them by group, the groups in the order first met.
func readShardRuns(ctx context.Context, env *Env, paths []string) (runs []*store.RunDetail, groups map[string][]engine.ShardRun, order []string, err error) {
	groups = map[string][]engine.ShardRun{}
	for _, path := range paths {
		rs, err := readAllRuns(ctx, env, path)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, d := range rs {
			runs = append(runs, d)
			group, _, ok := engine.ShardsOf(&d.Run)
			if !ok {
				continue
			}
			sr := engine.ShardRun{Detail: d}
			if len(d.Summary) > 0 {
				if sr.Summary, err = workload.ReadSummary(d.Summary); err != nil {
					return nil, nil, nil, fmt.Errorf("%s: run %d summary: %w", target.Redact(path), d.ID, err)
				}
			}
			if groups[group] == nil {
				order = append(order, group)
			}
			groups[group] = append(groups[group], sr)
		}
	}
	return runs, groups, order, nil
}

// copyRuns saves into st the runs it does not hold yet; those it holds take the
// ids they have there, which the merged runs record.
func copyRuns(ctx context.Context, env *Env, st *store.Store, runs []*store.RunDetail, have []store.Run, stores int) error {
	copied, skipped := 0, 0
	for _, d := range runs {
		if k := slices.IndexFunc(have, func(r store.Run) bool { return sameRun(&r, &d.Run) }); k >= 0 {
			d.ID = have[k].ID
			skipped++
			continue
		}
		if _, err := st.SaveRun(ctx, d); err != nil {
			return fmt.Errorf("%s: %w", st.Path(), err)
		}
		copied++
	}
	fmt.Fprintf(env.Stdout, "%d runs from %d stores copied into %s", copied, stores, st.Path())
	if skipped > 0 {
		fmt.Fprintf(env.Stdout, " (%d it held already)", skipped)
	}
	fmt.Fprintln(env.Stdout)
	return nil
}

// saveGroups saves the whole run of each group ready to merge that st does not
// hold yet, and says what it made of each.
func saveGroups(ctx context.Context, env *Env, st *store.Store, ready []string, groups map[string][]engine.ShardRun, have []store.Run) error {
	for _, group := range ready {
		if slices.ContainsFunc(have, func(r store.Run) bool { return r.Labels["shard_group"] == group && r.Labels["shards"] != "" }) {
			fmt.Fprintf(env.Stdout, "%s: merged before\n", group)
			continue
		}
		d, sum, err := engine.MergeShards(groups[group])
		if err != nil {
			return err
		}
		id, err := saveMerged(ctx, st, d, sum)
		if err != nil {
			return fmt.Errorf("%s: %w", st.Path(), err)
		}
		fmt.Fprintf(env.Stdout, "run %d: %s, merged from %s shards: %s", id, group, d.Labels["shards"], sum.Headline())
		for _, f := range sum.Flags {
			if f.Invalid {
				fmt.Fprintf(env.Stdout, "  INVALID: %s", f.Reason)
			}
		}
		fmt.Fprintln(env.Stdout)
	}
	return nil
}

// checkMergePaths refuses an output that is one of the inputs (but in place),
// and an input given twice.
func checkMergePaths(inputs []string, out string, inPlace bool) error {
	seen := map[string]bool{}
	absOut, _ := filepath.Abs(out)
	for _, in := range inputs {
		abs, _ := filepath.Abs(in)
		if abs == absOut && !inPlace {
			return fmt.Errorf("merge writes to %s, which is also an input: give -o a new file", target.Redact(out))
		}
		if seen[abs] {
			return fmt.Errorf("%s is given twice", target.Redact(in))
		}
		seen[abs] = true
	}
	return nil
}

// readAllRuns reads every run of the store at path, with all that is recorded
// for it.
func readAllRuns(ctx context.Context, env *Env, path string) ([]*store.RunDetail, error) {
	st, err := openReading(ctx, env.Stderr, path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	rs, err := st.Runs(ctx, store.Filter{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Path(), err)
	}
	var out []*store.RunDetail
	for _, r := range rs {
		d, err := st.Run(ctx, r.ID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Path(), err)
		}
		out = append(out, d)
	}
	return out, nil
}

// sameRun tells a run copied before: the same process began it at the same instant.
func sameRun(a, b *store.Run) bool {
	return a.Started.Equal(b.Started) && a.Process == b.Process && a.Workload == b.Workload && a.Labels["shards"] == b.Labels["shards"]
}

// saveMerged writes the whole run of a sharded run, its summary with its own id.
func saveMerged(ctx context.Context, st *store.Store, d *store.RunDetail, sum *engine.Summary) (int64, error) {
	if _, err := st.SaveRun(ctx, d); err != nil {
		return 0, err
	}
	sum.RunID = d.ID
	b, err := json.Marshal(sum)
	if err != nil {
		return d.ID, err
	}
	d.Summary = b
	return d.ID, st.FinishRun(ctx, &d.Run)
}
