package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/gate"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	pgbenchw "github.com/pgbakeoff/pgbakeoff/internal/workload/pgbench"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The exit codes of pgbench, which `pgbakeoff pgbench` keeps so that shell scripts
// written around pgbench keep working.
const (
	pgbenchBadOptions = 1 // bad options, a script that does not parse, no connection
	pgbenchRunErrors  = 2 // clients aborted during the run
)

// exitError ends the program with a given code.
type exitError struct {
	err  error
	code int
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// pgbenchOptions are pgbench's options, as pgbench names them.
type pgbenchOptions struct {
	fs                            *pflag.FlagSet
	clients, jobs, tx, time, prog string
	scale, protocol, seed, tries  string
	host, port, user, dbname      string
	results                       string
	metricsListen                 string
	gates                         []gate.Gate
	noVacuum, vacuumAll           bool
	exitOnAbort, verbose, detail  bool
	continueOnError, reconnect    bool
	perCommand, log, connect      bool
	progressTimestamp             bool
	logPrefix, sampling, every    string
	rate, limit                   string
	showScript                    string
	defines                       []string
	// scripts are -f, -b, -S and -N in the order given, which numbers them:
	// the run pgbench flag and its value.
	scripts [][2]string
	// -i and the options that shape what it loads.
	initialize                   bool
	initSteps, fillfactor        string
	partitions, partitionMethod  string
	quiet, foreignKeys, unlogged bool
	tablespace, indexTablespace  string
}

// pgbenchUnsupported are pgbench options `pgbakeoff pgbench` does not take, each
// with what to do instead; they are refused by name rather than ignored.
var pgbenchUnsupported = []struct{ long, short, instead string }{
	{"tablespace", "", "load with pgbench -i --tablespace, or move the tables afterwards with ALTER TABLE ... SET TABLESPACE"},
	{"index-tablespace", "", "load with pgbench -i --index-tablespace, or move the indexes afterwards with ALTER INDEX ... SET TABLESPACE"},
	{"debug", "", "run pgbench itself for its debugging output; pgbakeoff's summary on stderr lists every error by SQLSTATE"},
}

// pgbenchInitOnly and pgbenchRunOnly are the options of one mode, refused in the
// other as pgbench refuses them.
var (
	pgbenchInitOnly = []string{"init-steps", "fillfactor", "quiet", "unlogged-tables", "tablespace", "index-tablespace",
		"foreign-keys", "partitions", "partition-method"}
	pgbenchRunOnly = []string{"builtin", "client", "connect", "define", "file", "jobs", "log", "latency-limit", "protocol",
		"skip-some-updates", "progress", "report-per-command", "rate", "select-only", "time", "transactions", "vacuum-all",
		"sampling-rate", "aggregate-interval", "progress-timestamp", "log-prefix", "random-seed", "failures-detailed",
		"max-tries", "verbose-errors", "exit-on-abort", "continue-on-error", "reconnect", "fail-if"}
)

func newPgbenchFlags() *pgbenchOptions {
	o := &pgbenchOptions{fs: pflag.NewFlagSet("pgbench", pflag.ContinueOnError)}
	fs := o.fs
	fs.SetOutput(io.Discard)
	fs.VarP(scriptOpt{o, "builtin", ""}, "builtin", "b", "")
	fs.StringVarP(&o.clients, "client", "c", "", "")
	fs.StringVarP(&o.dbname, "dbname", "d", "", "")
	fs.StringArrayVarP(&o.defines, "define", "D", nil, "")
	fs.VarP(scriptOpt{o, "file", ""}, "file", "f", "")
	fs.StringVarP(&o.host, "host", "h", "", "")
	fs.StringVarP(&o.jobs, "jobs", "j", "", "")
	fs.StringVarP(&o.protocol, "protocol", "M", "", "")
	fs.BoolVarP(&o.noVacuum, "no-vacuum", "n", false, "")
	fs.VarP(scriptOpt{o, "builtin", "simple-update"}, "skip-some-updates", "N", "")
	fs.Lookup("skip-some-updates").NoOptDefVal = "true"
	fs.StringVarP(&o.port, "port", "p", "", "")
	fs.StringVarP(&o.prog, "progress", "P", "", "")
	fs.BoolVar(&o.progressTimestamp, "progress-timestamp", false, "")
	fs.StringVarP(&o.scale, "scale", "s", "", "")
	fs.VarP(scriptOpt{o, "builtin", "select-only"}, "select-only", "S", "")
	fs.Lookup("select-only").NoOptDefVal = "true"
	fs.StringVarP(&o.tx, "transactions", "t", "", "")
	fs.StringVarP(&o.time, "time", "T", "", "")
	fs.StringVarP(&o.user, "username", "U", "", "")
	fs.BoolVarP(&o.vacuumAll, "vacuum-all", "v", false, "")
	fs.StringVar(&o.seed, "random-seed", "", "")
	fs.StringVarP(&o.rate, "rate", "R", "", "")
	fs.StringVarP(&o.limit, "latency-limit", "L", "", "")
	fs.StringVar(&o.tries, "max-tries", "", "")
	fs.StringVar(&o.results, "results", "", "")              // pgbakeoff's own: where the run is stored
	fs.StringVar(&o.metricsListen, "metrics-listen", "", "") // pgbakeoff's own: live metrics
	fs.Var(gatesValue{&o.gates}, "fail-if", "")              // pgbakeoff's own: a gate on the run
	fs.BoolVar(&o.reconnect, "reconnect", false, "")         // pgbakeoff's own: clients reconnect rather than abort
	fs.BoolVar(&o.exitOnAbort, "exit-on-abort", false, "")
	fs.BoolVar(&o.continueOnError, "continue-on-error", false, "")
	fs.BoolVarP(&o.perCommand, "report-per-command", "r", false, "")
	fs.BoolVarP(&o.log, "log", "l", false, "")
	fs.BoolVarP(&o.connect, "connect", "C", false, "")
	fs.StringVar(&o.logPrefix, "log-prefix", "", "")
	fs.StringVar(&o.sampling, "sampling-rate", "", "")
	fs.StringVar(&o.every, "aggregate-interval", "", "")
	fs.StringVar(&o.showScript, "show-script", "", "")
	// The summary always counts errors by SQLSTATE, with an example of each, and
	// failures by kind: --verbose-errors is what it does anyway.
	fs.BoolVar(&o.verbose, "verbose-errors", false, "")
	fs.BoolVar(&o.detail, "failures-detailed", false, "")
	// -i and its options.
	fs.BoolVarP(&o.initialize, "initialize", "i", false, "")
	fs.StringVarP(&o.initSteps, "init-steps", "I", "", "")
	fs.StringVarP(&o.fillfactor, "fillfactor", "F", "", "")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "")
	fs.BoolVar(&o.foreignKeys, "foreign-keys", false, "")
	fs.BoolVar(&o.unlogged, "unlogged-tables", false, "")
	fs.StringVar(&o.partitions, "partitions", "", "")
	fs.StringVar(&o.partitionMethod, "partition-method", "", "")
	fs.StringVar(&o.tablespace, "tablespace", "", "")
	fs.StringVar(&o.indexTablespace, "index-tablespace", "", "")
	fs.BoolVar(new(bool), "debug", false, "")
	return o
}

