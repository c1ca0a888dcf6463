package recovery

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
)

// Resolution is the grain of the commit timeline: the time without commits is
// measured to within it.
const Resolution = 10 * time.Millisecond

// before is how much of the run before a fault sets the throughput recovery is
// measured against.
const before = 10 * time.Second

// Tracker follows a run's transactions around its faults, from the clients' side:
// it keeps a timeline of commits near each fault, each client's longest time
// without a commit across it, and the failures after it. Its Add is safe for the
// clients to call at once (driver.Config.OnTransaction).
//
// A fault's figures are settled once every client has reported a transaction
// a few seconds past its end of span (the next fault), and what it kept is let
// go: a long run with a fault every few minutes holds the figures of the faults
// behind it, not their timelines.
type Tracker struct {
	start  time.Time // the run's: before it nothing could commit
	faults []time.Time
	nexts  []time.Time // each fault's end of span: the next fault, the run's end, or MaxHorizon after it
	// spans are what each fault keeps until it is settled, then nil.
	spans []atomic.Pointer[span]
	// last is each client's last commit, and seen the end of the last
	// transaction it reported, in Unix nanoseconds (0: none yet).
	last, seen []atomic.Int64

	mu      sync.Mutex
	settled []*Figures // each fault's figures once settled
	states  []string   // the failures' SQLSTATEs, each once
	stateAt map[string]uint16
}

// span is what the tracker keeps of one fault until its figures are settled.
type span struct {
	// slots are the fault's timeline of commits, one counter a Resolution, from
	// before the fault to its end of span: four bytes a slot, a fault's five
	// minutes are 120 kB.
	slots []atomic.Int32
	// gaps are, per client, its longest time between two commits, of those that
	// end after the fault and start no more than a second before it.
	gaps []atomic.Int64
	// firstLoss is when, after the fault, a connection was first lost or refused,
	// in nanoseconds from it plus one: 0 when none was.
	firstLoss atomic.Int64
	settling  atomic.Bool
	checkAt   atomic.Int64 // when, in Unix nanoseconds, the clients are to be looked at again
	failures  []failure    // those after the fault within its span; Tracker.mu is held
}

// settleAfter is how far past a fault's end of span every client's last
// transaction must end for the fault to be settled. A client reports a
// transaction lost with its connection once it has connected again, with the
// time it was lost: one that is still reconnecting holds the fault open.
const settleAfter = 5 * time.Second

// failure is a failed transaction: when, in Unix nanoseconds, and its SQLSTATE
// as an index into Tracker.states. A fault fails about one transaction a client,
// and a long run has many faults: 16 bytes each.
type failure struct {
	at    int64
	state uint16
}

// state is the index of SQLSTATE code in t.states, added if new; t.mu is held.
// The codes are a few dozen at most; any beyond 65,535 share the last index.
func (t *Tracker) state(code string) uint16 {
	if i, ok := t.stateAt[code]; ok {
		return i
	}
	if len(t.states) > math.MaxUint16 {
		return math.MaxUint16
	}
	if t.stateAt == nil {
		t.stateAt = map[string]uint16{}
	}
	i := uint16(len(t.states))
	t.states = append(t.states, code)
	t.stateAt[code] = i
	return i
}

// MaxHorizon is how long after a fault its recovery is followed at most.
const MaxHorizon = time.Hour

// NewTracker follows the clients of a run that began at start through the faults
// at the given instants, each until the next fault, until, or MaxHorizon after
// it, whichever comes first: a recovery slower than that is reported as not
// recovered.
func NewTracker(start time.Time, faults []time.Time, clients int, until time.Time) *Tracker {
	t := &Tracker{start: start, faults: faults, last: make([]atomic.Int64, clients), seen: make([]atomic.Int64, clients),
		spans: make([]atomic.Pointer[span], len(faults)), settled: make([]*Figures, len(faults))}
	for i, at := range faults {
		t.nexts = append(t.nexts, t.nextOf(i, until))
		t.spans[i].Store(&span{slots: make([]atomic.Int32, int(t.nexts[i].Sub(at.Add(-before))/Resolution)+1),
			gaps: make([]atomic.Int64, clients)})
	}
	return t
}

