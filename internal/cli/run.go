package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newRunCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a workload against a target and store the results",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSub(kindNames()),
	}
	for _, k := range kinds {
		cmd.AddCommand(newRunKindCmd(env, k))
	}
	return cmd
}

// runFlags are the options of `run tpcb`.
type runFlags struct {
	dsn     string
	scripts []string
	scale   int
	clients int
	threads int
	// threadPerClient: each client waits for its answers on its own thread
	// (driver.Config.ThreadPerClient) instead of sharing the threads. perClient,
	// when set, is the workload's default for it, read once the flags are parsed.
	threadPerClient bool
	perClient       func() bool
	protocol        string
	warmup          time.Duration
	duration        time.Duration
	transactions    int
	progress        time.Duration
	maxTries        int
	seed            uint64
	json            bool
	labels          []string
	dist            string // key distribution (keydist.Parse)
	// Faults: how long the server may stay away, how long a transaction may take,
	// how long a connect may take, and whether to resolve the host once.
	outageTimeout  time.Duration
	txTimeout      time.Duration
	connectTimeout time.Duration
	resolveOnce    bool
	anonymize      bool // leave the client machine's hostname out of what is stored
	// Set by studies: the server's process and data directory when it runs on this
	// machine, and a node_exporter to read the server machine's CPU and disks from.
	local        *sampler.Local
	nodeExporter string
	tgt          *target.Target // instead of dsn, for a password from elsewhere
}

var tpcbKind = kind{
	name:      "tpcb",
	marked:    "pgbench_branches",
	initShort: "Load pgbench's tables (what `pgbench -i` does), with parallel COPY",
	initExample: `  pgbakeoff init tpcb --scale 100 --dsn "$DSN"
  pgbakeoff init tpcb --scale 1000 --partitions 8 --dsn "postgres://bench@db.example:5432/bench"`,
	runShort: "Run pgbench's builtin TPC-B-like scripts (tpcb-like, simple-update, select-only)",
	runExample: `  pgbakeoff run tpcb --script select-only --clients 8 --duration 60s --progress 5s --dsn "$DSN"
  pgbakeoff run tpcb --script tpcb-like@9 --script select-only@1 --clients 16 --warmup 30s --duration 5m`,
	loadFlags: tpcbLoadFlags,
	runFlags: func(env *Env, fl *pflag.FlagSet, f *runFlags) func() engine.Workload {
		fl.StringArrayVarP(&f.scripts, "script", "b", nil, "builtin script[@weight]: tpcb-like, simple-update, select-only (repeatable; default tpcb-like)")
		fl.IntVarP(&f.scale, "scale", "s", 0, "expected scale; checked against the data (default: detected)")
		fl.StringVarP(&f.protocol, "protocol", "M", engine.NewSpec().Protocol.String(), "query protocol: simple, extended or prepared")
		fl.StringVar(&f.dist, "dist", "uniform", "distribution of the account: uniform, exponential:p, pgbench-gaussian:p, zipfian[:exp], pareto[:h], special, gaussian")
		addRunFlags(fl, f, 1, nil)
		return func() engine.Workload { return tpcbWorkload(*f) }
	},
}