// scriptOpt is -f, -b, -S or -N: each adds a script to the options' ordered list;
// -S and -N stand for a builtin (fixed).
type scriptOpt struct {
	o           *pgbenchOptions
	flag, fixed string
}

func (s scriptOpt) String() string { return "" }
func (s scriptOpt) Type() string   { return "string" }
func (s scriptOpt) Set(v string) error {
	if s.fixed != "" {
		v = s.fixed
	}
	s.o.scripts = append(s.o.scripts, [2]string{s.flag, v})
	return nil
}

// newPgbenchCmd is `pgbakeoff pgbench`: pgbench's command line, for shell scripts
// written around pgbench: -i loads pgbench's tables, and a run is stored and
// summarized as any other, with pgbench's report on stdout and pgbench's exit code.
func newPgbenchCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pgbench [pgbench options] [dbname]",
		Short: "Load and run with pgbench's command line, report and exit codes (a drop-in for pgbench)",
		Example: `  pgbakeoff pgbench -i -s 100 bench
  pgbakeoff pgbench -n -c 8 -T 60 -f a.sql@3 -b select-only@1 -h db.example -p 5432 -U bench bench
  pgbakeoff pgbench -c 16 -j 2 -T 300 -M prepared -S -P 5 "host=db.example dbname=bench"`,
		DisableFlagParsing: true,
	}
	cmd.SetHelpFunc(func(*cobra.Command, []string) { fmt.Fprint(env.Stdout, pgbenchHelp) })
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		for _, a := range args {
			if a == "--help" || a == "-?" {
				return cmd.Help()
			}
			if a == "--version" || a == "-V" {
				fmt.Fprintf(env.Stdout, "pgbakeoff pgbench (pgbench %s compatible), pgbakeoff %s\n", pgbenchCompatible, machine.Version())
				return nil
			}
		}
		results, _ := cmd.Flags().GetString("results")
		return runPgbenchArgs(cmd.Context(), env, args, results)
	}
	return cmd
}

