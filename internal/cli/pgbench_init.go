package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
)

// runPgbenchInit is `pgbakeoff pgbench -i`: pgbench's tables, loaded as `pgbench
// -i` loads them (the same rows, schema, fill factor, partitions and keys) by
// pgbakeoff's loader, which copies over parallel connections and resumes a load
// that was cut short. As pgbench, it writes to stderr alone.
func runPgbenchInit(ctx context.Context, env *Env, o *pgbenchOptions, dsn string) error {
	bad := func(err error) error { return exitError{err, pgbenchBadOptions} }
	ds, notes, err := pgbenchDataset(o)
	if err != nil {
		return bad(err)
	}
	t, err := target.Parse(dsn)
	if err != nil {
		return bad(err)
	}
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "pgbakeoff: %s\n", n)
	}
	ms, err := listenMetrics(o.metricsListen)
	if err != nil {
		return bad(err)
	}
	defer ms.Close()
	ctx, stop := env.Interrupt(ctx)
	defer stop()
	conn, err := t.Connect(ctx)
	if err != nil {
		return bad(err) // pgbench: no connection is exit code 1
	}
	resume, note, err := load.Resumable(ctx, conn, "tpcb", ds, false)
	if err == nil && !resume {
		err = load.CheckRoom(ctx, conn, ds, t.OnThisMachine())
	}
	conn.Close(context.Background())
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: before the load began", ErrInterrupted)
		}
		return bad(err)
	}
	if note != "" {
		fmt.Fprintf(env.Stderr, "the previous load into %s %s\n", t, note)
	}
	fmt.Fprintf(env.Stderr, "loading %s into %s\n", ds.Describe(), t)
	done, err := fill(ctx, t, "tpcb", ds, resume, env.Stderr, env.TTY && !o.quiet, ms)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: the load did not finish; run it again to resume it", ErrInterrupted)
		}
		return bad(fmt.Errorf("load: %w", err))
	}
	fmt.Fprintln(env.Stderr, done)
	return nil
}

// pgbenchDataset is what -i and its options load, and notes on what the loader
// does otherwise than pgbench would.
func pgbenchDataset(o *pgbenchOptions) (*tpcb.Dataset, []string, error) {
	ds := tpcb.Workload{}.NewLoad().(*tpcb.Dataset)
	opt := &ds.LoadOptions
	ints := []struct {
		value, name string
		min         int
		to          *int
	}{{o.scale, "-s/--scale", 1, &opt.Scale}, {o.fillfactor, "-F/--fillfactor", 10, &opt.FillFactor}, {o.partitions, "--partitions", 0, &opt.Partitions}}
	for _, n := range ints {
		if n.value == "" {
			continue
		}
		v, err := strconv.Atoi(n.value)
		if err != nil || v < n.min {
			return nil, nil, fmt.Errorf("invalid value %q for option %s: give a whole number of at least %d", n.value, n.name, n.min)
		}
		*n.to = v
	}
	if opt.FillFactor > 100 {
		return nil, nil, fmt.Errorf("invalid value %q for option -F/--fillfactor: give a fill factor from 10 to 100", o.fillfactor)
	}
	if o.partitionMethod != "" {
		if opt.Partitions == 0 {
			return nil, nil, errors.New("--partition-method requires greater than zero --partitions")
		}
		opt.PartitionMethod = strings.ToLower(o.partitionMethod)
	}
	opt.Unlogged = o.unlogged
	vacuum, err := pgbenchInitSteps(o, opt)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if !vacuum {
		notes = append(notes, "the loader vacuums and analyzes the tables it loads anyway: the data is the same, the statistics fresh")
	}
	if err := ds.Validate(); err != nil {
		return nil, nil, err
	}
	return ds, notes, nil
}

// pgbenchInitSteps reads -I (with -n and --foreign-keys) into the load's options
// and tells whether the steps vacuum. pgbakeoff's loader always drops, creates,
// generates and adds primary keys; the steps may add foreign keys, generate on the
// server (the loader generates the same rows itself) and leave the vacuum out.
func pgbenchInitSteps(o *pgbenchOptions, opt *tpcb.LoadOptions) (vacuum bool, err error) {
	steps := o.initSteps
	if steps == "" {
		steps = "dtgvp"
	}
	for _, c := range steps {
		if !strings.ContainsRune("dtgGvpf ", c) {
			return false, fmt.Errorf("unrecognized initialization step %q: allowed step characters are \"dtgGvpf\"", string(c))
		}
	}
	generate := strings.ContainsAny(steps, "gG")
	for _, need := range []bool{strings.Contains(steps, "d"), strings.Contains(steps, "t"), generate, strings.Contains(steps, "p")} {
		if !need {
			return false, fmt.Errorf("-I %s: pgbakeoff's loader always drops and creates the tables, generates the data and adds the primary keys (steps dtgp, with v and f as asked); for other steps run pgbench -i -I %s", steps, steps)
		}
	}
	opt.ForeignKeys = o.foreignKeys || strings.Contains(steps, "f")
	return strings.Contains(steps, "v") && !o.noVacuum, nil
}
