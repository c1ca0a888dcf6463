package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Gathering: the runs of results stores kept on several machines copied into
// one, and each sharded run whose shards are all there merged into its whole run
// (MergeShards). Everything is read and every merge tried before anything is
// written, so a store of another run or a missing shard changes nothing.

// StoreRuns are the runs read from one results store.
type StoreRuns struct {
	Path string
	Runs []*store.RunDetail
}

// ErrNoSuchGroup is a shard group asked for by name that none of the stores holds.
var ErrNoSuchGroup = errors.New("no sharded run of that group")

// GroupError is a shard group asked for by name that cannot be merged, or
// that no store holds (Err is ErrNoSuchGroup).
type GroupError struct {
	Group string
	Err   error
}

func (e *GroupError) Error() string { return fmt.Sprintf("shard group %s: %v", e.Group, e.Err) }
func (e *GroupError) Unwrap() error { return e.Err }

// Gathering is what a merge will write: the runs read, the shard groups met (in
// the order first met) and those ready to merge.
type Gathering struct {
	runs    []*store.RunDetail
	groups  map[string][]ShardRun
	order   []string
	ready   []string
	inPlace bool
	out     io.Writer
}

// PlanGather reads the shard groups of the runs of stores and decides which can
// be merged now: of the groups named in only, or all when it is empty. It says
// on out what it made of each group that cannot. It fails, with nothing to
// write, when a group named cannot be merged (a GroupError), or when none can
// and there is no other run to gather. inPlace is a merge inside the one store
// read.
// readSummary decodes a stored summary with its workload's figures.
func PlanGather(stores []StoreRuns, only []string, inPlace bool, now time.Time, readSummary func([]byte) (*Summary, error), out io.Writer) (*Gathering, error) {
	g := &Gathering{groups: map[string][]ShardRun{}, inPlace: inPlace, out: out}
	for _, s := range stores {
		if err := g.add(s, readSummary); err != nil {
			return nil, err
		}
	}
	for _, name := range only {
		if g.groups[name] == nil {
			return nil, &GroupError{name, ErrNoSuchGroup}
		}
	}
	refused := g.mergeable(only, now)
	// Runs of no shard group are gathered as they are: with them there is
	// something to write, and only a group asked for by name fails the merge.
	plain := !inPlace && slices.ContainsFunc(g.runs, func(d *store.RunDetail) bool { _, _, ok := ShardsOf(&d.Run); return !ok })
	if err := refusedError(refused, len(g.ready), only, plain); err != nil {
		return nil, err
	}
	return g, nil
}

// add takes in the runs of one store, and its shard runs by group.
func (g *Gathering) add(s StoreRuns, readSummary func([]byte) (*Summary, error)) error {
	for _, d := range s.Runs {
		g.runs = append(g.runs, d)
		group, _, ok := ShardsOf(&d.Run)
		if !ok {
			continue
		}
		sr := ShardRun{Detail: d}
		if len(d.Summary) > 0 {
			var err error
			if sr.Summary, err = readSummary(d.Summary); err != nil {
				return fmt.Errorf("%s: run %d summary: %w", target.Redact(s.Path), d.ID, err)
			}
		}
		if g.groups[group] == nil {
			g.order = append(g.order, group)
		}
		g.groups[group] = append(g.groups[group], sr)
	}
	return nil
}

// mergeable keeps the groups whose shards can be merged now, of those asked for
// (all when only is empty), and returns those asked for by name, or met, that
// cannot, with the reason, which it also prints.
func (g *Gathering) mergeable(only []string, now time.Time) (refused map[string]error) {
	mergedBefore := map[string]bool{}
	for _, d := range g.runs {
		if d.Labels["shards"] != "" {
			mergedBefore[d.Labels["shard_group"]] = true
		}
	}
	refused = map[string]error{}
	for _, name := range g.order {
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		switch {
		case mergedBefore[name]:
			fmt.Fprintf(g.out, "%s: merged before\n", name)
		case StillRunning(g.groups[name], now):
			fmt.Fprintf(g.out, "%s: a shard is still running; merge once every shard has ended\n", name)
			if slices.Contains(only, name) {
				refused[name] = errors.New("a shard is still running; merge once every shard has ended")
			}
		default:
			if _, _, err := MergeShards(g.groups[name]); err != nil {
				refused[name] = err
				fmt.Fprintf(g.out, "%s: not merged: %v\n", name, err)
				continue
			}
			g.ready = append(g.ready, name)
		}
	}
	return refused
}

// refusedError fails a merge when a group asked for by name could not be merged,
// or when none could be while some could not and no other run is to be
// gathered (plain).
func refusedError(refused map[string]error, merged int, only []string, plain bool) error {
	for _, name := range only {
		if err := refused[name]; err != nil {
			return &GroupError{name, err}
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

// Save writes into st the runs it does not hold yet (unless the merge is in
// place) and the whole run of each group ready, saying what it made of each.
func (g *Gathering) Save(ctx context.Context, st *store.Store, stores int) error {
	have, err := st.Runs(ctx, store.Filter{})
	if err != nil {
		return err
	}
	if !g.inPlace {
		if err := g.copyRuns(ctx, st, have, stores); err != nil {
			return err
		}
	}
	if len(g.order) == 0 && g.inPlace {
		fmt.Fprintf(g.out, "%s holds no sharded run to merge\n", st.Path())
	}
	return g.saveGroups(ctx, st, have)
}

// copyRuns saves into st the runs it does not hold yet; those it holds take the
// ids they have there, which the merged runs record.
func (g *Gathering) copyRuns(ctx context.Context, st *store.Store, have []store.Run, stores int) error {
	copied, skipped := 0, 0
	for _, d := range g.runs {
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
	fmt.Fprintf(g.out, "%d runs from %d stores copied into %s", copied, stores, st.Path())
	if skipped > 0 {
		fmt.Fprintf(g.out, " (%d it held already)", skipped)
	}
	fmt.Fprintln(g.out)
	return nil
}

// saveGroups saves the whole run of each group ready to merge that st does not
// hold yet, and says what it made of each.
func (g *Gathering) saveGroups(ctx context.Context, st *store.Store, have []store.Run) error {
	for _, group := range g.ready {
		if slices.ContainsFunc(have, func(r store.Run) bool { return r.Labels["shard_group"] == group && r.Labels["shards"] != "" }) {
			fmt.Fprintf(g.out, "%s: merged before\n", group)
			continue
		}
		d, sum, err := MergeShards(g.groups[group])
		if err != nil {
			return err
		}
		id, err := saveMerged(ctx, st, d, sum)
		if err != nil {
			return fmt.Errorf("%s: %w", st.Path(), err)
		}
		fmt.Fprintf(g.out, "run %d: %s, merged from %s shards: %s", id, group, d.Labels["shards"], sum.Headline())
		for _, f := range sum.Flags {
			if f.Invalid {
				fmt.Fprintf(g.out, "  INVALID: %s", f.Reason)
			}
		}
		fmt.Fprintln(g.out)
	}
	return nil
}

// sameRun tells a run copied before: the same process began it at the same instant.
func sameRun(a, b *store.Run) bool {
	return a.Started.Equal(b.Started) && a.Process == b.Process && a.Workload == b.Workload && a.Labels["shards"] == b.Labels["shards"]
}

// saveMerged writes the whole run of a sharded run, its summary with its own id.
func saveMerged(ctx context.Context, st *store.Store, d *store.RunDetail, sum *Summary) (int64, error) {
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