// pgbenchCompatible is the pgbench whose command line `pgbakeoff pgbench` takes and
// whose report it prints, as its first line and --version name it.
const pgbenchCompatible = "17"

func runPgbenchArgs(ctx context.Context, env *Env, args []string, results string) error {
	o, err := parsePgbenchArgs(args)
	if err != nil {
		return exitError{err, pgbenchBadOptions}
	}
	if slices.Contains(o.scripts, [2]string{"builtin", "list"}) {
		fmt.Fprint(env.Stderr, pgbenchw.ListBuiltins()) // -b list, where pgbench lists them
		return nil
	}
	if o.showScript != "" {
		src, err := pgbenchw.ShowScript(o.showScript)
		if err != nil {
			return exitError{err, pgbenchBadOptions}
		}
		fmt.Fprint(env.Stderr, src) // where pgbench shows it
		return nil
	}
	if o.results != "" {
		results = o.results
	}
	dsn, err := pgbenchDSN(o)
	if err != nil {
		return exitError{err, pgbenchBadOptions}
	}
	if o.initialize {
		return runPgbenchInit(ctx, env, o, dsn)
	}
	return runPgbenchBench(ctx, env, o, dsn, results)
}

// parsePgbenchArgs reads pgbench's command line and checks what can be checked
// without the data: options of the other mode, options not taken, arguments.
func parsePgbenchArgs(args []string) (*pgbenchOptions, error) {
	o := newPgbenchFlags()
	if err := o.fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%v (try \"pgbakeoff pgbench --help\")", err)
	}
	for _, u := range pgbenchUnsupported {
		if o.fs.Changed(u.long) {
			return nil, fmt.Errorf("pgbench option --%s is not supported by pgbakeoff pgbench: %s", u.long, u.instead)
		}
	}
	rest := o.fs.Args()
	if o.dbname == "" && len(rest) > 0 {
		o.dbname, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("too many command-line arguments (first is %q)", rest[0])
	}
	mode, other, flags := "benchmarking", "-i to load", pgbenchInitOnly
	if o.initialize {
		mode, other, flags = "initialization (-i)", "a run", pgbenchRunOnly
	}
	for _, name := range flags {
		if o.fs.Changed(name) {
			return nil, fmt.Errorf("some of the specified options cannot be used in %s mode: --%s is for %s", mode, name, other)
		}
	}
	if o.tx != "" && o.time != "" {
		return nil, errors.New("specify either a number of transactions (-t) or a duration (-T), not both")
	}
	return o, nil
}

