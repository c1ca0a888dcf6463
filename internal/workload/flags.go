package workload

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/spf13/pflag"
)

// RunFlags is a run's spec bound to flags: the workload's own options and the
// common ones, at engine.NewSpec's defaults and then the workload's. The command
// line and study files both set them, so a study's run: keys are exactly
// `run <kind>`'s options.
type RunFlags struct {
	Spec engine.Spec
	// Flags the run's spec does not hold: the target's DSN and --json.
	DSN    string
	JSON   bool
	labels []string
	fs     *pflag.FlagSet
}

// BindRun adds a run of w's flags to fs.
func BindRun(w Workload, fs *pflag.FlagSet) *RunFlags {
	f := &RunFlags{Spec: engine.NewSpec(), fs: fs}
	f.Spec.Workload = w.NewRun()
	if o, ok := f.Spec.Workload.(Options); ok {
		o.Flags(fs, &f.Spec)
	}
	s := &f.Spec
	fs.StringVar(&f.DSN, "dsn", "", "target: libpq URI or key=value DSN (default: PG* environment variables)")
	fs.IntVarP(&s.Clients, "clients", "c", s.Clients, "concurrent clients, one connection each")
	fs.VarP((*jobsValue)(&s.Jobs), "jobs", "j", "event loops (client threads) the clients share, as pgbench -j; auto starts with one and adds one while every loop is more than 70% busy, up to the cores")
	def := ""
	if _, ok := f.Spec.Workload.(ThreadChooser); ok {
		def = "; default: on for scripts that only read with at most four clients a core, else off"
	}
	fs.BoolVar(&s.ThreadPerClient, "thread-per-client", false, fmt.Sprintf("give each client its own thread, waiting in the kernel for its answers, as sysbench does: no CPU left idle between answers, more CPU per statement (up to %d clients%s)", driver.MaxThreadClients, def))
	DurationVarP(fs, &s.Warmup, "warmup", "", s.Warmup, "time to run before measuring (not counted)")
	DurationVarP(fs, &s.Duration, "duration", "T", s.Duration, "measurement window: seconds (60) or a duration (90s, 5m)")
	fs.IntVarP(&s.Transactions, "transactions", "t", 0, "transactions per client, instead of --duration")
	DurationVarP(fs, &s.Progress, "progress", "P", 0, "print a progress line this often (e.g. 5s)")
	fs.IntVar(&s.MaxTries, "max-tries", s.MaxTries, "tries per transaction on serialization failure or deadlock")
	fs.BoolVar(&s.ExitOnAbort, "exit-on-abort", false, "end the run when a client stops on a script error (else the others go on)")
	fs.BoolVarP(&s.ConnectPerTx, "connect", "C", false, "open a new connection for each transaction, as pgbench -C: measures what connecting costs")
	fs.Float64VarP(&s.Rate, "rate", "R", 0, "open loop: this many transactions a second in all, arriving at random (Poisson), latency counted from each arrival (0: each client runs flat out)")
	DurationVarP(fs, &s.LatencyLimit, "latency-limit", "L", 0, "count transactions that end later than this after their arrival; with --rate, skip those that cannot begin within it")
	fs.Uint64Var(&s.Seed, "seed", 0, "random seed (default: from the clock)")
	fs.BoolVar(&f.JSON, "json", false, "print the summary as one JSON object")
	fs.StringArrayVar(&f.labels, "label", nil, "label key=value stored with the run (repeatable)")
	DurationVarP(fs, &s.OutageTimeout, "outage-timeout", "", s.OutageTimeout, "end the run, marked incomplete, when no client has had a connection this long (0: never)")
	DurationVarP(fs, &s.TxTimeout, "tx-timeout", "", s.TxTimeout, "abandon a transaction (and its connection) after this long: a stalled network (0: never)")
	DurationVarP(fs, &s.ConnectTimeout, "connect-timeout", "", s.ConnectTimeout, "give up one connection attempt after this long")
	fs.BoolVar(&s.ResolveOnce, "resolve-once", false, "resolve the host once at the start and connect every client to that address")
	fs.BoolVar(&s.Anonymize, "anonymize", false, "leave this machine's hostname out of the machine recorded with the run")
	return f
}

// Settle finishes the spec once every flag is set: it reads the labels and,
// unless --thread-per-client was given, gives each client a thread when the
// workload prefers it and the clients are few: at most ThreadClients. A thread per
// client pays for transactions that only read and few clients; where they write,
// each commit waits for its WAL flush, and beyond a few clients a core, event
// loops were faster (docs/performance.md).
func (f *RunFlags) Settle() error {
	labels, err := ParseLabels(f.labels)
	if err != nil {
		return err
	}
	f.Spec.Labels = labels
	f.Spec.SeedGiven = f.fs.Changed("seed")
	if !f.fs.Changed("thread-per-client") {
		tc, ok := f.Spec.Workload.(ThreadChooser)
		f.Spec.ThreadPerClient = ok && tc.ThreadPerClient() && f.Spec.Clients <= ThreadClients()
	}
	return nil
}

// ThreadClients is how many clients at most a workload that prefers a thread per
// client gets one by default: four a core.
func ThreadClients() int { return min(driver.MaxThreadClients, 4*runtime.NumCPU()) }

// ParseLabels reads --label key=value flags.
func ParseLabels(in []string) (map[string]string, error) {
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

// duration is a time.Duration flag that also takes a plain number of seconds, as
// pgbench's -T 60 and -P 5 do, and refuses durations over engine.MaxDuration.
type duration struct{ d *time.Duration }

// DurationVarP defines a duration flag; every command's durations are one.
func DurationVarP(fs *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	fs.VarP(duration{p}, name, short, usage)
}

func (v duration) Set(s string) error {
	d, err := engine.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// String is "0" for no time, so that help leaves a zero default out.
func (v duration) String() string {
	if v.d == nil || *v.d == 0 {
		return "0"
	}
	return v.d.String()
}

func (v duration) Type() string { return "duration" }

// jobsValue is --jobs: a number of event loops, or auto (0).
type jobsValue int

func (j *jobsValue) String() string {
	if *j == 0 {
		return "auto"
	}
	return strconv.Itoa(int(*j))
}

func (j *jobsValue) Set(v string) error {
	if v == "auto" {
		*j = 0
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("use auto or a number of event loops from 1, not %q", v)
	}
	*j = jobsValue(n)
	return nil
}

func (j *jobsValue) Type() string { return "auto|N" }