// Add counts a transaction that ended: a commit on the timelines of the faults
// it is near, a failure after a fault among that fault's.
func (t *Tracker) Add(ev driver.TxEvent) {
	end := ev.End.UnixNano()
	if ev.Client >= 0 && ev.Client < len(t.seen) && end > t.seen[ev.Client].Load() {
		t.seen[ev.Client].Store(end) // a client's events come one at a time
	}
	if ev.Skipped {
		return
	}
	var prev int64
	if !ev.Failed && ev.Client >= 0 && ev.Client < len(t.last) {
		prev = t.last[ev.Client].Swap(end)
	}
	for i, at := range t.faults {
		s := t.spans[i].Load()
		if s == nil {
			continue // settled
		}
		from := at.Add(-before)
		if !ev.End.Before(t.nexts[i]) {
			if ev.End.After(t.nexts[i].Add(settleAfter)) {
				t.maybeSettle(i, s, end)
			}
			continue
		}
		if ev.End.Before(from) {
			continue
		}
		if ev.Failed {
			if !ev.End.Before(at) {
				t.mu.Lock()
				s.failures = append(s.failures, failure{end, t.state(ev.SQLState)})
				t.mu.Unlock()
			}
			continue
		}
		if k := int(ev.End.Sub(from) / Resolution); k < len(s.slots) {
			s.slots[k].Add(1)
		}
		// A fault is done a little after its instant (the injector finds the
		// primary first): a client's gap is the longest that reaches past it,
		// before the next fault. A client's events come one at a time.
		if prev > 0 && !ev.End.Before(at) && prev >= at.Add(-time.Second).UnixNano() {
			if g := &s.gaps[ev.Client]; end-prev > g.Load() {
				g.Store(end - prev)
			}
		}
	}
}

// maybeSettle settles fault i, whose span s is over, once every client that has
// reported a transaction has reported one settleAfter past it. Clients are
// looked at once every 100 ms of the run at most, by one caller at a time.
func (t *Tracker) maybeSettle(i int, s *span, now int64) {
	next := s.checkAt.Load()
	if now < next || !s.checkAt.CompareAndSwap(next, now+int64(100*time.Millisecond)) {
		return
	}
	after := t.nexts[i].Add(settleAfter).UnixNano()
	for c := range t.seen {
		if seen := t.seen[c].Load(); seen != 0 && seen <= after {
			return
		}
	}
	if s.settling.CompareAndSwap(false, true) {
		t.settle(i, s)
	}
}

// settle works out the figures of fault i, whose span s is over, and lets s go.
func (t *Tracker) settle(i int, s *span) {
	f := t.figures(i, s, t.nexts[i])
	t.mu.Lock()
	t.settled[i] = &f
	t.mu.Unlock()
	t.spans[i].Store(nil)
}

// LostConnection notes a client's connection lost, or refused, at at: a
// failure that comes from a fault even where no transaction failed with it
// (a client that connects for each transaction and is refused).
func (t *Tracker) LostConnection(at time.Time) {
	for i, fault := range t.faults {
		s := t.spans[i].Load()
		d := at.Sub(fault)
		if s == nil || d < 0 || !at.Before(t.nexts[i]) {
			continue
		}
		for {
			old := s.firstLoss.Load()
			if (old != 0 && old <= int64(d)+1) || s.firstLoss.CompareAndSwap(old, int64(d)+1) {
				break
			}
		}
	}
}

// Figures are what the clients saw of one fault.
type Figures struct {
	// FirstFailure is how long after the fault the clients first failed for
	// it: a transaction that failed with a state FaultState tells, or a
	// connection lost or refused; -1 when none did. The workload's own
	// errors (a serialization failure, a deadlock, a duplicate key) are not
	// the fault's.
	FirstFailure time.Duration
	// NoCommits is the longest time without any commit, of those that began
	// within a second before the fault or after it: how long the deployment was
	// down for the clients. ClientMedian and ClientMax are of each client's
	// longest time between two commits around the fault.
	NoCommits, ClientMedian, ClientMax time.Duration
	// Resumed is how long after the fault that time without commits ended: the
	// first commit after it; -1 when none came.
	Resumed time.Duration
	// Recovered is how long after the fault the throughput was back to 90% of
	// what it was before: the start of the first second that reached it. -1 when
	// it did not within the horizon.
	Recovered time.Duration
	// Before is the throughput before the fault, commits a second.
	Before float64
	// Errors are the failed transactions from the fault to its recovery (or the
	// horizon) by SQLSTATE, and InDoubt those of them lost with their
	// connection, whose commit may or may not have happened.
	Errors  map[string]int64
	InDoubt int64
}

// nextOf is the instant of the fault after fault i, or the end of its horizon:
// until, or MaxHorizon after it.
func (t *Tracker) nextOf(i int, until time.Time) time.Time {
	next := t.faults[i].Add(MaxHorizon)
	if until.Before(next) {
		next = until
	}
	if next.Before(t.faults[i]) {
		next = t.faults[i]
	}
	for _, at := range t.faults {
		if at.After(t.faults[i]) && at.Before(next) {
			next = at
		}
	}
	return next
}