// runPgbenchBench runs the benchmark pgbench's options describe, prints pgbench's
// report on stdout and pgbakeoff's summary on stderr, and exits as pgbench does:
// 2 when clients were aborted, or lost their connections without --reconnect.
func runPgbenchBench(ctx context.Context, env *Env, o *pgbenchOptions, dsn, results string) error {
	bad := func(err error) error { return exitError{err, pgbenchBadOptions} }
	spec, pr, err := pgbenchSpec(o, env)
	if err != nil {
		return bad(flagged(err))
	}
	t, err := target.Parse(dsn)
	if err != nil {
		return bad(err)
	}
	ms, err := listenMetrics(o.metricsListen)
	if err != nil {
		return bad(err)
	}
	defer ms.Close()
	ctx, stop := env.Interrupt(ctx)
	defer stop()
	if !o.noVacuum {
		vacuumLikePgbench(ctx, env, t, o.vacuumAll)
	}
	// The run's own lines go to stderr: stdout carries pgbench's report, which
	// scripts written around pgbench read.
	runEnv := *env
	runEnv.Stdout = env.Stderr
	sum, err := runSpecWith(ctx, &runEnv, *spec, t, results, 0, nil, ms)
	if sum == nil {
		if err != nil && !errors.Is(err, ErrInterrupted) {
			return exitError{err, pgbenchBadOptions} // nothing ran: the setup failed
		}
		return err
	}
	out := pr.Outcome()
	rep := pgbenchReport{sum: sum, spec: spec, o: o, out: out}
	rep.write(env.Stdout)
	sum.WriteText(env.Stderr)       // pgbakeoff's summary, validity included
	shown := target.Redact(results) // a PostgreSQL store's DSN may carry a password
	fmt.Fprintf(env.Stderr, "pgbakeoff: run %d stored in %s: pgbakeoff show %d --results %s\n", sum.RunID, shown, sum.RunID, shown)
	if errors.Is(err, ErrInterrupted) {
		return err
	}
	if why := rep.aborted(); len(why) > 0 {
		for _, w := range why {
			fmt.Fprintf(env.Stderr, "pgbakeoff: %s\n", w)
		}
		return exitError{errors.New("Run was aborted; the above results are incomplete."), pgbenchRunErrors}
	}
	if err != nil {
		return err
	}
	// Gates are pgbakeoff's: their verdicts go with its summary, on stderr.
	return judgeGates(env.Stderr, o.gates, sum)
}

