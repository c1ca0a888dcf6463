package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// Validity rules: a run whose figures are not to be trusted says so, with the
// reason, in its summary and in the results store.
const (
	flagRestarted  = "restarted"  // the server restarted during the run
	flagFailover   = "failover"   // the address behind the target changed
	flagClientCPU  = "client_cpu" // the client, not the server, was the limit
	flagErrors     = "errors"     // more than maxErrorRate of transactions failed
	flagDip        = "dip"        // some interval fell below half the median
	flagCheckpoint = "checkpoint" // a checkpoint fell inside the window: a note
	flagAutovacuum = "autovacuum" // autovacuum finished work inside the window: a note
	flagIncomplete = "incomplete" // the run ended early: the server stayed away
	flagAborted    = "aborted"    // clients stopped on script errors
	// Other sessions worked in the benchmark's database: the server counted more
	// commits than the clients made, or pg_stat_activity showed them active.
	flagContaminated = "contaminated"
	flagCommits      = "commits"        // the server's counters disagree otherwise: a note
	flagOthers       = "other_sessions" // other sessions seen at work now and then: a note
	flagRate         = "rate"           // an open-loop run's target did not keep up with the rate
	flagFault        = "fault"          // faults were done on purpose: a recovery run
)

// maxBehind is the share of an open-loop run's arrivals that may go unserved (not
// begun by the window's end, or skipped for the latency limit) before the run is
// said not to have held its rate.
const maxBehind = 0.01

// maxQueued is the share of a window's arrivals that may still wait, unbegun, as it
// closes: past it a short window's queue says the rate was not carried, however the
// lag moved (2 s at 116 tx/s where 94 were done leaves 44 waiting, a fifth).
const maxQueued = 0.1

// Commit counts agree when they are this close: a share of the clients' and a few
// transactions, besides autovacuum's (autovacuumCommits).
const (
	commitsTolerance    = 0.01
	commitsToleranceAbs = 10
)

// autovacuumCommits is what autovacuum may add to the database's commits over a
// span: a worker's visit to the database commits about twice (its start, the
// list of tables), and each vacuum or analyze it makes about twice more; one
// more visit for the span's edges, and one for a slack.
func autovacuumCommits(span, naptime time.Duration, work int) float64 {
	n := 2 * float64(work)
	if naptime > 0 {
		n += 3 * (span.Seconds()/naptime.Seconds() + 2)
	}
	return n
}

// maxOtherSessions is the average number of other active sessions in the
// benchmark's database above which their work makes the run invalid: a monitoring
// query now and then stays below it.
const maxOtherSessions = 0.05

// maxErrorRate is the share of failed transactions above which a run is invalid.
const maxErrorRate = 0.01

// Flag is a store.Flag as the summary shows it.
type Flag struct {
	Name    string `json:"name"`
	Invalid bool   `json:"invalid"`
	Reason  string `json:"reason"`
}

// evidence is what validity is judged from, gathered while the run went on.
type evidence struct {
	faults            []string // the faults done on purpose (Spec.Faults)
	committed, failed int64
	incomplete        string // why the run ended early; "" when it did not
	aborted, clients  int    // clients stopped on a script error (or a lost connection, as pgbench), of all
	abort             string // the first such error
	clientSaturated   bool
	clientCores       float64
	// restarts tell that the server restarted or crashed and recovered during
	// the run, each for people (see restartEvidence).
	restarts []string
	// statsReset: the database's statistics were reset during the run with no
	// sign of a restart or crash, by pg_stat_reset(); resetAt is when.
	statsReset     bool
	resetAt        time.Time
	addressChanged string          // "" when the address stayed the same
	checkpoints    int             // completed inside the measured window
	checkpointsAt  []time.Duration // when the samples that saw them ended, from the window's start
	autovacuums    int             // vacuums by autovacuum of the database's tables ended inside the window
	autoanalyzes   int             // analyzes by autovacuum ended inside the window
	// Autovacuum over the whole run: the vacuums and analyzes it finished, how long
	// the commits were counted, and how often it visits each database (0: off).
	autovacuumWork int
	span, naptime  time.Duration
	// The clients' commits and the server's over the same span; commitsRead is false
	// when the server's could not be read, unsettled when they still moved after the
	// benchmark's sessions had ended.
	clientCommits, serverCommits int64
	commitsRead, unsettled       bool
	// others is the average number of other client sessions active in the
	// database during the window, seen those of them seen most often.
	others float64
	seen   []string
	// rates are the measured window's whole intervals: transactions per second and
	// when each ended, relative to the window's start.
	rates []rate
	// An open-loop run's requested rate, what the driver counted, and the rate
	// of transactions done.
	rate        float64
	rateFigures driver.RateFigures
	doneTPS     float64
	// A shard's place in its whole run, and its clock against the server's.
	shard       Shard
	shardGroup  string
	clockOffset time.Duration
}

