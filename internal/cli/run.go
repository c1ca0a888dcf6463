package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
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
	runFlags: func(env *Env, fl *pflag.FlagSet, f *runFlags) func() workload {
		fl.StringArrayVarP(&f.scripts, "script", "b", nil, "builtin script[@weight]: tpcb-like, simple-update, select-only (repeatable; default tpcb-like)")
		fl.IntVarP(&f.scale, "scale", "s", 0, "expected scale; checked against the data (default: detected)")
		fl.StringVarP(&f.protocol, "protocol", "M", "prepared", "query protocol: simple, extended or prepared")
		fl.StringVar(&f.dist, "dist", "uniform", "distribution of the account: uniform, exponential:p, pgbench-gaussian:p, zipfian[:exp], pareto[:h], special, gaussian")
		addRunFlags(fl, f, 1, nil)
		return func() workload { return tpcbWorkload(*f) }
	},
}

// addRunFlags adds the options every workload's run has: the target, clients, the
// window, retries, output and labels. maxTries follows the tool the workload comes
// from: sysbench retries deadlocks, pgbench does not. perClient, if not nil, turns a
// thread per client on by default when it says so (see fitThreads); without it the
// clients share --jobs threads, as pgbench's do.
func addRunFlags(fl *pflag.FlagSet, f *runFlags, maxTries int, perClient func() bool) {
	fl.StringVar(&f.dsn, "dsn", "", "target: libpq URI or key=value DSN (default: PG* environment variables)")
	fl.IntVarP(&f.clients, "clients", "c", 1, "concurrent clients, one connection each")
	fl.IntVarP(&f.threads, "jobs", "j", 1, "client threads (GOMAXPROCS) the clients share, as pgbench -j; one keeps the client's CPU per transaction lowest")
	f.perClient = perClient
	def := ""
	if perClient != nil {
		def = "; default: on for scripts that only read, off for scripts that write"
	}
	usage := fmt.Sprintf("give each client its own thread, waiting in the kernel for its answers, as sysbench does: no CPU left idle between answers, more CPU per statement (up to %d clients%s)", driver.MaxThreadClients, def)
	fl.BoolVar(&f.threadPerClient, "thread-per-client", false, usage)
	durationVarP(fl, &f.warmup, "warmup", "", 0, "time to run before measuring (not counted)")
	durationVarP(fl, &f.duration, "duration", "T", 60*time.Second, "measurement window: seconds (60) or a duration (90s, 5m)")
	fl.IntVarP(&f.transactions, "transactions", "t", 0, "transactions per client, instead of --duration")
	durationVarP(fl, &f.progress, "progress", "P", 0, "print a progress line this often (e.g. 5s)")
	fl.IntVar(&f.maxTries, "max-tries", maxTries, "tries per transaction on serialization failure or deadlock")
	fl.Uint64Var(&f.seed, "seed", 0, "random seed (default: from the clock)")
	fl.BoolVar(&f.json, "json", false, "print the summary as one JSON object")
	fl.StringArrayVar(&f.labels, "label", nil, "label key=value stored with the run (repeatable)")
	durationVarP(fl, &f.outageTimeout, "outage-timeout", "", 2*time.Minute, "end the run, marked incomplete, when no client has had a connection this long (0: never)")
	durationVarP(fl, &f.txTimeout, "tx-timeout", "", time.Minute, "abandon a transaction (and its connection) after this long: a stalled network (0: never)")
	durationVarP(fl, &f.connectTimeout, "connect-timeout", "", 10*time.Second, "give up one connection attempt after this long")
	fl.BoolVar(&f.resolveOnce, "resolve-once", false, "resolve the host once at the start and connect every client to that address")
	fl.BoolVar(&f.anonymize, "anonymize", false, "leave this machine's hostname out of the machine recorded with the run")
}

// fitThreads settles --thread-per-client when it was not given: the workload's
// default (perClient) for what it runs, and off for more clients than a thread each
// allows. Asked for explicitly with too many clients, checkRunFlags refuses them.
//
// A thread per client pays for transactions that only read. Where they write, each
// commit waits for its WAL flush, and sharing one thread was faster: sysbench's
// oltp_read_write, oltp_write_only and oltp_update_index at 8 clients on 2 cores
// shared with the server, 3% in the median of each run's ratio (21, 8 and 6 pairs of
// 10-15 s runs), while oltp_read_only lost 6% (8 pairs). See the README.
func (f *runFlags) fitThreads(fl *pflag.FlagSet) {
	if fl.Changed("thread-per-client") {
		return
	}
	f.threadPerClient = f.perClient != nil && f.perClient() && f.clients <= driver.MaxThreadClients
}

