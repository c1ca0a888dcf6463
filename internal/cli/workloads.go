package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/metrics"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	"github.com/spf13/cobra"
)

// The init, run and check commands have a subcommand for each workload of the
// registry that can do it.

func newInitCmd(env *Env) *cobra.Command {
	cmd := parentCmd("init", "Create and load a workload's tables")
	for _, w := range workload.All() {
		if l, ok := w.(workload.Loader); ok {
			cmd.AddCommand(newInitKindCmd(env, w, l))
		}
	}
	return cmd
}

func newRunCmd(env *Env) *cobra.Command {
	cmd := parentCmd("run", "Run a workload against a target and store the results")
	for _, w := range workload.All() {
		cmd.AddCommand(newRunKindCmd(env, w))
	}
	return cmd
}

func newCheckCmd(env *Env) *cobra.Command {
	cmd := parentCmd("check", "Check a loaded database's consistency")
	for _, w := range workload.All() {
		if v, ok := w.(workload.Verifier); ok {
			cmd.AddCommand(newCheckKindCmd(env, w, v))
		}
	}
	return cmd
}

// parentCmd is a command whose subcommands are workloads; it refuses others,
// naming its own in the registry's order.
// A workload of the registry without this command (check sysbench) is named as
// such, whatever flags follow it, rather than refused for a flag.
func parentCmd(use, short string) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs, DisableFlagParsing: true}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		has := map[string]bool{}
		for _, sub := range c.Commands() {
			has[sub.Name()] = true
		}
		var names []string
		for _, name := range workload.Names() {
			if has[name] {
				names = append(names, name)
			}
		}
		var words []string
		help := false
		for _, a := range args {
			help = help || a == "-h" || a == "--help"
			if !strings.HasPrefix(a, "-") {
				words = append(words, a)
			}
		}
		if len(words) > 0 {
			if _, ok := workload.Find(words[0]); ok {
				return usageError{fmt.Errorf("%s has no %s: %s takes %s", words[0], c.Name(), c.CommandPath(), strings.Join(names, ", "))}
			}
		}
		if help {
			return c.Help()
		}
		return unknownSub(strings.Join(names, ", "))(c, words)
	}
	return cmd
}

// newInitKindCmd is `init <kind>`.
func newInitKindCmd(env *Env, w workload.Workload, l workload.Loader) *cobra.Command {
	var dsn, metricsAddr string
	var reload bool
	short, example := l.LoadHelp()
	cmd := &cobra.Command{Use: w.Name(), Short: short, Example: example, Args: cobra.NoArgs}
	fl := cmd.Flags()
	fl.StringVar(&dsn, "dsn", "", "target: libpq URI or key=value DSN (default: PG* environment variables)")
	fl.BoolVar(&reload, "reload", false, "load from the start even where an unfinished load could be resumed")
	metricsFlag(fl, &metricsAddr)
	ds := l.NewLoad()
	ds.Flags(fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := ds.Validate(); err != nil {
			return usageError{err}
		}
		ms, err := listenMetrics(metricsAddr)
		if err != nil {
			return err
		}
		defer ms.Close()
		// Connect once first so a bad target fails before anything is dropped.
		ctx, stop, t, conn, err := openTarget(cmd, env, dsn)
		if err != nil {
			return err
		}
		defer stop()
		resume, note, err := load.Resumable(ctx, conn, w.Name(), ds, reload)
		if err == nil && !resume {
			err = load.CheckRoom(ctx, conn, ds, t.OnThisMachine())
		}
		conn.Close(context.Background())
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("%w: before the load began", ErrInterrupted)
		}
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintf(env.Stderr, "the previous load into %s %s\n", t, note)
		}
		return loadDataset(ctx, env, t, w.Name(), ds, resume, ms)
	}
	return cmd
}

// loadDataset loads ds into t with a progress bar and prints its phases; an
// interrupted load says so, since its data is not usable.
func loadDataset(ctx context.Context, env *Env, t *target.Target, name string, ds load.Dataset, resume bool, ms *metrics.Server) error {
	if ds.Params() != "" {
		fmt.Fprintf(env.Stderr, "loading %s into %s\n", ds.Describe(), t)
	}
	done, err := fill(ctx, t, name, ds, resume, env.Stdout, env.TTY, ms)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: the load did not finish; run init again to resume it", ErrInterrupted)
		}
		return fmt.Errorf("load %s: %w", name, err)
	}
	fmt.Fprintln(env.Stdout, done)
	return nil
}

// fill loads ds into t with a progress bar on w (redrawn in place when tty),
// its rows served on ms as they are copied, and says what it did.
func fill(ctx context.Context, t *target.Target, name string, ds load.Dataset, resume bool, w io.Writer, tty bool, ms *metrics.Server) (string, error) {
	p := load.NewProgress(w, tty, name, 0, "rows")
	ms.Load(t.Address()+"/"+t.Config.Database, name, "rows", p) // never the DSN
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return t.Connect(ctx) }
	return ds.Load(ctx, connect, resume, p)
}