type rate struct {
	at  time.Duration
	tps float64
	lag time.Duration // the mean schedule lag (open-loop runs)
}

// judge applies the validity rules.
func judge(e evidence) []Flag {
	var flags []Flag
	if len(e.faults) > 0 {
		flags = append(flags, Flag{flagFault, true, "faults were done during the run (" + strings.Join(e.faults, "; ") +
			"): it measures recovery, not a steady state, and is kept out of comparisons of throughput"})
	}
	if e.aborted > 0 {
		flags = append(flags, Flag{flagAborted, true, fmt.Sprintf("%d of %d clients were aborted, the first: %s", e.aborted, e.clients, e.abort)})
	}
	if e.incomplete != "" {
		flags = append(flags, Flag{flagIncomplete, true, "the run ended early: " + e.incomplete})
	}
	if len(e.restarts) > 0 {
		flags = append(flags, Flag{flagRestarted, true, "the server restarted or crashed and recovered during the run: " + strings.Join(e.restarts, "; ")})
	}
	if e.addressChanged != "" {
		flags = append(flags, Flag{flagFailover, true, "the server behind the target changed during the run: " + e.addressChanged})
	}
	flags = append(flags, judgeCommits(e)...)
	if e.clientSaturated {
		flags = append(flags, Flag{flagClientCPU, true, fmt.Sprintf("the client was CPU-bound (%.2f cores busy): it, not the server, set the pace", e.clientCores)})
	}
	if all := e.committed + e.failed; all > 0 && float64(e.failed) > maxErrorRate*float64(all) {
		flags = append(flags, Flag{flagErrors, true, fmt.Sprintf("%.1f%% of transactions failed (%d of %d), more than %.0f%%",
			100*float64(e.failed)/float64(all), e.failed, all, 100*maxErrorRate)})
	}
	if stalled(e.rates) {
		flags = append(flags, Flag{flagDip, true, "no transaction completed for more than half of the measured window"})
	} else if r := buckets(e.rates); len(r) >= 3 {
		median := medianRate(r)
		low := r[0]
		for _, x := range r {
			if x.tps < low.tps {
				low = x
			}
		}
		if low.tps < median/2 {
			reason := fmt.Sprintf("throughput fell to %.0f tps in the interval ending at %.0f s, below half the run's median of %.0f tps",
				low.tps, low.at.Seconds(), median)
			// A checkpoint's sync stalls the server: that is how it behaves, and a
			// checkpoint in the window is a note, not a reason to distrust the run.
			if nearCheckpoint(low, bucketWidth(e.rates), e.checkpointsAt) {
				flags = append(flags, Flag{flagDip, false, reason + ", as a checkpoint completed"})
			} else {
				flags = append(flags, Flag{flagDip, true, reason})
			}
		}
	}
	if f := judgeRate(e); f != nil {
		flags = append(flags, *f)
	}
	flags = append(flags, judgeShard(e)...)
	if e.checkpoints > 0 {
		flags = append(flags, Flag{flagCheckpoint, false, fmt.Sprintf("%d checkpoint(s) during the measured window", e.checkpoints)})
	}
	// Autovacuum's timing is the server's, not the workload's: two runs of the
	// same workload differ by whether it struck inside their windows.
	if e.autovacuums > 0 || e.autoanalyzes > 0 {
		flags = append(flags, Flag{flagAutovacuum, false, fmt.Sprintf("autovacuum finished %d vacuum(s) and %d analyze(s) of the database's tables during the measured window",
			e.autovacuums, e.autoanalyzes)})
	}
	return flags
}