// runCommand is the body of every `run` subcommand: run the workload, then print the
// summary (as JSON with --json), also when the run ended early.
func runCommand(env *Env, f *runFlags, wl func() workload) func(*cobra.Command, []string) error {
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
			printSummary(env.Stdout, sum)
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

// Summary is a run's result as `run --json` and `show --json` print it.
type Summary struct {
	RunID        int64             `json:"run_id"`
	Workload     string            `json:"workload"`
	Script       string            `json:"script"`
	Target       string            `json:"target"`
	Address      string            `json:"address"`
	Protocol     string            `json:"protocol"`
	Scale        int               `json:"scale"`
	Clients      int               `json:"clients"`
	Status       string            `json:"status"`
	Started      time.Time         `json:"started"`
	WarmupS      float64           `json:"warmup_s"`
	DurationS    float64           `json:"duration_s"`
	Transactions int64             `json:"transactions"`
	TPS          float64           `json:"tps"`
	LatencyMs    histogram.Summary `json:"latency_ms"`
	Failed       int64             `json:"failed"`
	Retried      int64             `json:"retried"`
	Retries      int64             `json:"retries"`
	CommitsTotal int64             `json:"commits_total"`
	Server       serverSummary     `json:"server"`
	ClientCPUS   float64           `json:"client_cpu_s"`
	ClientCPU    clientCPU         `json:"client_cpu"`
	Scripts      []scriptSummary   `json:"scripts"`
	Errors       []errorSummary    `json:"errors,omitempty"`
	Reconnects   int               `json:"reconnects"`
	// OutageS is the wall time during which clients had lost their connection,
	// summed over clients; Outages says when each was lost, why and for how long.
	OutageS       float64             `json:"outage_s"`
	Outages       []outageSummary     `json:"outages,omitempty"`
	ConnectErrors []connectErrSummary `json:"connect_errors,omitempty"`
	// Address is where the clients connected (the address resolved once, with
	// --resolve-once).
	ClientAddress string            `json:"client_address,omitempty"`
	Warnings      []string          `json:"warnings,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	// Flags say why the run is not to be trusted (invalid) or deserves a note.
	Flags   []runFlag `json:"flags,omitempty"`
	Dataset fit       `json:"dataset"`
	// TPCC holds TPC-C's figures (nopm, tpm, ...), at the top level of the JSON.
	*TPCCFigures
	// Sysbench holds sysbench's query counts, at the top level of the JSON.
	*SysbenchFigures
	// ClientMachine is the machine that ran the benchmark's clients.
	ClientMachine *machine.Machine `json:"client_machine,omitempty"`
}

type outageSummary struct {
	Client    int       `json:"client"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Seconds   float64   `json:"seconds"`
	Cause     string    `json:"cause"`
	Error     string    `json:"error,omitempty"`
	Attempts  int       `json:"attempts"`
	FailedTx  int       `json:"failed_tx"`
	Recovered bool      `json:"recovered"`
}

type connectErrSummary struct {
	Cause   string `json:"cause"`
	Count   int64  `json:"count"`
	Example string `json:"example,omitempty"`
}

type serverSummary struct {
	Version string `json:"version"`
	// TLS is the protocol version and cipher of the control connection, "" without TLS.
	TLS string `json:"tls,omitempty"`
	// Commits is pg_stat_database.xact_commit's growth from before the first client
	// connected to after the last one disconnected, without pgbakeoff's own
	// monitoring transactions: the span of commits_total.
	Commits        int64   `json:"commits"`
	CommitsDiffPct float64 `json:"commits_diff_pct"`
	// CommitsUnread says why Commits could not be read; Commits is then 0 and
	// means nothing.
	CommitsUnread string `json:"commits_unread,omitempty"`
	// CommitsUnsettled: the counters still moved after the benchmark's sessions
	// had ended, so something else was committing in the database (or, before
	// PostgreSQL 15, the statistics collector fell behind).
	CommitsUnsettled bool  `json:"commits_unsettled,omitempty"`
	WindowCommits    int64 `json:"window_commits"`
	WindowRollbacks  int64 `json:"window_rollbacks"`
	BlksRead         int64 `json:"window_blks_read"`
	BlksHit          int64 `json:"window_blks_hit"`
}

type clientCPU struct {
	UserS          float64 `json:"user_s"`
	SysS           float64 `json:"sys_s"`
	PerTxUs        float64 `json:"per_tx_us"`
	Cores          float64 `json:"cores"` // average cores busy
	Saturated      bool    `json:"saturated"`
	MachineBusyPct float64 `json:"machine_busy_pct,omitempty"`
	// How the clients were run: a thread each, or sharing Threads threads.
	ThreadPerClient bool `json:"thread_per_client"`
	Threads         int  `json:"threads"`
	// ReadAtOnce is, for a thread per client on a Unix-domain socket, the share of
	// answers read without polling first (driver.Result.ReadAtOnce).
	ReadAtOnce *float64 `json:"read_at_once,omitempty"`
}

type scriptSummary struct {
	Name         string            `json:"name"`
	Weight       int               `json:"weight"`
	Transactions int64             `json:"transactions"`
	TPS          float64           `json:"tps"`
	Failed       int64             `json:"failed"`
	Retried      int64             `json:"retried"`
	RolledBack   int64             `json:"rolled_back"`
	LatencyMs    histogram.Summary `json:"latency_ms"`
}

type errorSummary struct {
	SQLState string `json:"sqlstate"`
	Script   string `json:"script"`
	Retried  bool   `json:"retried"`
	Count    int64  `json:"count"`
	Example  string `json:"example,omitempty"`
}

// workload is what a `run` subcommand adds to the common run: its scripts, built
// after the data was inspected, and its own figures.
type workload struct {
	name string
	// check validates every option that can be judged without the data, so that a
	// mistake is found before anything connects, loads or runs.
	check func() error
	setup func(ctx context.Context, t *target.Target, ctl *pgconn.PgConn) (*workloadSetup, error)
}

type workloadSetup struct {
	scripts []*driver.Script
	scale   int            // TPC-B scale or TPC-C warehouses
	size    string         // the scale for people: "scale 100", "10 warehouses"
	params  map[string]any // stored with the run
	deck    bool           // deal scripts from a deck (driver.Config.Deck)
	// window, when set, samples workload figures at the window's edges on the control
	// connection; finish then adds them to the summary.
	// own is how many transactions pgbakeoff's sampler has committed so far, so the
	// workload's counts can leave them out.
	window func(ctx context.Context, ctl *pgconn.PgConn, open bool, own int64) error
	finish func(sum *Summary, res *driver.Result)
}

func tpcbWorkload(f runFlags) workload {
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
	return workload{name: "tpcb", check: check, setup: func(ctx context.Context, t *target.Target, ctl *pgconn.PgConn) (*workloadSetup, error) {
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
		return &workloadSetup{scripts: scripts, scale: scale, size: size, params: map[string]any{"scale": scale, "dist": spec.String()}}, nil
	}}
}

func runWorkload(ctx context.Context, env *Env, f runFlags, results string, wl workload) (*Summary, error) {
	proto, err := driver.ParseProtocol(f.protocol)
	if err != nil {
		return nil, usageError{err}
	}
	if err := checkRunFlags(f); err != nil {
		return nil, usageError{err}
	}
	if wl.check != nil {
		if err := wl.check(); err != nil {
			return nil, usageError{err}
		}
	}
	labels, err := parseLabels(f.labels)
	if err != nil {
		return nil, usageError{err}
	}
	t := f.tgt
	if t == nil {
		if t, err = target.Parse(f.dsn); err != nil {
			return nil, usageError{err}
		}
	}
	// Before anything is sent: reachability, version, settings, slots, data.
	info, err := inspectWaiting(ctx, env, t, f.outageTimeout)
	if err != nil {
		return nil, err
	}
	if err := info.CheckSlots(f.clients); err != nil {
		return nil, err
	}
	ctl, err := sampler.NewControl(ctx, t.Connect)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	conn, err := ctl.Conn(ctx)
	if err != nil {
		return nil, err
	}
	setup, err := wl.setup(ctx, t, conn)
	if err != nil {
		return nil, err
	}
	scripts, scale := setup.scripts, setup.scale
	st, err := openForWriting(ctx, env, results)
	if err != nil {
		return nil, err
	}
	defer st.Close()

	seed := f.seed
	if seed == 0 {
		seed = uint64(env.Now().UnixNano())
	}
	run := &store.Run{
		Target: t.String(), Workload: wl.name, Script: driver.Mix(scripts), Clients: f.clients,
		ServerVersion: info.Version, Settings: info.Settings, Labels: labels, Started: env.Now(),
		Params: map[string]any{"protocol": proto.String(), "warmup_s": f.warmup.Seconds(),
			"duration_s": f.duration.Seconds(), "transactions": f.transactions, "max_tries": f.maxTries,
			"seed": seed, "jobs": f.threads, "thread_per_client": f.threadPerClient, "address": info.Address, "tls_version": info.TLSVersion, "tls_cipher": info.TLSCipher},
	}
	for k, v := range setup.params {
		run.Params[k] = v
	}
	if _, err := st.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Stderr, "run %d: %s %s on %s, PostgreSQL %s, %s, %d clients\n",
		run.ID, wl.name, run.Script, info.Address, info.Version, setup.size, f.clients)

	// The clients identify themselves so their backends can be found and awaited.
	appName := fmt.Sprintf("pgbakeoff-run-%d", run.ID)
	clientTarget := t.WithDatabase(t.Config.Database)
	clientTarget.Config.RuntimeParams["application_name"] = appName

	fit := datasetFit(ctx, conn, f.local)
	for k, v := range fit.params() {
		run.Params[k] = v
	}
	// The server's counters around the run: read from a fresh snapshot, each
	// without the transactions of pgbakeoff's own sessions.
	stats := serverStats{values: map[string]map[string]int64{}, unread: map[string]string{}}
	var smp *sampler.Sampler
	ownCommits := func() int64 {
		if smp == nil {
			return 0
		}
		return smp.Commits()
	}
	readStats := func(point string, settle bool) {
		// Its own deadline: the window's end is still read after Ctrl-C.
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var r sampler.Reading
		var err error
		if settle {
			r, err = ctl.Settled(rctx, settleTimeout(ctl.Version()))
		} else {
			r, err = ctl.Database(rctx)
		}
		if err != nil {
			stats.unread[point] = err.Error()
			fmt.Fprintf(env.Stderr, "warning: %v\n", err)
			return
		}
		if settle && !r.Settled {
			stats.unsettled = append(stats.unsettled, point)
		}
		// Stored as the server reports them; compared without pgbakeoff's own commits.
		adjusted := maps.Clone(r.Values)
		adjusted["xact_commit"] = r.Commits(ownCommits())
		stats.values[point] = adjusted
		if err := st.AddServerStats(rctx, run.ID, store.ServerStats{Point: point, At: env.Now(), Values: r.Values}); err != nil {
			fmt.Fprintf(env.Stderr, "warning: %v\n", err)
		}
	}
	readStats(store.PointBeforeConnect, true)
	addrs0, _ := t.Resolve(ctx)

	// A results store that cannot be written stops the run: measuring what cannot be
	// kept would waste the time of everyone waiting for the results.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	// The server is sampled from its own statistics while the run goes on.
	mon := &runMonitor{}
	smp, err = sampler.Start(ctx, sampler.Config{
		Connect: t.Connect, AppName: appName, Local: f.local, NodeExporter: f.nodeExporter,
		Exclude: func() []uint32 { return []uint32{ctl.PID()} },
		OnSample: func(sm sampler.Sample) {
			mon.sample(sm)
			if err := st.AddSample(context.Background(), run.ID, storeSample(sm)); err != nil {
				mon.storeErr(err)
				stopRun()
			}
		},
	})
	if err != nil {
		fmt.Fprintf(env.Stderr, "warning: the server will not be sampled: %v\n", err)
	}

	prevProcs := runtime.GOMAXPROCS(max(1, f.threads))
	defer runtime.GOMAXPROCS(prevProcs)
	cpu0 := readCPU()
	prog := newProgressPrinter(env.Stdout, f.progress)
	var storeErr error
	cfg := driver.Config{
		Target: clientTarget, Scripts: scripts, Clients: f.clients, Protocol: proto,
		Warmup: f.warmup, Duration: f.duration, Transactions: f.transactions, MaxTries: f.maxTries,
		Seed: seed, Deck: setup.deck, ThreadPerClient: f.threadPerClient,
		OutageTimeout: f.outageTimeout, TxTimeout: f.txTimeout, ConnectTimeout: f.connectTimeout, ResolveOnce: f.resolveOnce,
		OnInterval: func(iv driver.Interval) {
			prog.add(iv)
			mon.interval(iv)
			s := histogram.Summarize(iv.Latency)
			secs := iv.End.Sub(iv.Start).Seconds()
			// Not ctx: the intervals measured before a Ctrl-C are kept.
			err := st.AddInterval(context.Background(), run.ID, store.Interval{Seq: iv.Seq, Phase: storePhase(iv.Phase), Start: iv.Start, End: iv.End,
				Txns: iv.Committed, Failed: iv.Failed, Retried: iv.Retried, TPS: float64(iv.Committed) / secs,
				LatencyMs: store.Latency{Avg: s.Avg, P50: s.P50, P90: s.P90, P95: s.P95, P99: s.P99, P999: s.P999, Max: s.Max},
				Errors:    iv.Failed, Down: iv.Down, ConnectErrors: iv.ConnectErrors})
			if err != nil && storeErr == nil {
				storeErr = err
				stopRun()
			}
		},
		OnWindow: func(open bool) {
			if open {
				readStats(store.PointWindowStart, false)
			} else {
				readStats(store.PointWindowEnd, false)
			}
			if setup.window != nil {
				wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				conn, err := ctl.Conn(wctx)
				if err == nil {
					err = setup.window(wctx, conn, open, ownCommits()+ctl.Own())
					ctl.Ran(1)
				}
				if err != nil {
					fmt.Fprintf(env.Stderr, "warning: %v\n", err)
				}
			}
		},
	}
	res, err := driver.Run(runCtx, cfg)
	if err != nil {
		if smp != nil {
			smp.Stop()
		}
		run.Status, run.Ended = store.StatusFailed, env.Now()
		_ = st.FinishRun(context.Background(), run)
		return nil, err
	}
	cpu1 := readCPU()
	var sres sampler.Result
	if smp != nil {
		sres = smp.Stop()
	}
	// Sessions report their last counts as they exit: only once the benchmark's
	// and the sampler's are gone do the server's counters hold all their work.
	sctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := ctl.WaitGone(sctx, appName, sres.PIDs, 30*time.Second); err != nil {
		fmt.Fprintf(env.Stderr, "warning: waiting for the benchmark's sessions to end: %v\n", err)
	}
	readStats(store.PointAfterDisconnect, true)
	// What was measured is written with its own deadline: a server that kept the
	// wait above busy must not cost the results.
	ctx, cancelWrite := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelWrite()

	sum := summarize(run, res, info, scale, proto, f, stats, cpu0, cpu1)
	if setup.finish != nil {
		setup.finish(sum, res)
	}
	sum.Dataset = fit
	m := machine.Describe(f.anonymize)
	sum.ClientMachine = &m
	for _, e := range sres.Errors {
		sum.Warnings = append(sum.Warnings, "sampling the server: "+e)
	}
	ev := mon.evidence(res)
	ev.committed, ev.failed = res.Committed, res.Failed
	if res.Incomplete {
		ev.incomplete = res.IncompleteReason
	}
	ev.clientSaturated, ev.clientCores = sum.ClientCPU.Saturated, sum.ClientCPU.Cores
	ev.clientCommits, ev.serverCommits = sum.CommitsTotal, sum.Server.Commits
	ev.commitsRead, ev.unsettled = sum.Server.CommitsUnread == "", sum.Server.CommitsUnsettled
	ev.seen = sres.Others
	ev.restarted = sres.Restarted
	ev.statsReset = sres.Reset
	if sres.AddressChanged {
		ev.addressChanged = "the server's address or its recovery state changed"
	}
	if addrs1, err := t.Resolve(ctx); err == nil && len(addrs0) > 0 && !sameAddrs(addrs0, addrs1) {
		ev.addressChanged = fmt.Sprintf("%s resolved to %s at the start and to %s at the end",
			t.Config.Host, strings.Join(addrs0, ", "), strings.Join(addrs1, ", "))
	}
	sum.Flags = judge(ev)
	if err := st.SetFlags(ctx, run.ID, storeFlags(sum.Flags)); err != nil {
		sum.Warnings = append(sum.Warnings, "results store: "+err.Error())
	}
	if err := mon.err(); err != nil && storeErr == nil {
		storeErr = err
	}
	if storeErr != nil {
		// What was stored stays; the rest is in the summary printed now.
		sum.Status = store.StatusFailed
		sum.Warnings = append(sum.Warnings, "results store: "+storeErr.Error())
		run.Status, run.Ended = store.StatusFailed, env.Now()
		_ = st.FinishRun(context.Background(), run)
		return sum, fmt.Errorf("results store %s could not be written (%v): run %d was stopped; free disk space or check the file's permissions", st.Path(), storeErr, run.ID)
	}
	run.Ended = env.Now()
	run.Status = sum.Status
	run.ClientCPUUser, run.ClientCPUSys = sum.ClientCPU.UserS, sum.ClientCPU.SysS
	if err := saveDetails(ctx, st, run.ID, res); err != nil {
		return sum, err
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return sum, err
	}
	run.Summary = b
	if err := st.FinishRun(ctx, run); err != nil {
		return sum, err
	}
	if res.Interrupted {
		return sum, fmt.Errorf("%w: run %d stopped early; what was measured is stored", ErrInterrupted, run.ID)
	}
	if res.Incomplete {
		return sum, fmt.Errorf("run %d ended early (%s); what was measured is stored", run.ID, res.IncompleteReason)
	}
	return sum, nil
}

