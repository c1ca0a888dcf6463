package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/gate"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	"github.com/spf13/pflag"
)

// runFlags are a run command's flags: the workload's own options, the common
// settings (engine.Settings) and the flags of the command line alone: the
// target, --json, --label and --progress.
type runFlags struct {
	spec     engine.Spec
	dsn      string
	json     bool
	labels   []string
	progress time.Duration
	gates    []gate.Gate
}

// bindRun adds the flags of a run of w to fs, at the workload's defaults.
func bindRun(w workload.Workload, fs *pflag.FlagSet) *runFlags {
	f := &runFlags{spec: engine.NewSpec()}
	f.spec.Workload = w.NewRun()
	f.spec.Settings = workload.Settings(f.spec.Workload)
	if o, ok := f.spec.Workload.(workload.Options); ok {
		o.Flags(fs)
	}
	fs.StringVar(&f.dsn, "dsn", "", "target: libpq URI or key=value DSN (default: PG* environment variables)")
	_, chooses := f.spec.Workload.(engine.ThreadChooser)
	bindSettings(fs, &f.spec.Settings, chooses)
	fs.Var(faultsValue{&f.spec.Faults}, "fault", "do a fault during the run and measure the recovery, as at=60s,kind=K (from the run's start): crash, restart, failover or switchover of a server pgbakeoff runs, or kind=command,command=... for any target (repeatable)")
	durationVar(fs, &f.progress, "progress", "P", 0, "print a progress line this often (e.g. 5s)")
	fs.BoolVar(&f.json, "json", false, "print the summary as one JSON object")
	fs.StringArrayVar(&f.labels, "label", nil, "label key=value stored with the run (repeatable)")
	fs.Var(gatesValue{&f.gates}, "fail-if", "exit with code 3 when the run misses this, as p99<20ms, tps>1000, errors<0.1%, nopm>50000 (repeatable); the run is stored regardless")
	return f
}

// gatesValue is --fail-if: each adds a gate.
type gatesValue struct{ gates *[]gate.Gate }

func (v gatesValue) Set(s string) error {
	g, err := gate.Parse(s)
	if err != nil {
		return err
	}
	*v.gates = append(*v.gates, g)
	return nil
}

func (v gatesValue) String() string {
	var parts []string
	for _, g := range *v.gates {
		parts = append(parts, g.Text)
	}
	return strings.Join(parts, ", ")
}

func (v gatesValue) Type() string { return "gate" }

// judgeGates prints each gate's verdict on the run to w, and fails with
// ExitGate when one failed. A run that did not complete is not judged: its
// own error says why.
func judgeGates(w io.Writer, gates []gate.Gate, sum *engine.Summary) error {
	if len(gates) == 0 {
		return nil
	}
	results, passed := gate.Judge(gates, sum)
	for _, r := range results {
		fmt.Fprintln(w, r)
	}
	if passed {
		return nil
	}
	return exitError{fmt.Errorf("run %d failed %s of its gates", sum.RunID, failedCount(results)), ExitGate}
}

// failedCount is how many gates failed, in words: "1", "2 of 3".
func failedCount(results []gate.Result) string {
	n := 0
	for _, r := range results {
		if !r.Pass {
			n++
		}
	}
	if n == len(results) {
		return fmt.Sprintf("all %d", n)
	}
	return fmt.Sprintf("%d of %d", n, len(results))
}