// pgbenchSpec is the run pgbench's options describe, and its pgbench workload.
func pgbenchSpec(o *pgbenchOptions, env *Env) (*engine.Spec, *pgbenchw.Run, error) {
	w, _ := workload.Find("pgbench")
	spec := engine.NewSpec()
	pr := w.NewRun().(*pgbenchw.Run)
	spec.Workload, spec.Settings = pr, workload.Settings(pr)
	if err := pgbenchCounts(o, &spec, env); err != nil {
		return nil, nil, err
	}
	if err := pgbenchScripts(o, pr); err != nil {
		return nil, nil, err
	}
	spec.ExitOnAbort, spec.ConnectPerTx = o.exitOnAbort, o.connect
	pr.PerCommand, pr.Log, pr.FailuresDetailed, pr.ContinueOnError = o.perCommand, o.log, o.detail, o.continueOnError
	// pgbench aborts a client whose connection is lost, unless asked to reconnect,
	// and waits as long as a statement takes: no transaction is abandoned for its
	// length.
	spec.TxTimeout, spec.AbortOnLost = 0, !o.reconnect
	pr.SetStdin(env.Stdin)
	if err := pgbenchNumbers(o, &spec, pr); err != nil {
		return nil, nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	return &spec, pr, nil
}

// pgbenchCounts reads the clients, threads, transactions and duration, with
// pgbench's defaults where they differ from pgbakeoff's: one thread, and ten
// transactions a client when neither -t nor -T is given.
func pgbenchCounts(o *pgbenchOptions, spec *engine.Spec, env *Env) error {
	spec.Jobs, spec.Transactions = 1, 10
	if err := pgbenchInt(o.clients, "invalid number of clients", 1, &spec.Clients); err != nil {
		return err
	}
	if err := pgbenchInt(o.jobs, "invalid number of threads", 1, &spec.Jobs); err != nil {
		return err
	}
	// pgbench takes any -j up to the clients; more threads than this machine's
	// cores can use run as many as it can, and say so.
	if spec.Jobs > engine.MaxJobs() {
		fmt.Fprintf(env.Stderr, "pgbakeoff: -j %d is more threads than this machine's %d cores can use; running %d\n", spec.Jobs, runtime.NumCPU(), engine.MaxJobs())
		spec.Jobs = engine.MaxJobs()
	}
	if err := pgbenchInt(o.tx, "invalid number of transactions", 1, &spec.Transactions); err != nil {
		return err
	}
	if o.time != "" {
		spec.Transactions = 0
		secs, err := strconv.Atoi(o.time)
		if err != nil || secs <= 0 {
			return fmt.Errorf("invalid duration: %q: give whole seconds, 1 or more", o.time)
		}
		spec.Duration = time.Duration(secs) * time.Second
	}
	return nil
}

// pgbenchScripts reads the scripts, in the order given, the variables, the
// scale, the query mode and the log's options.
func pgbenchScripts(o *pgbenchOptions, pr *pgbenchw.Run) error {
	for _, sc := range o.scripts {
		pr.AddScript(sc[0] == "file", sc[1])
	}
	pr.Defines = append(pr.Defines, o.defines...)
	if err := pgbenchInt(o.scale, "invalid scaling factor", 1, &pr.Scale); err != nil {
		return err
	}
	pr.Protocol = driver.Simple // pgbench's default, unlike pgbakeoff's
	if o.protocol != "" {
		if err := pr.Protocol.Set(o.protocol); err != nil {
			return fmt.Errorf("invalid query mode (-M): %q: use simple, extended or prepared", o.protocol)
		}
	}
	if o.logPrefix != "" {
		pr.LogPrefix = o.logPrefix
	}
	if o.sampling != "" {
		r, err := strconv.ParseFloat(o.sampling, 64)
		if err != nil {
			return fmt.Errorf("invalid sampling rate: %q: give a share above 0 and at most 1", o.sampling)
		}
		pr.SamplingRate = r
	}
	return pgbenchInt(o.every, "invalid number of seconds for aggregation", 1, &pr.AggregateInterval)
}

// pgbenchInt reads a whole number of at least lo into n, unless v is empty,
// refusing others as pgbench does: what it is, and the value.
func pgbenchInt(v, what string, lo int, n *int) error {
	if v == "" {
		return nil
	}
	x, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || x < lo {
		return fmt.Errorf("%s: %q: give a whole number, %d or more", what, v, lo)
	}
	*n = x
	return nil
}

// pgbenchNumbers reads the options whose values pgbench reads as numbers of its
// own units: -R a second, -L and --max-tries, -P in seconds, the seed.
func pgbenchNumbers(o *pgbenchOptions, spec *engine.Spec, pr *pgbenchw.Run) error {
	if o.rate != "" {
		r, err := strconv.ParseFloat(o.rate, 64)
		if err != nil || r <= 0 {
			return fmt.Errorf("invalid rate limit: %q: give transactions a second above 0", o.rate)
		}
		spec.Rate = r
	}
	if o.limit != "" {
		ms, err := strconv.ParseFloat(o.limit, 64)
		if err != nil || ms <= 0 {
			return fmt.Errorf("invalid latency limit: %q: give milliseconds above 0", o.limit)
		}
		spec.LatencyLimit = time.Duration(ms * float64(time.Millisecond))
	}
	if o.tries != "" {
		n, err := strconv.Atoi(o.tries)
		if err != nil || n < 0 {
			return fmt.Errorf("invalid number of maximum tries: %q: give a whole number, 0 for no limit", o.tries)
		}
		spec.MaxTries = n
		if n == 0 {
			if spec.LatencyLimit == 0 && o.time == "" {
				return errors.New("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)")
			}
			spec.MaxTries = math.MaxInt32 // bounded by the window, as pgbench's
		}
	}
	if o.prog != "" {
		n, err := strconv.Atoi(o.prog)
		if err != nil || n < 1 {
			return fmt.Errorf("invalid value %q for option -P/--progress: give whole seconds, 1 or more", o.prog)
		}
		pr.Progress = time.Duration(n) * time.Second
	}
	if o.progressTimestamp && pr.Progress == 0 {
		return errors.New("--progress-timestamp is allowed only under --progress")
	}
	pr.ProgressTimestamp = o.progressTimestamp
	if s := o.seed; s != "" && s != "time" && s != "rand" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("unrecognized random seed option %q: expecting an unsigned integer, \"time\" or \"rand\"", s)
		}
		spec.Seed = engine.Seed{Value: seed, Fixed: true}
	}
	return nil
}