func checkRunFlags(f runFlags) error {
	if err := driver.CheckThreads(f.threadPerClient, f.clients); err != nil {
		return err
	}
	if _, err := driver.ParseProtocol(f.protocol); err != nil {
		return err
	}
	switch {
	case f.clients < 1:
		return fmt.Errorf("--clients must be at least 1, got %d", f.clients)
	case f.clients > 100000:
		return fmt.Errorf("--clients %d is more than pgbakeoff supports (100000)", f.clients)
	case f.threads < 1:
		return fmt.Errorf("--jobs must be at least 1, got %d", f.threads)
	case f.transactions < 0:
		return fmt.Errorf("--transactions must be positive, got %d", f.transactions)
	case f.transactions == 0 && f.duration <= 0:
		return fmt.Errorf("--duration must be positive, got %s", f.duration)
	case f.warmup < 0:
		return fmt.Errorf("--warmup must not be negative, got %s", f.warmup)
	case f.progress < 0:
		return fmt.Errorf("--progress must not be negative, got %s", f.progress)
	case f.outageTimeout < 0 || f.txTimeout < 0 || f.connectTimeout < 0:
		return fmt.Errorf("--outage-timeout, --tx-timeout and --connect-timeout must not be negative")
	case f.maxTries < 1:
		return fmt.Errorf("--max-tries must be at least 1, got %d", f.maxTries)
	case f.scale < 0:
		return fmt.Errorf("--scale must be positive, got %d", f.scale)
	}
	// The distribution is checked again against the data; its syntax is known now.
	if f.dist != "" && f.dist != "nurand" {
		if _, err := keydist.Parse(f.dist); err != nil {
			return fmt.Errorf("--dist: %w", err)
		}
	}
	return nil
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

func storePhase(p driver.Phase) string {
	if p == driver.Warmup {
		return store.PhaseWarmup
	}
	return store.PhaseMeasure
}

// serverStats are the server's counters read at each point of a run (store.Point*),
// with pgbakeoff's own commits left out, and why a point could not be read.
type serverStats struct {
	values    map[string]map[string]int64
	unread    map[string]string
	unsettled []string // points read before the counters stopped moving
}

// settleTimeout is how long the counters may take to settle once the sessions
// have ended: before PostgreSQL 15 the statistics collector, behind under load,
// may need seconds to catch up.
func settleTimeout(version int) time.Duration {
	if version >= 150000 {
		return 3 * time.Second
	}
	return 15 * time.Second
}

func summarize(run *store.Run, res *driver.Result, info *target.Info, scale int, proto driver.Protocol, f runFlags,
	stats serverStats, cpu0, cpu1 cpuSample) *Summary {
	window := res.WindowEnd.Sub(res.WindowStart).Seconds()
	all := histogram.New()
	sum := &Summary{
		RunID: run.ID, Workload: run.Workload, Script: run.Script, Target: run.Target, Address: info.Address,
		Protocol: proto.String(), Scale: scale, Clients: f.clients, Started: run.Started,
		WarmupS: f.warmup.Seconds(), DurationS: window, Transactions: res.Committed, Failed: res.Failed,
		CommitsTotal: res.CommitsTotal, Labels: run.Labels, Status: store.StatusCompleted,
	}
	if window > 0 {
		sum.TPS = float64(res.Committed) / window
	}
	for _, s := range res.Scripts {
		all.Merge(s.Latency)
		ss := scriptSummary{Name: s.Name, Transactions: s.Committed, Failed: s.Failed, Retried: s.Retried, RolledBack: s.RolledBack,
			LatencyMs: histogram.Summarize(s.Latency)}
		if window > 0 {
			ss.TPS = float64(s.Committed) / window
		}
		sum.Scripts = append(sum.Scripts, ss)
		sum.Retried += s.Retried
		sum.Retries += s.Retries
	}
	sum.LatencyMs = histogram.Summarize(all)
	for _, e := range res.Errors {
		sum.Errors = append(sum.Errors, errorSummary{SQLState: e.SQLState, Script: e.Script, Retried: e.Retried, Count: e.Count, Example: e.Example})
	}
	sum.Reconnects = len(res.Outages)
	sum.OutageS = res.OutageSeconds()
	for _, o := range res.Outages {
		sum.Outages = append(sum.Outages, outageSummary{Client: o.Client, Start: o.Start, End: o.End, Seconds: o.End.Sub(o.Start).Seconds(),
			Cause: driver.CauseName(o.Cause), Error: o.Error, Attempts: o.Attempts, FailedTx: o.FailedTx, Recovered: o.Recovered})
	}
	for _, c := range res.ConnectErrors {
		sum.ConnectErrors = append(sum.ConnectErrors, connectErrSummary{Cause: driver.CauseName(c.Cause), Count: c.Count, Example: c.Example})
	}
	sum.ClientAddress = res.Address
	if res.Incomplete {
		sum.Status = store.StatusIncomplete
	}

	sum.Server.Version = info.Version
	if info.SSL {
		sum.Server.TLS = strings.TrimSpace(info.TLSVersion + " " + info.TLSCipher)
	}
	if b, a := stats.values[store.PointBeforeConnect], stats.values[store.PointAfterDisconnect]; b != nil && a != nil {
		sum.Server.Commits = a["xact_commit"] - b["xact_commit"]
		if sum.CommitsTotal > 0 {
			sum.Server.CommitsDiffPct = 100 * float64(sum.Server.Commits-sum.CommitsTotal) / float64(sum.CommitsTotal)
		}
		sum.Server.CommitsUnsettled = len(stats.unsettled) > 0
	} else {
		sum.Server.CommitsUnread = cmp.Or(stats.unread[store.PointAfterDisconnect], stats.unread[store.PointBeforeConnect], "not read")
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("the server's commit count could not be read (%s): the clients' %d commits are not checked against it",
			sum.Server.CommitsUnread, sum.CommitsTotal))
	}
	values := stats.values
	if b, a := values[store.PointWindowStart], values[store.PointWindowEnd]; b != nil && a != nil {
		sum.Server.WindowCommits = a["xact_commit"] - b["xact_commit"]
		sum.Server.WindowRollbacks = a["xact_rollback"] - b["xact_rollback"]
		sum.Server.BlksRead = a["blks_read"] - b["blks_read"]
		sum.Server.BlksHit = a["blks_hit"] - b["blks_hit"]
	}

	wall := res.End.Sub(res.Start).Seconds()
	c := &sum.ClientCPU
	c.UserS, c.SysS = cpu1.user-cpu0.user, cpu1.sys-cpu0.sys
	c.ThreadPerClient, c.Threads = f.threadPerClient, max(1, f.threads)
	if f.threadPerClient {
		c.Threads = f.clients
		if strings.HasPrefix(res.Address, "/") {
			c.ReadAtOnce = &res.ReadAtOnce
		}
	}
	sum.ClientCPUS = c.UserS + c.SysS
	if res.CommitsTotal > 0 {
		c.PerTxUs = 1e6 * sum.ClientCPUS / float64(res.CommitsTotal)
	}
	if wall > 0 {
		c.Cores = sum.ClientCPUS / wall
	}
	if cpu1.machineTotal > cpu0.machineTotal {
		c.MachineBusyPct = 100 * float64(cpu1.machineBusy-cpu0.machineBusy) / float64(cpu1.machineTotal-cpu0.machineTotal)
	}
	// The client can use at most GOMAXPROCS cores; near that, it is what is measured.
	limit, more := float64(min(max(1, f.threads), runtime.NumCPU())), "add --jobs or client machines"
	if f.threadPerClient {
		limit, more = float64(min(f.threads+f.clients, runtime.NumCPU())), "add client machines"
	}
	if c.Cores >= 0.9*limit {
		c.Saturated = true
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("the client was CPU-bound (%.2f of %.0f cores it may use): it, not the server, limited throughput; %s", c.Cores, limit, more))
	} else if c.MachineBusyPct > 95 {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("this machine's CPUs were %.0f%% busy and the client used %.2f cores of them: client and server compete for CPU", c.MachineBusyPct, c.Cores))
	}
	if res.Interrupted {
		sum.Status = store.StatusInterrupted
	}
	if sum.Reconnects > 0 {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("connections were lost %d times; clients were without a connection for %.1f s in all", sum.Reconnects, sum.OutageS))
	}
	return sum
}

