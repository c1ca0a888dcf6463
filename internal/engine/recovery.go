package engine

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/recovery"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
)

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// faultRun is what a run with faults keeps beside its clients: the schedule that
// does them, a tracker of the transactions around them, and the ledger of
// acknowledged commits.
type faultRun struct {
	sched   faultSchedule
	tracker atomic.Pointer[recovery.Tracker]
	ledger  *recovery.Ledger
	start   time.Time
}

// startFaults starts the ledger beside the clients of a run with faults; the
// schedule begins with the run (onStart).
func (r *running) startFaults(ctx context.Context) error {
	spec := r.spec
	if len(spec.Faults) == 0 {
		return nil
	}
	fr := &faultRun{sched: faultSchedule{faults: spec.Faults, injector: r.env.Injector,
		log: func(format string, args ...any) { fmt.Fprintf(r.env.Log, format+"\n", args...) }}}
	if spec.Local != nil {
		// The server's processes and disk are read where the primary now is.
		// The sampler starts before the faults' schedule begins (onStart).
		fr.sched.moved = func(l sampler.Local) {
			if r.smp != nil {
				fmt.Fprintf(r.env.Log, "fault: sampling the processes of the new primary, in %s\n", l.DataDir)
				r.smp.Follow(l)
			}
		}
	}
	t := spec.Target.WithDatabase(spec.Target.Config.Database)
	t.Config.RuntimeParams["application_name"] = r.appName // the benchmark's session, not another's
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return t.Connect(ctx) }
	var err error
	// Unique to this run whatever store it is in: run ids start again in each.
	token := fmt.Sprintf("%s-%d", r.appName, time.Now().UnixNano())
	if fr.ledger, err = recovery.StartLedger(ctx, connect, token, recovery.DefaultRate); err != nil {
		return err
	}
	r.faults = fr
	return nil
}

// onStart begins the faults' schedule and their tracker as the run begins.
func (fr *faultRun) onStart(spec *Spec) func(time.Time) {
	return func(start time.Time) {
		fr.start = start
		// Each fault is followed to the next, or a little past the window: the
		// clients' last transactions end after it.
		end := start.Add(spec.Warmup + spec.Duration + 30*time.Second)
		var at []time.Time
		for _, f := range spec.Faults {
			at = append(at, start.Add(f.At))
		}
		first, clients, _ := spec.share()
		fr.tracker.Store(recovery.NewTracker(start, at, first+clients, end))
		fr.sched.begin(start)
	}
}

// onTransaction gives each transaction to the tracker, then to next.
func (fr *faultRun) onTransaction(next func(driver.TxEvent)) func(driver.TxEvent) {
	return func(ev driver.TxEvent) {
		if t := fr.tracker.Load(); t != nil {
			t.Add(ev)
		}
		if next != nil {
			next(ev)
		}
	}
}

// onConnectionLost gives the tracker each connection a client lost or was
// refused, as it happens. A connection the client closed itself (connfail.Cause
// "closed") is not a fault's doing.
func (fr *faultRun) onConnectionLost(at time.Time, cause string) {
	if t := fr.tracker.Load(); t != nil && cause != "closed" {
		t.LostConnection(at)
	}
}

