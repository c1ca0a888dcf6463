package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
		return gather(ctx, env, inputs, out, only, inPlace)
	}
	return cmd
}

// gather reads the stores, plans the merge (engine.PlanGather) and, unless it is
// refused, writes it into the store at out.
func gather(ctx context.Context, env *Env, inputs []string, out string, only []string, inPlace bool) error {
	stores := make([]engine.StoreRuns, len(inputs))
	for i, path := range inputs {
		runs, err := readAllRuns(ctx, env, path)
		if err != nil {
			return err
		}
		stores[i] = engine.StoreRuns{Path: path, Runs: runs}
	}
	plan, err := engine.PlanGather(stores, only, inPlace, env.Now(), workload.ReadSummary, env.Stdout)
	var ge *engine.GroupError
	switch {
	case errors.As(err, &ge) && errors.Is(ge.Err, engine.ErrNoSuchGroup):
		return usageError{fmt.Errorf("--group %s: no sharded run of that group in %s", ge.Group, redactAll(inputs))}
	case errors.As(err, &ge):
		return fmt.Errorf("--group %s cannot be merged: %w; nothing was written", ge.Group, ge.Err)
	case err != nil:
		return fmt.Errorf("%w; nothing was written", err)
	}
	st, err := openForWriting(ctx, env, out)
	if err != nil {
		return err
	}
	defer st.Close()
	return plan.Save(ctx, st, len(inputs))
}

// redactAll names stores for a message, without their passwords.
func redactAll(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = target.Redact(p)
	}
	return strings.Join(out, ", ")
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