func saveDetails(ctx context.Context, st *store.Store, runID int64, res *driver.Result) error {
	var hs []store.Histogram
	for _, s := range res.Scripts {
		b, err := histogram.Encode(s.Latency)
		if err != nil {
			return fmt.Errorf("encode histogram: %w", err)
		}
		hs = append(hs, store.Histogram{TxType: s.Name, Kind: store.KindMeasure, Encoded: b})
	}
	if err := st.AddHistograms(ctx, runID, hs); err != nil {
		return err
	}
	var es []store.ErrorCount
	for _, e := range res.Errors {
		es = append(es, store.ErrorCount{SQLState: e.SQLState, Class: sqlClass(e.SQLState), TxType: e.Script, Count: e.Count, Retried: e.Retried, Example: e.Example})
	}
	if len(es) > 0 {
		return st.AddErrors(ctx, runID, es)
	}
	return nil
}

// sqlClass names the SQLSTATE class (its first two characters) for reports.
func sqlClass(state string) string {
	if len(state) < 2 {
		return "unknown"
	}
	switch state[:2] {
	case "08":
		return "connection"
	case "40":
		return "transaction rollback"
	case "53":
		return "insufficient resources"
	case "57":
		return "operator intervention"
	case "23":
		return "integrity constraint"
	}
	return "class " + state[:2]
}