// addRunFlags adds the options every workload's run has: the target, clients, the
// window, retries, output and labels. maxTries follows the tool the workload comes
// from: sysbench retries deadlocks, pgbench does not. perClient, if not nil, turns a
// thread per client on by default when it says so (see fitThreads); without it the
// clients share --jobs threads, as pgbench's do.
func addRunFlags(fl *pflag.FlagSet, f *runFlags, maxTries int, perClient func() bool) {
	d := engine.NewSpec() // the defaults, shared with studies and the demo
	fl.StringVar(&f.dsn, "dsn", "", "target: libpq URI or key=value DSN (default: PG* environment variables)")
	fl.IntVarP(&f.clients, "clients", "c", d.Clients, "concurrent clients, one connection each")
	fl.IntVarP(&f.threads, "jobs", "j", d.Jobs, "client threads (GOMAXPROCS) the clients share, as pgbench -j; one keeps the client's CPU per transaction lowest")
	f.perClient = perClient
	def := ""
	if perClient != nil {
		def = "; default: on for scripts that only read, off for scripts that write"
	}
	usage := fmt.Sprintf("give each client its own thread, waiting in the kernel for its answers, as sysbench does: no CPU left idle between answers, more CPU per statement (up to %d clients%s)", driver.MaxThreadClients, def)
	fl.BoolVar(&f.threadPerClient, "thread-per-client", false, usage)
	durationVarP(fl, &f.warmup, "warmup", "", d.Warmup, "time to run before measuring (not counted)")
	durationVarP(fl, &f.duration, "duration", "T", d.Duration, "measurement window: seconds (60) or a duration (90s, 5m)")
	fl.IntVarP(&f.transactions, "transactions", "t", 0, "transactions per client, instead of --duration")
	durationVarP(fl, &f.progress, "progress", "P", 0, "print a progress line this often (e.g. 5s)")
	fl.IntVar(&f.maxTries, "max-tries", maxTries, "tries per transaction on serialization failure or deadlock")
	fl.Uint64Var(&f.seed, "seed", 0, "random seed (default: from the clock)")
	fl.BoolVar(&f.json, "json", false, "print the summary as one JSON object")
	fl.StringArrayVar(&f.labels, "label", nil, "label key=value stored with the run (repeatable)")
	durationVarP(fl, &f.outageTimeout, "outage-timeout", "", d.OutageTimeout, "end the run, marked incomplete, when no client has had a connection this long (0: never)")
	durationVarP(fl, &f.txTimeout, "tx-timeout", "", d.TxTimeout, "abandon a transaction (and its connection) after this long: a stalled network (0: never)")
	durationVarP(fl, &f.connectTimeout, "connect-timeout", "", d.ConnectTimeout, "give up one connection attempt after this long")
	fl.BoolVar(&f.resolveOnce, "resolve-once", false, "resolve the host once at the start and connect every client to that address")
	fl.BoolVar(&f.anonymize, "anonymize", false, "leave this machine's hostname out of the machine recorded with the run")
}

// fitThreads settles --thread-per-client when it was not given: the workload's
// default (perClient) for what it runs, and off for more clients than a thread each
// allows. Asked for explicitly with too many clients, checkRunFlags refuses them.
//
// A thread per client pays for transactions that only read. Where they write, each
// commit waits for its WAL flush, and sharing one thread was faster (measured in
// docs/performance.md).
func (f *runFlags) fitThreads(fl *pflag.FlagSet) {
	if fl.Changed("thread-per-client") {
		return
	}
	f.threadPerClient = f.perClient != nil && f.perClient() && f.clients <= driver.MaxThreadClients
}

// runCommand is the body of every `run` subcommand: run the workload, then print the
// summary (as JSON with --json), also when the run ended early.
func runCommand(env *Env, f *runFlags, wl func() engine.Workload) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		results, _ := cmd.Flags().GetString("results")
		f.fitThreads(cmd.Flags())
		ctx, stop := env.Interrupt(cmd.Context())
		defer stop()
		// With --json, stdout carries the JSON object alone: the progress lines and
		// any other line written during the run go to stderr.
		runEnv := env
		if f.json {
			e := *env
			e.Stdout = env.Stderr
			runEnv = &e
		}
		sum, err := runWorkload(ctx, runEnv, *f, results, wl())
		if sum == nil {
			return err
		}
		if !f.json {
			sum.WriteText(env.Stdout)
			return err
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(sum); jerr != nil && err == nil {
			err = jerr
		}
		return err
	}
}