// finish ends the schedule and the ledger once the clients have ended, and
// gives what each fault did and cost. Problems reading the ledger are warnings.
func (fr *faultRun) finish(end time.Time, log func(string)) []FaultSummary {
	done := fr.sched.end()
	fr.ledger.Stop()
	// The ledger's commits are told apart by the fault done that lost them, in
	// the order they were done (done is).
	var failures []recovery.Failure
	var owners []int
	for _, d := range done {
		if i := slices.Index(fr.sched.faults, d.Fault); i >= 0 {
			failures = append(failures, recovery.Failure{Began: d.Start, Stopped: d.Server.Stopped})
			owners = append(owners, i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	recks, err := fr.ledger.ReckonFaults(ctx, failures)
	if err != nil {
		log(fmt.Sprintf("the ledger could not be read after the run: %v", err))
	}
	var out []FaultSummary
	t := fr.tracker.Load()
	for i, f := range fr.sched.faults {
		s := FaultSummary{Kind: string(f.Kind), AtS: f.At.Seconds(), Command: RedactCommand(f.Command)}
		if d, ok := doneOf(done, f); ok {
			s.setDone(d, fr.start)
		}
		if t != nil {
			s.setFigures(t.Figures(i, end))
		}
		out = append(out, s)
	}
	if err != nil || len(out) == 0 {
		return out
	}
	if len(owners) == 0 {
		// No fault was done: the run's reckoning, with the last one.
		out[len(out)-1].Ledger = ledgerSummary(recks[0], time.Time{})
		return out
	}
	for k, r := range recks {
		out[owners[k]].Ledger = ledgerSummary(r, failures[k].Stopped)
	}
	return out
}

// doneOf is how fault f was done, when it was.
func doneOf(done []FaultDone, f Fault) (FaultDone, bool) {
	for _, d := range done {
		if d.Fault == f {
			return d, true
		}
	}
	return FaultDone{}, false
}

// commits are the ledger's acknowledged commits, which the server counts too.
func (fr *faultRun) commits() int64 {
	if fr == nil || fr.ledger == nil {
		return 0
	}
	return fr.ledger.Commits()
}

// FaultSummary is one fault of a run: what was done, when, and what it cost.
// Durations are in milliseconds from the fault; -1 is "did not happen".
type FaultSummary struct {
	Kind     string  `json:"kind"`
	AtS      float64 `json:"at_s"`
	Command  string  `json:"command,omitempty"`
	Done     bool    `json:"done"`
	TookMs   float64 `json:"took_ms,omitempty"`
	Output   string  `json:"output,omitempty"`
	ExitCode int     `json:"exit_code,omitempty"`
	Error    string  `json:"error,omitempty"`
	// From the server's log, from the fault: stopped, promoted, ready for writes.
	ServerStoppedMs  *float64 `json:"server_stopped_ms,omitempty"`
	ServerPromotedMs *float64 `json:"server_promoted_ms,omitempty"`
	ServerReadyMs    *float64 `json:"server_ready_ms,omitempty"`
	// From the clients (recovery.Figures).
	FirstFailureMs float64          `json:"first_failure_ms"`
	NoCommitsMs    float64          `json:"no_commits_ms"`
	ResumedMs      float64          `json:"resumed_ms"`
	ClientMedianMs float64          `json:"client_no_commits_median_ms"`
	ClientMaxMs    float64          `json:"client_no_commits_max_ms"`
	RecoveredMs    float64          `json:"recovered_ms"`
	BeforeTPS      float64          `json:"before_tps"`
	Errors         map[string]int64 `json:"errors,omitempty"`
	InDoubt        int64            `json:"in_doubt"`
	Ledger         *LedgerSummary   `json:"ledger,omitempty"`
}

// LedgerSummary is a fault's share of the ledger's reckoning
// (recovery.ReckonFaults): the commits acknowledged since the failure before
// it (the last fault's share runs to the run's end), and those it lost.
type LedgerSummary struct {
	Acknowledged int64 `json:"acknowledged"`
	Lost         int64 `json:"lost"`
	// RPOMs is the recovery point, the window of acknowledged work lost: from
	// the acknowledgement of the earliest lost commit to the failure (when the
	// primary was taken away, for a fault pgbakeoff did; else the last commit
	// the ledger saw acknowledged before its session was lost), and never less
	// than the ledger's interval between commits (20 ms). 0 when none was lost.
	RPOMs   float64 `json:"rpo_ms"`
	InDoubt int64   `json:"in_doubt"`
	Unknown int64   `json:"unknown"`
}

// ledgerSummary is a fault's share of the ledger, with its RPO to stopped, the
// instant the fault took the primary away (zero when not known).
func ledgerSummary(r recovery.Reckoning, stopped time.Time) *LedgerSummary {
	var failed []time.Time
	if !stopped.IsZero() {
		failed = append(failed, stopped)
	}
	return &LedgerSummary{Acknowledged: r.Acknowledged, Lost: r.Lost, RPOMs: ms(r.RPO(failed...)), InDoubt: r.InDoubt, Unknown: r.Unknown}
}

func (s *FaultSummary) setDone(d FaultDone, start time.Time) {
	at := start.Add(d.At)
	s.Done, s.TookMs, s.Output, s.ExitCode, s.Error = true, ms(d.End.Sub(d.Start)), RedactCommand(d.Output), d.ExitCode, RedactCommand(d.Err)
	since := func(t time.Time) *float64 {
		if t.IsZero() {
			return nil
		}
		v := ms(t.Sub(at))
		return &v
	}
	s.ServerStoppedMs, s.ServerPromotedMs, s.ServerReadyMs = since(d.Server.Stopped), since(d.Server.Promoted), since(d.Server.Ready)
}

func (s *FaultSummary) setFigures(f recovery.Figures) {
	dur := func(d time.Duration) float64 {
		if d < 0 {
			return -1
		}
		return ms(d)
	}
	s.FirstFailureMs, s.NoCommitsMs, s.RecoveredMs, s.ResumedMs = dur(f.FirstFailure), dur(f.NoCommits), dur(f.Recovered), dur(f.Resumed)
	s.ClientMedianMs, s.ClientMaxMs = dur(f.ClientMedian), dur(f.ClientMax)
	s.BeforeTPS, s.Errors, s.InDoubt = f.Before, f.Errors, f.InDoubt
}

// writeRecovery writes each fault done during the run and what it cost: when
// it was done, what the server did, the time without commits, the way back to
// the throughput before it, and what the ledger found.
func (s *Summary) writeRecovery(w io.Writer) {
	for i, f := range s.Faults {
		fmt.Fprintf(w, "fault %d: %s at %.1f s", i+1, f.Kind, f.AtS)
		switch {
		case !f.Done:
			fmt.Fprintln(w, ": not done, the run ended first")
			continue
		case f.Error != "":
			fmt.Fprintf(w, ", took %s, failed: %s\n", msText(f.TookMs), f.Error)
		default:
			fmt.Fprintf(w, ", took %s\n", msText(f.TookMs))
		}
		if f.ServerReadyMs != nil {
			fmt.Fprintf(w, "  server: ready for writes after %s", msText(*f.ServerReadyMs))
			if f.ServerPromotedMs != nil {
				fmt.Fprintf(w, " (a standby promoted after %s)", msText(*f.ServerPromotedMs))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  clients: first failure %s, no commits for %s until %s (each client: median %s, longest %s), back to 90%% of %.1f tps after %s\n",
			afterText(f.FirstFailureMs), msText(f.NoCommitsMs), msText(f.ResumedMs), msText(f.ClientMedianMs), msText(f.ClientMaxMs), f.BeforeTPS, msText(f.RecoveredMs))
		if len(f.Errors) > 0 {
			fmt.Fprintf(w, "  errors meanwhile: %s; %d in doubt (lost with their connection, outcome unknown)\n", countsText(f.Errors), f.InDoubt)
		}
		if l := f.Ledger; l != nil {
			lost := "none lost"
			if l.Lost > 0 {
				lost = fmt.Sprintf("%d LOST, RPO %s (from the earliest one's acknowledgement to the failure)", l.Lost, msText(l.RPOMs))
			}
			fmt.Fprintf(w, "  ledger: %d commits acknowledged, %s; of those in flight, %d were committed, %d not\n",
				l.Acknowledged, lost, l.InDoubt, l.Unknown)
		}
	}
}

// afterText is "after" a time in milliseconds, or "none" for -1.
func afterText(v float64) string {
	if v < 0 {
		return "none"
	}
	return "after " + msText(v)
}

// msText is a time in milliseconds for people; -1 is "never".
func msText(v float64) string {
	switch {
	case v < 0:
		return "never"
	case v >= 10000:
		return fmt.Sprintf("%.1f s", v/1000)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// countsText is counts by key, most first: "57P01 x12, 08006 x3".
func countsText(m map[string]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