// progressPrinter aggregates intervals into one line every period. A line covers
// one phase: the intervals before the phase changes are printed as it does.
type progressPrinter struct {
	w        io.Writer
	period   time.Duration
	start    time.Time
	from, to time.Time // what the next line covers
	phase    driver.Phase
	hist     *hdrhistogram.Histogram
	failed   int64
}

func newProgressPrinter(w io.Writer, period time.Duration) *progressPrinter {
	return &progressPrinter{w: w, period: period, hist: histogram.New()}
}

func (p *progressPrinter) add(iv driver.Interval) {
	if p.period <= 0 {
		return
	}
	if p.start.IsZero() {
		p.start, p.from, p.to = iv.Start, iv.Start, iv.Start
	}
	if p.to.After(p.from) && iv.Phase != p.phase {
		p.print()
	}
	p.hist.Merge(iv.Latency)
	p.failed += iv.Failed
	p.phase, p.to = iv.Phase, iv.End
	if p.to.Sub(p.from) >= p.period-50*time.Millisecond {
		p.print()
	}
}

func (p *progressPrinter) print() {
	s := histogram.Summarize(p.hist)
	secs := p.to.Sub(p.from).Seconds()
	fmt.Fprintf(p.w, "progress: %.1f s, %.1f tps, lat %.3f ms avg, %.3f ms p99, %d failed [%s]\n",
		p.to.Sub(p.start).Seconds(), float64(s.Count)/secs, s.Avg, s.P99, p.failed, p.phase)
	p.hist.Reset()
	p.failed = 0
	p.from = p.to
}

