package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
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

// pgbenchOptions are pgbench's options for running, as pgbench names them.
type pgbenchOptions struct {
	fs                            *pflag.FlagSet
	clients, jobs, tx, time, prog string
	scale, protocol, seed, tries  string
	host, port, user, dbname      string
	results                       string
	noVacuum                      bool
	exitOnAbort, verbose, detail  bool
	perCommand, log, connect      bool
	logPrefix, sampling, every    string
	rate, limit                   string
	defines                       []string
	// scripts are -f, -b, -S and -N in the order given, which numbers them:
	// the run pgbench flag and its value.
	scripts [][2]string
}

// unsupportedPgbench are pgbench options `pgbakeoff pgbench` does not take yet;
// they are refused by name rather than ignored, since each changes what is measured
// or reported.
var unsupportedPgbench = []struct{ long, short string }{
	{"vacuum-all", "v"}, {"progress-timestamp", ""},
	{"initialize", "i"}, {"init-steps", "I"}, {"fillfactor", "F"}, {"quiet", "q"}, {"foreign-keys", ""},
	{"unlogged-tables", ""}, {"tablespace", ""}, {"index-tablespace", ""}, {"partitions", ""},
	{"partition-method", ""}, {"show-script", ""}, {"debug", ""},
}

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
	fs.StringVarP(&o.scale, "scale", "s", "", "")
	fs.VarP(scriptOpt{o, "builtin", "select-only"}, "select-only", "S", "")
	fs.Lookup("select-only").NoOptDefVal = "true"
	fs.StringVarP(&o.tx, "transactions", "t", "", "")
	fs.StringVarP(&o.time, "time", "T", "", "")
	fs.StringVarP(&o.user, "username", "U", "", "")
	fs.StringVar(&o.seed, "random-seed", "", "")
	fs.StringVarP(&o.rate, "rate", "R", "", "")
	fs.StringVarP(&o.limit, "latency-limit", "L", "", "")
	fs.StringVar(&o.tries, "max-tries", "", "")
	fs.StringVar(&o.results, "results", "", "") // pgbakeoff's own: where the run is stored
	fs.BoolVar(&o.exitOnAbort, "exit-on-abort", false, "")
	fs.BoolVarP(&o.perCommand, "report-per-command", "r", false, "")
	fs.BoolVarP(&o.log, "log", "l", false, "")
	fs.BoolVarP(&o.connect, "connect", "C", false, "")
	fs.StringVar(&o.logPrefix, "log-prefix", "", "")
	fs.StringVar(&o.sampling, "sampling-rate", "", "")
	fs.StringVar(&o.every, "aggregate-interval", "", "")
	// The summary always counts errors by SQLSTATE, with an example of each, and
	// failures by kind: --verbose-errors is what it does anyway.
	fs.BoolVar(&o.verbose, "verbose-errors", false, "")
	fs.BoolVar(&o.detail, "failures-detailed", false, "")
	for _, u := range unsupportedPgbench {
		fs.StringP(u.long, u.short, "", "")
		fs.Lookup(u.long).NoOptDefVal = "true" // takes a value or none, so that it is recognized either way
	}
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

// newPgbenchCmd is `pgbakeoff pgbench`: pgbench's command line for running, for
// shell scripts written around pgbench. The run is stored and summarized as any
// other; the exit code is pgbench's.
func newPgbenchCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pgbench [pgbench options] [dbname]",
		Short: "Run with pgbench's command line and exit codes (a drop-in for pgbench's runs)",
		Example: `  pgbakeoff pgbench -n -c 8 -T 60 -f a.sql@3 -b select-only@1 -h db.example -p 5432 -U bench bench
  pgbakeoff pgbench -c 16 -j 2 -T 300 -M prepared -S "host=db.example dbname=bench"`,
		DisableFlagParsing: true,
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		for _, a := range args {
			if a == "--help" || a == "-?" {
				return cmd.Help()
			}
			if a == "--version" || a == "-V" {
				fmt.Fprintln(env.Stdout, "pgbakeoff pgbench (pgbench 17 compatible)")
				return nil
			}
		}
		results, _ := cmd.Flags().GetString("results")
		return runPgbenchArgs(cmd.Context(), env, args, results)
	}
	return cmd
}