// newRunKindCmd is `run <kind>`: run the workload, then print the summary (as
// JSON with --json), also when the run ended early.
func newRunKindCmd(env *Env, w workload.Workload) *cobra.Command {
	short, example := w.RunHelp()
	cmd := &cobra.Command{Use: w.Name(), Short: short, Example: example, Args: cobra.NoArgs}
	printsJSON(cmd, "run")
	f := bindRun(w, cmd.Flags())
	sf := bindShard(cmd.Flags())
	cmd.Flags().String("servers-dir", "", "where the local servers a --fault acts on are registered (default: pgbakeoff's servers directory)")
	var metricsAddr string
	metricsFlag(cmd.Flags(), &metricsAddr)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		results, _ := cmd.Flags().GetString("results")
		ctx, stop := env.Interrupt(cmd.Context())
		defer stop()
		if r, ok := f.spec.Workload.(workload.StdinReader); ok {
			r.SetStdin(env.Stdin)
		}
		if err := f.settle(); err != nil {
			return usageError{err}
		}
		if err := sf.settle(&f.spec, env.Getenv); err != nil {
			return usageError{err}
		}
		if err := f.spec.Validate(); err != nil {
			return usageError{err}
		}
		t, err := target.Parse(f.dsn)
		if err != nil {
			return usageError{err}
		}
		ms, err := listenMetrics(metricsAddr)
		if err != nil {
			return err
		}
		defer ms.Close()
		// With --json, stdout carries the JSON object alone: the progress lines and
		// any other line written during the run go to stderr.
		runEnv := env
		if f.json {
			e := *env
			e.Stdout = env.Stderr
			runEnv = &e
		}
		var injector engine.Injector
		if slices.ContainsFunc(f.spec.Faults, func(ft engine.Fault) bool { return ft.Kind.Local() }) {
			if injector, err = faultsOn(ctx, cmd, t, env.Stderr); err != nil {
				return err
			}
		}
		sum, err := runSpecWith(ctx, runEnv, f.spec, t, results, f.progress, injector, ms)
		if sum == nil {
			return err
		}
		return f.report(env, sum, err)
	}
	return cmd
}

// report prints the run's summary, as text or JSON, and, when it ended well,
// the verdicts of its gates.
func (f *runFlags) report(env *Env, sum *engine.Summary, err error) error {
	verdicts := env.Stdout
	if !f.json {
		sum.WriteText(env.Stdout)
	} else {
		verdicts = env.Stderr // stdout has the JSON object alone
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(sum); jerr != nil && err == nil {
			err = jerr
		}
	}
	if err != nil {
		return err
	}
	return judgeGates(verdicts, f.gates, sum)
}

// runSpec runs spec on t, writing to the results store at results, with a
// progress line this often (0: none).
func runSpec(ctx context.Context, env *Env, spec engine.Spec, t *target.Target, results string, progress time.Duration) (*engine.Summary, error) {
	return runSpecWith(ctx, env, spec, t, results, progress, nil, nil)
}

// runSpecWith is runSpec with the injector of the target's faults and the live
// metrics endpoint (either may be nil).
func runSpecWith(ctx context.Context, env *Env, spec engine.Spec, t *target.Target, results string, progress time.Duration,
	in engine.Injector, ms *metrics.Server) (*engine.Summary, error) {
	spec.Target = t
	open := func(ctx context.Context) (*store.Store, error) { return openForWriting(ctx, env, results) }
	return engine.Run(ctx, spec, engine.Env{OpenStore: open, Progress: progress, Out: env.Stdout, Log: env.Stderr, Clock: env.Now, Injector: in, Metrics: ms})
}

// faultsOn is the injector of the local server the target names, from
// pgbakeoff's registry of servers; nil when it names none.
func faultsOn(ctx context.Context, cmd *cobra.Command, t *target.Target, log io.Writer) (engine.Injector, error) {
	reg, err := serverRegistry(cmd)
	if err != nil {
		return nil, err
	}
	return localInjector(ctx, reg, t, log)
}

// newCheckKindCmd is `check <kind>`.
func newCheckKindCmd(env *Env, w workload.Workload, v workload.Verifier) *cobra.Command {
	var dsn string
	short, example := v.VerifyHelp()
	cmd := &cobra.Command{Use: w.Name(), Short: short, Example: example, Args: cobra.NoArgs}
	cmd.Flags().StringVar(&dsn, "dsn", "", "target: libpq URI or key=value DSN (default: PG* environment variables)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, stop, t, conn, err := openTarget(cmd, env, dsn)
		if err != nil {
			return err
		}
		defer stop()
		defer conn.Close(context.Background())
		return v.Verify(ctx, t, conn, env.Stdout)
	}
	return cmd
}

// openTarget parses an init or check command's DSN and connects once, so that a
// bad target fails with one line before a load drops anything. The context ends
// on Ctrl-C; the caller calls stop and closes the connection.
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