func tpcbWorkload(f runFlags) engine.Workload {
	check := func() error {
		spec, err := keydist.Parse(cmp.Or(f.dist, "uniform"))
		if err != nil {
			return fmt.Errorf("--dist: %w", err)
		}
		scripts, err := tpcb.ParseScripts(f.scripts, max(f.scale, 1))
		if err != nil {
			return err
		}
		if err := tpcb.SetDist(scripts, spec); err != nil {
			return fmt.Errorf("--dist: %w", err)
		}
		return nil
	}
	return engine.Workload{Name: "tpcb", Check: check, Setup: func(ctx context.Context, t *target.Target, ctl *pgconn.PgConn) (*engine.Setup, error) {
		spec, err := keydist.Parse(cmp.Or(f.dist, "uniform"))
		if err != nil {
			return nil, usageError{fmt.Errorf("--dist: %w", err)}
		}
		scale, err := tpcb.DetectScale(ctx, ctl)
		if errors.Is(err, tpcb.ErrNotLoaded) {
			return nil, fmt.Errorf("%s has no pgbench tables: run `pgbakeoff init tpcb --scale N` (or pgbench -i) first", t)
		}
		if err != nil {
			return nil, err
		}
		if f.scale != 0 && f.scale != scale {
			return nil, fmt.Errorf("--scale %d does not match the data: the database was loaded with scale %d", f.scale, scale)
		}
		scripts, err := tpcb.ParseScripts(f.scripts, scale)
		if err != nil {
			return nil, usageError{err}
		}
		if err := tpcb.SetDist(scripts, spec); err != nil {
			return nil, usageError{fmt.Errorf("--dist: %w", err)}
		}
		size := fmt.Sprintf("scale %d", scale)
		if spec.Kind != keydist.Uniform {
			size += ", " + spec.String() + " accounts"
		}
		return &engine.Setup{Scripts: scripts, Scale: scale, Size: size, Params: map[string]any{"scale": scale, "dist": spec.String()}}, nil
	}}
}

// checkRunFlags checks the options before anything connects: the run's, and the
// workload's that can be judged without the data.
func checkRunFlags(f runFlags) error {
	spec, err := f.spec()
	if err != nil {
		return err
	}
	if f.scale < 0 {
		return fmt.Errorf("--scale must be positive, got %d", f.scale)
	}
	// The distribution is checked again against the data; its syntax is known now.
	if f.dist != "" && f.dist != "nurand" {
		if _, err := keydist.Parse(f.dist); err != nil {
			return fmt.Errorf("--dist: %w", err)
		}
	}
	return spec.Validate()
}

// newRunFlags are the options at their defaults, for runs not made from a
// command line.
func newRunFlags() runFlags {
	d := engine.NewSpec()
	return runFlags{clients: d.Clients, threads: d.Jobs, protocol: d.Protocol.String(), warmup: d.Warmup, duration: d.Duration,
		maxTries: d.MaxTries, outageTimeout: d.OutageTimeout, txTimeout: d.TxTimeout, connectTimeout: d.ConnectTimeout}
}

// spec is the run the options describe, without its target, workload and store.
func (f runFlags) spec() (engine.Spec, error) {
	proto, err := driver.ParseProtocol(f.protocol)
	if err != nil {
		return engine.Spec{}, err
	}
	labels, err := parseLabels(f.labels)
	if err != nil {
		return engine.Spec{}, err
	}
	return engine.Spec{Clients: f.clients, Jobs: f.threads, ThreadPerClient: f.threadPerClient, Protocol: proto,
		Warmup: f.warmup, Duration: f.duration, Transactions: f.transactions, MaxTries: f.maxTries, Seed: f.seed, Labels: labels,
		OutageTimeout: f.outageTimeout, TxTimeout: f.txTimeout, ConnectTimeout: f.connectTimeout, ResolveOnce: f.resolveOnce,
		Anonymize: f.anonymize, Local: f.local, NodeExporter: f.nodeExporter, Progress: f.progress}, nil
}

// runWorkload runs the workload as the options say, writing to the results
// store at results.
func runWorkload(ctx context.Context, env *Env, f runFlags, results string, wl engine.Workload) (*engine.Summary, error) {
	spec, err := f.spec()
	if err != nil {
		return nil, usageError{err}
	}
	if err := checkRunFlags(f); err != nil {
		return nil, usageError{err}
	}
	spec.Target = f.tgt
	if spec.Target == nil {
		if spec.Target, err = target.Parse(f.dsn); err != nil {
			return nil, usageError{err}
		}
	}
	spec.Workload = wl
	spec.OpenStore = func(ctx context.Context) (*store.Store, error) { return openForWriting(ctx, env, results) }
	spec.Out, spec.Log, spec.Clock = env.Stdout, env.Stderr, env.Now
	return engine.Run(ctx, spec)
}

func parseLabels(in []string) (map[string]string, error) {
	out := map[string]string{}
	for _, l := range in {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--label %q: use key=value", l)
		}
		out[k] = v
	}
	return out, nil
}