// bindSettings binds the common run settings to their flags. chooses: the
// workload picks a thread per client itself unless told (engine.ThreadChooser).
func bindSettings(fs *pflag.FlagSet, s *engine.Settings, chooses bool) {
	fs.IntVarP(&s.Clients, "clients", "c", s.Clients, "concurrent clients, one connection each")
	fs.VarP((*engine.Jobs)(&s.Jobs), "jobs", "j", "event loops (client threads) the clients share, as pgbench -j; auto starts with one and adds one while every loop is more than 70% busy, up to the cores")
	def := "off"
	if chooses {
		def = "on for scripts that only read with at most four clients a core, else off"
	}
	fs.Var(&s.ThreadPerClient, "thread-per-client", fmt.Sprintf("give each client its own thread, waiting in the kernel for its answers, as sysbench does: no CPU left idle between answers, more CPU per statement (up to %d clients; auto: %s)", driver.MaxThreadClients, def))
	fs.Lookup("thread-per-client").NoOptDefVal = "on"
	durationVar(fs, &s.Warmup, "warmup", "", s.Warmup, "time to run before measuring (not counted)")
	durationVar(fs, &s.Duration, "duration", "T", s.Duration, "measurement window: seconds (60) or a duration (90s, 5m)")
	fs.IntVarP(&s.Transactions, "transactions", "t", 0, "transactions per client, instead of --duration")
	fs.IntVar(&s.MaxTries, "max-tries", s.MaxTries, "tries per transaction on serialization failure or deadlock")
	fs.BoolVar(&s.ExitOnAbort, "exit-on-abort", false, "end the run when a client stops on a script error (else the others go on)")
	fs.BoolVarP(&s.ConnectPerTx, "connect", "C", false, "open a new connection for each transaction, as pgbench -C: measures what connecting costs")
	fs.Float64VarP(&s.Rate, "rate", "R", 0, "open loop: this many transactions a second in all, arriving at random (Poisson), latency counted from each arrival (0: each client runs flat out)")
	durationVar(fs, &s.LatencyLimit, "latency-limit", "L", 0, "count transactions that end later than this after their arrival; with --rate, skip those that cannot begin within it")
	fs.Var(&s.Seed, "seed", "random seed: a number, or auto to draw one from the clock")
	durationVar(fs, &s.OutageTimeout, "outage-timeout", "", s.OutageTimeout, "end the run, marked incomplete, when no client has had a connection this long (0: never)")
	durationVar(fs, &s.TxTimeout, "tx-timeout", "", s.TxTimeout, "abandon a transaction (and its connection) after this long: a stalled network (0: never)")
	durationVar(fs, &s.ConnectTimeout, "connect-timeout", "", s.ConnectTimeout, "give up one connection attempt after this long")
	fs.BoolVar(&s.ResolveOnce, "resolve-once", false, "resolve the host once at the start and connect every client to that address")
	fs.BoolVar(&s.Anonymize, "anonymize", false, "leave this machine's hostname out of the machine recorded with the run")
}

// settle finishes the spec once every flag is set: the labels.
func (f *runFlags) settle() error {
	if f.progress < 0 {
		return fmt.Errorf("--progress must not be negative, got %s", f.progress)
	}
	labels, err := parseLabels(f.labels)
	if err != nil {
		return err
	}
	f.spec.Labels = labels
	return nil
}

// parseLabels reads --label key=value flags.
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

// durationVar defines a duration flag, which also takes a plain number of
// seconds as pgbench's -T 60 does; every command's durations are one.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	fs.VarP(engine.DurationValue(p), name, short, usage)
}

// flagged is err with the field a FieldError names spelled as its flag:
// max_tries becomes --max-tries.
func flagged(err error) error {
	fe, ok := errors.AsType[*engine.FieldError](err)
	if !ok {
		return err
	}
	flag := "--" + strings.ReplaceAll(fe.Field, "_", "-")
	return errors.New(strings.Replace(err.Error(), fe.Error(), fe.Named(flag), 1))
}

// faultsValue is --fault: each adds a fault (engine.ParseFault).
type faultsValue struct{ faults *[]engine.Fault }

func (v faultsValue) Set(s string) error {
	f, err := engine.ParseFault(s)
	if err != nil {
		return err
	}
	*v.faults = append(*v.faults, f)
	return nil
}

func (v faultsValue) String() string {
	if v.faults == nil {
		return ""
	}
	var parts []string
	for _, f := range *v.faults {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

func (v faultsValue) Type() string { return "at=T,kind=K" }
