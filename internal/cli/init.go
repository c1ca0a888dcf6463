package cli

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newInitCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create and load a workload's tables",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSub(kindNames()),
	}
	for _, k := range kinds {
		cmd.AddCommand(newInitKindCmd(env, k))
	}
	return cmd
}

// tpcbLoadFlags are init tpcb's options.
func tpcbLoadFlags(fl *pflag.FlagSet) *dataset {
	opt := &tpcb.LoadOptions{}
	fl.IntVarP(&opt.Scale, "scale", "s", 1, "scale factor: 100,000 accounts each")
	fl.IntVar(&opt.FillFactor, "fillfactor", 100, "fill factor of the accounts, tellers and branches tables")
	fl.IntVar(&opt.Partitions, "partitions", 0, "partition pgbench_accounts into this many partitions")
	fl.StringVar(&opt.PartitionMethod, "partition-method", "range", "range or hash")
	fl.BoolVar(&opt.Unlogged, "unlogged", false, "create unlogged tables")
	fl.BoolVar(&opt.ForeignKeys, "foreign-keys", false, "add foreign keys between the tables")
	fl.IntVarP(&opt.Workers, "jobs", "j", 2, "parallel loading connections")
	return &dataset{
		validate: func() error {
			if err := checkJobs(opt.Workers); err != nil {
				return err
			}
			return opt.Validate()
		},
		describe: func() string { return fmt.Sprintf("TPC-B scale %d", opt.Scale) },
		// pgbench's scale 1 takes about 16 MB with its keys; a fill factor leaves room.
		bytes:  func() int64 { return int64(opt.Scale) * (16 << 20) * 100 / int64(max(10, opt.FillFactor)) },
		params: func() string { return opt.Params() },
		load: func(ctx context.Context, env *Env, t *target.Target, resume bool) error {
			o := *opt
			o.Resume = resume
			return initTPCB(ctx, env, t, o)
		},
	}
}

func initTPCB(ctx context.Context, env *Env, t *target.Target, opt tpcb.LoadOptions) error {
	// Connect once first so a bad target fails before anything is dropped.
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	conn.Close(context.Background())
	fmt.Fprintf(env.Stderr, "loading TPC-B scale %d into %s\n", opt.Scale, t)
	return loadDataset(ctx, env, t, "tpcb", func(connect load.Connector, p *load.Progress) (load.Phases, error) {
		return tpcb.Load(ctx, connect, opt, p)
	})
}

// openTarget parses an init or check command's DSN and connects once, so that a bad target
// fails with one line before a load drops anything. The context ends on Ctrl-C; the
// caller calls stop and closes the connection.
func openTarget(cmd *cobra.Command, env *Env, dsn string) (ctx context.Context, stop func(), t *target.Target, conn *pgconn.PgConn, err error) {
	t, err = target.Parse(dsn)
	if err != nil {
		return nil, nil, nil, nil, usageError{err}
	}
	ctx, stop = env.Interrupt(cmd.Context())
	if conn, err = t.Connect(ctx); err != nil {
		stop()
		return nil, nil, nil, nil, err
	}
	return ctx, stop, t, conn, nil
}

// loadDataset runs a workload's load with a progress bar and prints its phases; an
// interrupted load says so, since its data is not usable.
func loadDataset(ctx context.Context, env *Env, t *target.Target, name string, run func(load.Connector, *load.Progress) (load.Phases, error)) error {
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return t.Connect(ctx) }
	phases, err := run(connect, load.NewProgress(env.Stdout, env.TTY, name, 0, "rows"))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: the load did not finish; run init again to resume it", ErrInterrupted)
		}
		return fmt.Errorf("load %s: %w", name, err)
	}
	fmt.Fprintln(env.Stdout, phases.String())
	return nil
}