func runPgbenchArgs(ctx context.Context, env *Env, args []string, results string) error {
	bad := func(err error) error { return exitError{err, pgbenchBadOptions} }
	o := newPgbenchFlags()
	if err := o.fs.Parse(args); err != nil {
		return bad(fmt.Errorf("%v (try \"pgbakeoff pgbench --help\")", err))
	}
	for _, u := range unsupportedPgbench {
		if o.fs.Changed(u.long) {
			name := "--" + u.long
			if u.short != "" {
				name = "-" + u.short + "/" + name
			}
			return bad(fmt.Errorf("pgbench option %s is not supported by pgbakeoff pgbench; run without it", name))
		}
	}
	rest := o.fs.Args()
	if o.dbname == "" && len(rest) > 0 {
		o.dbname, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return bad(fmt.Errorf("too many command-line arguments (first is %q)", rest[0]))
	}
	if o.tx != "" && o.time != "" {
		return bad(errors.New("specify either a number of transactions (-t) or a duration (-T), not both"))
	}
	if o.results != "" {
		results = o.results
	}
	dsn, err := pgbenchDSN(o)
	if err != nil {
		return bad(err)
	}
	w, _ := workload.Find("pgbench")
	fs := pflag.NewFlagSet("run pgbench", pflag.ContinueOnError)
	f := workload.BindRun(w, fs)
	set := func(name, value string) error {
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("invalid value %q for %s: %v", value, name, err)
		}
		return nil
	}
	if o.protocol == "" {
		o.protocol = "simple" // pgbench's default, unlike pgbakeoff's
	}
	var errs []error
	sets := []struct{ flag, value string }{
		{"clients", o.clients}, {"jobs", o.jobs}, {"transactions", o.tx}, {"duration", o.time},
		{"progress", o.prog}, {"scale", o.scale}, {"protocol", o.protocol}, {"max-tries", o.tries},
	}
	if o.tx == "" && o.time == "" {
		sets = append(sets, struct{ flag, value string }{"transactions", "10"}) // pgbench's default
	}
	if o.exitOnAbort {
		sets = append(sets, struct{ flag, value string }{"exit-on-abort", "true"})
	}
	for _, b := range []struct {
		on   bool
		flag string
	}{{o.perCommand, "report-per-command"}, {o.log, "log"}, {o.detail, "failures-detailed"}, {o.connect, "connect"}} {
		if b.on {
			sets = append(sets, struct{ flag, value string }{b.flag, "true"})
		}
	}
	sets = append(sets, []struct{ flag, value string }{
		{"log-prefix", o.logPrefix}, {"sampling-rate", o.sampling}, {"aggregate-interval", o.every}}...)
	if o.rate != "" {
		if r, err := strconv.ParseFloat(o.rate, 64); err != nil || r <= 0 {
			return bad(fmt.Errorf("invalid rate limit: %q: give transactions a second above 0", o.rate))
		}
		sets = append(sets, struct{ flag, value string }{"rate", o.rate})
	}
	if o.limit != "" {
		// pgbench's -L is in milliseconds.
		ms, err := strconv.ParseFloat(o.limit, 64)
		if err != nil || ms <= 0 {
			return bad(fmt.Errorf("invalid latency limit: %q: give milliseconds above 0", o.limit))
		}
		sets = append(sets, struct{ flag, value string }{"latency-limit", time.Duration(ms * float64(time.Millisecond)).String()})
	}
	if s := o.seed; s != "" && s != "time" && s != "rand" {
		if _, err := strconv.ParseUint(s, 10, 64); err != nil {
			return bad(fmt.Errorf("unrecognized random seed option %q: expecting an unsigned integer, \"time\" or \"rand\"", s))
		}
		sets = append(sets, struct{ flag, value string }{"seed", s})
	}
	for _, s := range sets {
		if s.value != "" {
			errs = append(errs, set(s.flag, s.value))
		}
	}
	for _, sc := range o.scripts {
		errs = append(errs, set(sc[0], sc[1]))
	}
	for _, v := range o.defines {
		errs = append(errs, set("define", v))
	}
	if err := errors.Join(errs...); err != nil {
		return bad(err)
	}
	f.Spec.In = env.Stdin
	if err := f.Settle(); err != nil {
		return bad(err)
	}
	if err := f.Spec.Validate(); err != nil {
		return bad(err)
	}
	t, err := target.Parse(dsn)
	if err != nil {
		return bad(err)
	}
	ctx, stop := env.Interrupt(ctx)
	defer stop()
	if !o.noVacuum {
		vacuumLikePgbench(ctx, env, t)
	}
	// The run's own lines go to stderr: stdout carries pgbench's report, which
	// scripts written around pgbench read.
	runEnv := *env
	runEnv.Stdout = env.Stderr
	sum, err := runSpec(ctx, &runEnv, f.Spec, t, results)
	if sum != nil {
		writePgbenchReport(env.Stdout, sum, &f.Spec, o)
		sum.WriteText(env.Stderr)       // pgbakeoff's summary, validity included
		shown := target.Redact(results) // a PostgreSQL store's DSN may carry a password
		fmt.Fprintf(env.Stderr, "pgbakeoff: run %d stored in %s: pgbakeoff show %d --results %s\n", sum.RunID, shown, sum.RunID, shown)
	}
	if err != nil {
		if sum == nil && !errors.Is(err, ErrInterrupted) {
			return exitError{err, pgbenchBadOptions} // nothing ran: the setup failed
		}
		return err
	}
	for _, fl := range sum.Flags {
		if fl.Name == "aborted" {
			return exitError{errors.New("run was aborted; the above results are incomplete: " + fl.Reason), pgbenchRunErrors}
		}
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
// branches and tellers and empty the history, reporting errors and going on.
func vacuumLikePgbench(ctx context.Context, env *Env, t *target.Target) {
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
}

// writePgbenchReport prints the run as pgbench's report does, line for line where
// pgbakeoff has the figure, so that scripts reading pgbench's output read this.
func writePgbenchReport(w io.Writer, sum *engine.Summary, spec *engine.Spec, o *pgbenchOptions) {
	kind := "multiple scripts"
	if len(sum.Scripts) == 1 {
		kind = sum.Scripts[0].Name
	}
	fmt.Fprintf(w, "transaction type: %s\n", kind)
	fmt.Fprintf(w, "scaling factor: %d\n", sum.Scale)
	fmt.Fprintf(w, "query mode: %s\n", sum.Protocol)
	fmt.Fprintf(w, "number of clients: %d\n", sum.Clients)
	fmt.Fprintf(w, "number of threads: %d\n", max(1, min(spec.Jobs, spec.Clients)))
	if spec.MaxTries != 0 {
		fmt.Fprintf(w, "maximum number of tries: %d\n", spec.MaxTries)
	}
	if spec.Transactions > 0 {
		fmt.Fprintf(w, "number of transactions per client: %d\n", spec.Transactions)
		fmt.Fprintf(w, "number of transactions actually processed: %d/%d\n", sum.Transactions, spec.Transactions*spec.Clients)
	} else {
		fmt.Fprintf(w, "duration: %.0f s\n", sum.DurationS)
		fmt.Fprintf(w, "number of transactions actually processed: %d\n", sum.Transactions)
	}
	all := sum.Transactions + sum.Failed
	fmt.Fprintf(w, "number of failed transactions: %d (%s)\n", sum.Failed, pct(sum.Failed, all))
	if spec.MaxTries != 1 {
		fmt.Fprintf(w, "number of transactions retried: %d (%s)\n", sum.Retried, pct(sum.Retried, all))
		fmt.Fprintf(w, "total number of retries: %d\n", sum.Retries)
	}
	var skipped, late int64
	if r := sum.Rate; r != nil {
		skipped, late = r.Skipped, r.Late
	}
	if sum.Transactions+sum.Failed+skipped == 0 {
		return // pgbench's report stops here too
	}
	if spec.Rate > 0 && spec.LatencyLimit > 0 {
		fmt.Fprintf(w, "number of transactions skipped: %d (%s)\n", skipped, pct(skipped, all+skipped))
	}
	if spec.LatencyLimit > 0 {
		fmt.Fprintf(w, "number of transactions above the %.1f ms latency limit: %d/%d (%s)\n",
			float64(spec.LatencyLimit)/float64(time.Millisecond), late, sum.Transactions, pct(late, sum.Transactions))
	}
	fmt.Fprintf(w, "latency average = %.3f ms\n", sum.LatencyMs.Avg)
	if spec.Progress > 0 || spec.Rate > 0 || spec.LatencyLimit > 0 {
		fmt.Fprintf(w, "latency stddev = %.3f ms\n", sum.LatencyMs.Stddev)
	}
	if r := sum.Rate; r != nil && spec.Rate > 0 {
		fmt.Fprintf(w, "rate limit schedule lag: avg %.3f (max %.3f) ms\n", r.LagAvgMs, r.LagMaxMs)
	}
	if spec.ConnectPerTx {
		fmt.Fprintf(w, "average connection time = %.3f ms\n", sum.ConnectAvgMs)
		fmt.Fprintf(w, "tps = %f (including reconnection times)\n", sum.TPS)
	} else {
		fmt.Fprintf(w, "tps = %f (without initial connection time)\n", sum.TPS)
	}
	statements, _ := sum.Figures.(*pgbenchw.Figures)
	if len(sum.Scripts) > 1 {
		weights := 0
		for _, sc := range sum.Scripts {
			weights += sc.Weight
		}
		for i, sc := range sum.Scripts {
			fmt.Fprintf(w, "SQL script %d: %s\n", i+1, sc.Name)
			fmt.Fprintf(w, " - weight: %d (targets %.1f%% of total)\n", sc.Weight, 100*float64(sc.Weight)/float64(max(weights, 1)))
			fmt.Fprintf(w, " - %d transactions (%.1f%% of total, tps = %f)\n", sc.Transactions, 100*float64(sc.Transactions)/float64(max(sum.Transactions, 1)), sc.TPS)
			fmt.Fprintf(w, " - number of failed transactions: %d (%s)\n", sc.Failed, pct(sc.Failed, sc.Transactions+sc.Failed))
			if sc.Transactions > 0 {
				fmt.Fprintf(w, " - latency average = %.3f ms\n", sc.LatencyMs.Avg)
				fmt.Fprintf(w, " - latency stddev = %.3f ms\n", sc.LatencyMs.Stddev)
			}
			writeStatements(w, statements, i, " - ")
		}
	} else if len(sum.Scripts) == 1 {
		writeStatements(w, statements, 0, "")
	}
}

// writeStatements is -r's table for one script.
func writeStatements(w io.Writer, f *pgbenchw.Figures, script int, prefix string) {
	if f == nil {
		return
	}
	header := false
	for _, st := range f.Statements {
		if st.Index != script {
			continue
		}
		if !header {
			fmt.Fprintf(w, "%sstatement latencies in milliseconds and failures:\n", prefix)
			header = true
		}
		fmt.Fprintf(w, "   %11.3f  %10d  %s\n", st.AvgMs, st.Failures, st.Text)
	}
}

// pct is pgbench's "%.3f%%" of part in whole, NaN for nothing.
func pct(part, whole int64) string {
	if whole == 0 {
		return "NaN%"
	}
	return fmt.Sprintf("%.3f%%", 100*float64(part)/float64(whole))
}