// Figures are the figures of fault i, once the run is over; end is when its
// window ended, after which no commit is missing. Its timeline ends there or
// at the next fault, and begins no earlier than the run.
func (t *Tracker) Figures(i int, end time.Time) Figures {
	// settle stores the figures before it lets the span go.
	if s := t.spans[i].Load(); s != nil {
		return t.figures(i, s, end)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return *t.settled[i]
}

// figures are the figures of fault i from what it kept, s, with its window
// ended at end.
func (t *Tracker) figures(i int, s *span, end time.Time) Figures {
	at, slots := t.faults[i], s.slots
	from := at.Add(-before)
	if next := t.nexts[i]; next.Before(end) {
		end = next
	}
	if n := int(end.Sub(from) / Resolution); n < len(slots) {
		slots = slots[:max(n, 0)]
	}
	first := min(max(int(t.start.Sub(from)/Resolution), 0), len(slots))
	f := Figures{FirstFailure: -1, Recovered: -1, Resumed: -1, Errors: map[string]int64{}}
	if l := s.firstLoss.Load(); l > 0 {
		f.FirstFailure = time.Duration(l - 1)
	}
	lead := min(int(before/Resolution), len(slots))
	f.Before = rateBefore(slots[first:max(lead, first)])
	var resumed int
	f.NoCommits, resumed = longestGap(slots, first, lead-int(time.Second/Resolution))
	if resumed < len(slots) && resumed >= lead {
		f.Resumed = time.Duration(resumed-lead) * Resolution
	}
	// Back to the throughput before is counted from when commits resumed: a
	// fault that takes effect a while after its instant is not recovered from
	// before it.
	f.Recovered = recoveredAfter(slots, max(lead, resumed), f.Before)
	if f.Recovered >= 0 {
		f.Recovered += time.Duration(max(resumed-lead, 0)) * Resolution
	}
	f.ClientMedian, f.ClientMax = clientGaps(s.gaps)
	until := t.nexts[i]
	if f.Recovered >= 0 {
		until = at.Add(f.Recovered + time.Second)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, fl := range s.failures {
		state, when := t.states[fl.state], time.Unix(0, fl.at)
		if d := when.Sub(at); FaultState(state) && (f.FirstFailure < 0 || d < f.FirstFailure) {
			f.FirstFailure = d
		}
		if when.After(until) {
			continue
		}
		f.Errors[state]++
		if connectionLost(state) {
			f.InDoubt++
		}
	}
	return f
}

// rateBefore is the commits a second of lead, from its first commit on: a
// fault early in a run has less than a lead before it.
func rateBefore(lead []atomic.Int32) float64 {
	var sum int64
	first := -1
	for k := range lead {
		if n := int64(lead[k].Load()); n > 0 {
			sum += n
			if first < 0 {
				first = k
			}
		}
	}
	if first < 0 {
		return 0
	}
	return float64(sum) / (time.Duration(len(lead)-first) * Resolution).Seconds()
}

// longestGap is the longest run of empty slots of span, from slot first, that
// reaches slot from or later, counted whole (a gap that began earlier counts
// from its beginning), and the slot that ended it: len(span) when none did.
func longestGap(span []atomic.Int32, first, from int) (time.Duration, int) {
	best, end, start := 0, len(span), -1
	for k := first; k <= len(span); k++ {
		empty := k < len(span) && span[k].Load() == 0
		switch {
		case empty && start < 0:
			start = k
		case !empty && start >= 0:
			if k > from && k-start > best {
				best, end = k-start, k
			}
			start = -1
		}
	}
	return time.Duration(best) * Resolution, end
}

// recoveredAfter is how long after slot at the first second of span began whose
// commits reached 90% of rate a second; -1 when none did.
func recoveredAfter(span []atomic.Int32, at int, rate float64) time.Duration {
	if rate <= 0 {
		return -1
	}
	second := int(time.Second / Resolution)
	var window int64
	for k := at; k < len(span); k++ {
		window += int64(span[k].Load())
		if k-at >= second {
			window -= int64(span[k-second].Load())
		}
		if k-at+1 >= second && float64(window) >= 0.9*rate {
			return time.Duration(k+1-second-at) * Resolution
		}
	}
	return -1
}

// clientGaps are the median and longest of the clients' longest gaps around the
// fault, among the clients that committed on both sides of it.
func clientGaps(each []atomic.Int64) (median, longest time.Duration) {
	var gaps []time.Duration
	for c := range each {
		if g := each[c].Load(); g > 0 {
			gaps = append(gaps, time.Duration(g))
		}
	}
	if len(gaps) == 0 {
		return -1, -1
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2], gaps[len(gaps)-1]
}

// connectionLost tells a SQLSTATE of a transaction lost with its connection: a
// connection exception (class 08), or the server shutting the session down
// (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now).
func connectionLost(state string) bool {
	return strings.HasPrefix(state, "08") || state == "57P01" || state == "57P02" || state == "57P03"
}

// FaultState tells a SQLSTATE that a fault causes, as opposed to one of the
// workload's own errors: a connection lost (connectionLost), or a write
// refused by a server that is no longer the primary (25006
// read_only_sql_transaction).
func FaultState(state string) bool {
	return connectionLost(state) || state == "25006"
}