// pgbenchDSN builds the target from pgbench's connection options: -h, -p, -U and a
// database name that may be a connection string, whose settings then win, as
// libpq expands pgbench's dbname after the others.
func pgbenchDSN(o *pgbenchOptions) (string, error) {
	var kv []string
	for _, p := range []struct{ key, value string }{{"host", o.host}, {"port", o.port}, {"user", o.user}} {
		if p.value != "" {
			kv = append(kv, p.key+"="+quoteConninfo(p.value))
		}
	}
	db := o.dbname
	switch {
	case strings.HasPrefix(db, "postgres://"), strings.HasPrefix(db, "postgresql://"):
		if len(kv) > 0 {
			return "", errors.New("give the host, port and user inside the connection URI, not with -h, -p or -U beside it")
		}
		return db, nil
	case strings.Contains(db, "="):
		kv = append(kv, db)
	case db != "":
		kv = append(kv, "dbname="+quoteConninfo(db))
	}
	return strings.Join(kv, " "), nil
}

// quoteConninfo quotes a value for a key=value connection string.
func quoteConninfo(v string) string {
	if v != "" && !strings.ContainsAny(v, " '\\\t\n") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// vacuumLikePgbench does what pgbench does before a run without -n: vacuum the
// branches and tellers and empty the history, and with -v the accounts too,
// reporting errors and going on.
func vacuumLikePgbench(ctx context.Context, env *Env, t *target.Target, accounts bool) {
	fmt.Fprint(env.Stderr, "starting vacuum...")
	conn, err := t.Connect(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "\n%v (ignoring this error and continuing anyway)\n", err)
		return
	}
	defer conn.Close(context.Background())
	for _, sql := range []string{"vacuum pgbench_branches", "vacuum pgbench_tellers", "truncate pgbench_history"} {
		if _, err := conn.Exec(ctx, sql).ReadAll(); err != nil {
			fmt.Fprintf(env.Stderr, "\n%v (ignoring this error and continuing anyway)\n", err)
		}
	}
	fmt.Fprintln(env.Stderr, "end.")
	if accounts {
		fmt.Fprint(env.Stderr, "starting vacuum pgbench_accounts...")
		if _, err := conn.Exec(ctx, "vacuum analyze pgbench_accounts").ReadAll(); err != nil {
			fmt.Fprintf(env.Stderr, "\n%v (ignoring this error and continuing anyway)\n", err)
		}
		fmt.Fprintln(env.Stderr, "end.")
	}
}