// judgeRate flags an open-loop run whose target did not keep up: more than
// maxBehind of the window's arrivals were skipped, or were not begun when it
// closed while the queue held a second of arrivals, or a quarter of one and was
// growing (the schedule lag at the end more than twice that at the start) or more
// than maxQueued of the window's arrivals. A steady queue near capacity leaves some
// arrivals waiting as any window closes; a server that cannot keep up leaves a queue
// that grows until the run ends. Such a run's figures describe an overloaded server,
// not the requested rate.
func judgeRate(e evidence) *Flag {
	f := e.rateFigures
	missed := f.Untaken + f.Skipped
	if e.rate <= 0 || f.Scheduled == 0 || float64(missed) <= maxBehind*float64(f.Scheduled)+1 {
		return nil
	}
	growing := len(e.rates) >= 2 && e.rates[len(e.rates)-1].lag > 2*e.rates[0].lag+10*time.Millisecond
	queued := float64(f.Untaken) >= e.rate ||
		float64(f.Untaken) >= e.rate/4 && (growing || float64(f.Untaken) > maxQueued*float64(f.Scheduled))
	if float64(f.Skipped) <= maxBehind*float64(f.Scheduled) && !queued {
		return nil
	}
	reason := fmt.Sprintf("the target did not keep up with %s tx/s: %.0f tx/s done; of %d transactions due in the window, %d had not begun when it closed and %d were skipped past the latency limit",
		strconv.FormatFloat(e.rate, 'f', -1, 64), e.doneTPS, f.Scheduled, f.Untaken, f.Skipped)
	if r := e.rates; len(r) >= 2 && r[len(r)-1].lag > r[0].lag {
		reason += fmt.Sprintf("; the schedule lag grew from %s to %s", fmtLag(r[0].lag), fmtLag(r[len(r)-1].lag))
	}
	return &Flag{flagRate, true, reason}
}

// fmtLag prints a schedule lag to a sensible precision.
func fmtLag(d time.Duration) string {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond).String()
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

// judgeCommits compares the server's commits with the clients' and looks for
// other sessions' work in the database.
func judgeCommits(e evidence) []Flag {
	var flags []Flag
	if e.statsReset && len(e.restarts) == 0 {
		// The clients' figures stand; only the check of their commits is lost.
		flags = append(flags, Flag{flagCommits, false, fmt.Sprintf(
			"the database's statistics were reset %s (pg_stat_reset()): the server's commits are not known, and the clients' are not checked against them",
			resetWhen(e.resetAt))})
	}
	if e.commitsRead {
		gap := e.serverCommits - e.clientCommits
		tol := max(commitsTolerance*float64(e.clientCommits), commitsToleranceAbs+autovacuumCommits(e.span, e.naptime, e.autovacuumWork))
		pct := 0.0
		if e.clientCommits > 0 {
			pct = 100 * float64(gap) / float64(e.clientCommits)
		}
		switch {
		case float64(gap) > tol:
			flags = append(flags, Flag{flagContaminated, true, fmt.Sprintf(
				"the server counted %d commits in the benchmark's database from the first connect to the last disconnect, %d (%+.1f%%) more than the clients made: other sessions worked in the database during the run",
				e.serverCommits, gap, pct)})
		case float64(-gap) > tol:
			// The server acknowledged every commit the clients count: a lower count is
			// the statistics' shortfall, not lost transactions.
			flags = append(flags, Flag{flagCommits, false, fmt.Sprintf(
				"the server's statistics counted %d commits, %d (%.1f%%) fewer than the clients saw acknowledged: its counters missed some reports; the clients' count stands",
				e.serverCommits, -gap, -pct)})
		case e.unsettled:
			flags = append(flags, Flag{flagCommits, false,
				"the server's counters still moved after the benchmark's sessions had ended: something else was committing in the database"})
		}
	}
	switch {
	case e.others > maxOtherSessions:
		flags = append(flags, Flag{flagContaminated, true, fmt.Sprintf(
			"other sessions were active in the benchmark's database during the window (%.2f on average: %s): their work competed with the benchmark's",
			e.others, strings.Join(e.seen, ", "))})
	case e.others > 0:
		flags = append(flags, Flag{flagOthers, false, fmt.Sprintf(
			"other sessions were seen active in the benchmark's database now and then during the window (%.3f on average: %s)",
			e.others, strings.Join(e.seen, ", "))})
	}
	// The store keeps one flag of each name: reasons of the same name are joined.
	return joinFlags(flags)
}