func printSummary(w io.Writer, s *Summary) {
	fmt.Fprintf(w, "run %d: %s, %s\n", s.RunID, s.Workload, s.Status)
	if t := s.TPCCFigures; t != nil {
		fmt.Fprintf(w, "mix: %s, %d warehouses, %s mode, %d clients\n", s.Script, t.Warehouses, t.Mode, s.Clients)
	} else if sb := s.SysbenchFigures; sb != nil {
		fmt.Fprintf(w, "script: %s, %s of %d rows, %s keys, %d clients\n", s.Script, plural(sb.Tables, "table"), sb.TableSize, sb.Dist, s.Clients)
	} else {
		fmt.Fprintf(w, "script: %s, scale %d, %s protocol, %d clients\n", s.Script, s.Scale, s.Protocol, s.Clients)
	}
	fmt.Fprintf(w, "target: %s (PostgreSQL %s at %s)\n", s.Target, s.Server.Version, s.Address)
	fmt.Fprintf(w, "window: %.1f s after %.1f s warm-up\n", s.DurationS, s.WarmupS)
	fmt.Fprintf(w, "transactions: %d committed, %d failed, %d retried\n", s.Transactions, s.Failed, s.Retried)
	fmt.Fprintf(w, "tps: %.1f\n", s.TPS)
	l := s.LatencyMs
	fmt.Fprintf(w, "latency ms: avg %.3f  stddev %.3f  p50 %.3f  p90 %.3f  p95 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
		l.Avg, l.Stddev, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max)
	if len(s.Scripts) > 1 {
		for _, sc := range s.Scripts {
			fmt.Fprintf(w, "  %-14s %9d tx  %10.1f tps  p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  %d failed  %d rolled back\n", sc.Name, sc.Transactions, sc.TPS, sc.LatencyMs.P50, sc.LatencyMs.P90, sc.LatencyMs.P99, sc.Failed, sc.RolledBack)
		}
	}
	if t := s.TPCCFigures; t != nil {
		fmt.Fprintf(w, "NOPM: %.0f (database), client New-Orders per minute %.0f (%+.2f%%)\n", t.NOPM, t.ClientNewOrdersPerMin, t.NOPMDiffPct)
		fmt.Fprintf(w, "TPM: %.0f (this database), %.0f (whole cluster, as HammerDB counts)\n", t.TPM, t.TPMCluster)
		if t.EfficiencyPct > 0 {
			fmt.Fprintf(w, "efficiency: %.1f%% of 12.86 tpmC per warehouse\n", t.EfficiencyPct)
		}
	}
	if sb := s.SysbenchFigures; sb != nil {
		fmt.Fprintf(w, "queries: %d (%.1f per s): read %d, write %d, other %d; ignored errors %d, reconnects %d\n",
			sb.Queries, sb.QPS, sb.ReadQueries, sb.WriteQueries, sb.OtherQueries, sb.IgnoredErrors, s.Reconnects)
	}
	if s.Server.CommitsUnread != "" {
		fmt.Fprintf(w, "commits: client %d, server not read (%s)\n", s.CommitsTotal, s.Server.CommitsUnread)
	} else {
		fmt.Fprintf(w, "commits: client %d, server %d (%+.2f%%) from first connect to last disconnect\n", s.CommitsTotal, s.Server.Commits, s.Server.CommitsDiffPct)
	}
	threads := fmt.Sprintf("%d shared threads", s.ClientCPU.Threads)
	switch {
	case s.ClientCPU.ThreadPerClient:
		threads = "a thread per client"
		if r := s.ClientCPU.ReadAtOnce; r != nil {
			threads += fmt.Sprintf(", %.0f%% of answers read without polling first", 100**r)
		}
	case s.ClientCPU.Threads == 1:
		threads = "one shared thread"
	}
	fmt.Fprintf(w, "client cpu: %.2f s (%.2f user, %.2f sys), %.1f us per transaction, %.2f cores, %s\n", s.ClientCPUS, s.ClientCPU.UserS, s.ClientCPU.SysS, s.ClientCPU.PerTxUs, s.ClientCPU.Cores, threads)
	if m := s.ClientMachine; m != nil {
		fmt.Fprintf(w, "client machine: %s\n", m)
	}
	errs := append([]errorSummary(nil), s.Errors...)
	sort.Slice(errs, func(i, j int) bool { return errs[i].Count > errs[j].Count })
	for _, e := range errs {
		kind := "failed"
		if e.Retried {
			kind = "retried"
		}
		fmt.Fprintf(w, "error %s (%s, %s): %d  %s\n", e.SQLState, e.Script, kind, e.Count, e.Example)
	}
	if s.Reconnects > 0 {
		fmt.Fprintf(w, "reconnects: %d, outage %.1f s\n", s.Reconnects, s.OutageS)
		for _, o := range s.Outages {
			end := fmt.Sprintf("%.1f s, %d attempts", o.Seconds, o.Attempts)
			if !o.Recovered {
				end = "not recovered"
			}
			fmt.Fprintf(w, "  client %d lost its connection at %s (%s), %d transaction(s) lost, %s\n",
				o.Client, o.Start.Local().Format("15:04:05.000"), o.Cause, o.FailedTx, end)
		}
	}
	for _, c := range s.ConnectErrors {
		fmt.Fprintf(w, "failed connection attempts: %d %s  %s\n", c.Count, c.Cause, c.Example)
	}
	if s.Dataset.Bytes > 0 {
		fmt.Fprintf(w, "dataset: %s\n", s.Dataset)
	}
	for _, fl := range s.Flags {
		kind := "note"
		if fl.Invalid {
			kind = "INVALID"
		}
		fmt.Fprintf(w, "%s (%s): %s\n", kind, fl.Name, fl.Reason)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// inspectWaiting is Inspect, waiting out a server that is starting up for up to
// wait (0: driver.StartingUpWait), as the run's clients then do, and saying so.
func inspectWaiting(ctx context.Context, env *Env, t *target.Target, wait time.Duration) (*target.Info, error) {
	var info *target.Info
	noted := false
	err := driver.WaitStartingUp(ctx, wait, 2*time.Second, func() (err error) {
		info, err = t.Inspect(ctx)
		return err
	}, func(err error) {
		if !noted {
			noted = true
			fmt.Fprintf(env.Stderr, "the server does not accept connections yet (%s); waiting up to %s\n",
				driver.CauseName(driver.Cause(err)), cmp.Or(wait, driver.StartingUpWait))
		}
	})
	return info, err
}