// joinFlags merges flags of the same name into the first, invalid if any was.
func joinFlags(flags []Flag) []Flag {
	var out []Flag
	at := map[string]int{}
	for _, f := range flags {
		i, ok := at[f.Name]
		if !ok {
			at[f.Name] = len(out)
			out = append(out, f)
			continue
		}
		out[i].Invalid = out[i].Invalid || f.Invalid
		out[i].Reason += "; " + f.Reason
	}
	return out
}

func storeFlags(fs []Flag) []store.Flag {
	out := make([]store.Flag, len(fs))
	for i, f := range fs {
		out[i] = store.Flag{Name: f.Name, Invalid: f.Invalid, Reason: f.Reason}
	}
	return out
}

// The dip rule judges throughput over buckets of at least minBucket seconds, and
// enough of them to hold minPerBucket transactions at the median rate: a second of a
// slow workload holds too few to tell a dip from chance, and a one-second stall while
// a checkpoint syncs is how the server behaves, not a broken run; an outage,
// a restart or a failover lasts longer.
const (
	minPerBucket = 20
	minBucket    = 5
)

// buckets merges consecutive one-second rates into those buckets.
func buckets(rates []rate) []rate {
	if len(rates) == 0 {
		return nil
	}
	median := medianRate(rates)
	if median <= 0 {
		return nil
	}
	k := bucketWidth(rates)
	var out []rate
	for i := 0; i+k <= len(rates); i += k {
		sum := 0.0
		for _, r := range rates[i : i+k] {
			sum += r.tps
		}
		out = append(out, rate{at: rates[i+k-1].at, tps: sum / float64(k)})
	}
	return out
}

// stalled reports a window in which most seconds saw no transaction, though some
// did: the median rate is zero, so the dip rule has nothing to halve.
func stalled(rates []rate) bool {
	zero, some := 0, false
	for _, r := range rates {
		if r.tps <= 0 {
			zero++
		} else {
			some = true
		}
	}
	return some && 2*zero > len(rates)
}

func medianRate(rates []rate) float64 {
	tps := make([]float64, len(rates))
	for i, r := range rates {
		tps[i] = r.tps
	}
	return stats.Median(tps)
}

// bucketWidth is how many one-second rates buckets merges.
func bucketWidth(rates []rate) int {
	median := medianRate(rates)
	if median <= 0 {
		return minBucket
	}
	return max(minBucket, int(math.Ceil(minPerBucket/median)))
}

// nearCheckpoint reports whether a checkpoint completed in the bucket ending at
// b.at, or within one bucket after it: the sync that stalls the server comes just
// before the completion the statistics count.
func nearCheckpoint(b rate, width int, at []time.Duration) bool {
	w := time.Duration(width) * time.Second
	for _, c := range at {
		if c > b.at-w && c <= b.at+w {
			return true
		}
	}
	return false
}
