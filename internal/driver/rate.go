package driver

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// schedule deals the start times of an open-loop run (Config.Rate): a Poisson
// process of Rate arrivals a second shared by all clients, as pgbench -R paces its
// clients. A client that is free takes the next arrival once it is due; an
// arrival that finds every client busy waits for one, and since latency counts from
// the arrival, that wait is in it (no coordinated omission). While clients are
// free and the next arrival is not yet due, they wait for one pacer goroutine,
// which wakes one of them as it comes due: one waiter for all clients, since each
// idle client sleeping until an arrival of its own would wake the process as often,
// and at a high rate with many clients cost a timer each. A client that finds an
// arrival already due takes it without the pacer, so a target near or past its
// capacity does not pay a hand-over for each transaction.
type schedule struct {
	mu    sync.Mutex
	start time.Time
	rng   *rand.PCG
	mean  float64 // the mean gap between arrivals, in nanoseconds
	next  int64   // the next arrival not yet taken, in nanoseconds from start
	// The window, in nanoseconds from start, and the arrivals in it taken so far.
	from, to int64
	taken    int64

	wake chan struct{} // the pacer wakes a waiting client as an arrival comes due
	done chan struct{} // closed as the pacer stops
	// The pacer's own.
	timer    timer
	waiter   *preciseWaiter
	noWaiter bool // none could be made
}

// MinRate is the lowest open-loop rate: a transaction every 1,000 s. Lower ones
// would leave a run's window empty, and their gaps near the clock's range.
const MinRate = 0.001

// earlyStart is how long before its arrival a transaction may begin rather than
// wait: shorter waits cost more than they are worth (its latency then counts from
// its start).
const earlyStart = 20 * time.Microsecond

func newSchedule(rate float64, seed uint64) *schedule {
	s := &schedule{rng: rand.NewPCG(seed, 0x5eed), mean: float64(time.Second) / rate, wake: make(chan struct{}), done: make(chan struct{})}
	s.next = s.gap()
	return s
}

// gap draws the time to the next arrival: exponential with the mean gap.
func (s *schedule) gap() int64 {
	u := float64(s.rng.Uint64()>>11) * 0x1p-53 // [0, 1)
	// Capped, so that a long run's sum of gaps stays far from overflowing: at
	// MinRate this is 500 times the mean.
	return max(1, int64(min(-math.Log1p(-u)*s.mean, float64(time.Second)/MinRate*500)))
}

// take takes the next arrival if it is due at now, and says so; else it returns
// when it is due.
func (s *schedule) take(now time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.start.Add(time.Duration(s.next))
	if at.Sub(now) > earlyStart {
		return at, false
	}
	if s.next >= s.from && s.next < s.to {
		s.taken++
	}
	s.next += s.gap()
	return at, true
}

// peek is when the next arrival is due.
func (s *schedule) peek() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start.Add(time.Duration(s.next))
}

// pace wakes a waiting client as each arrival comes due, until the run stops or
// every client has ended. With every client busy it waits for one to wait; the
// clients take due arrivals meanwhile.
func (s *schedule) pace(stop, finished <-chan struct{}) {
	defer close(s.done)
	defer func() {
		if s.waiter != nil {
			s.waiter.close()
		}
	}()
	for {
		if !s.waitUntil(s.peek(), stop, finished) {
			return
		}
		select {
		case s.wake <- struct{}{}:
		case <-stop:
			return
		case <-finished:
			return
		}
	}
}

// waitUntil waits for the arrival at: on a Go timer while it is far, then, at
// rates up to preciseRate, on the precise waiter. Above preciseRate the Go timer
// waits throughout: arrivals then come every 100 us or sooner, the client's
// threads are busy and run their timers between goroutines, and a precise wait's
// system calls (some 10 us each) would cost more than the transactions
// themselves. False: the run stopped.
func (s *schedule) waitUntil(at time.Time, stop, finished <-chan struct{}) bool {
	d := time.Until(at)
	if d > 2*time.Millisecond {
		if !s.timer.sleep(d-time.Millisecond, stop, finished) {
			return false
		}
		d = time.Until(at)
	}
	if d <= earlyStart {
		return true
	}
	if s.mean >= float64(time.Second)/preciseRate && s.waiter == nil && !s.noWaiter {
		s.waiter = newPreciseWaiter()
		s.noWaiter = s.waiter == nil
	}
	if s.waiter != nil && s.waiter.wait(d) {
		return true
	}
	return s.timer.sleep(d, stop, finished)
}

// preciseRate is the highest rate whose arrivals are waited for precisely.
const preciseRate = 10000

// behind counts, once the pacer has stopped, the window's arrivals: those taken
// and those no client took before it closed (the target fell behind).
func (s *schedule) behind() (scheduled, untaken int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	from := max(s.next, s.from)
	if expected := float64(s.to-from) / s.mean; expected > 1e6 {
		// Far behind: the expected count, rather than millions of draws.
		untaken = int64(expected)
		return s.taken + untaken, untaken
	}
	for t := from; t < s.to; t += s.gap() {
		untaken++
	}
	return s.taken + untaken, untaken
}

// rateStats are a client's open-loop figures: per phase, read once the client has
// ended, and for the current interval, swapped by the runner's tick.
type rateStats struct {
	skipped, late        [phases]int64
	lagSum, lagN, lagMax [phases]int64 // nanoseconds
	tickSkipped          atomic.Int64
	tickLate             atomic.Int64
	tickLagSum           atomic.Int64
	tickLagN             atomic.Int64
}

func (st *rateStats) lag(p Phase, d time.Duration) {
	st.lagSum[p] += int64(d)
	st.lagN[p]++
	st.lagMax[p] = max(st.lagMax[p], int64(d))
	st.tickLagSum.Add(int64(d))
	st.tickLagN.Add(1)
}

// takeArrival takes the client's next arrival once it is due (due false: not yet).
// With a latency limit, arrivals already later than the limit are skipped and
// counted, as pgbench -L skips them, each a transaction of --transactions of the
// script chosen. ok false: the run stopped, or the client has done its
// transactions.
func (c *client) takeArrival() (at time.Time, due, ok bool) {
	r := c.r
	for {
		now := time.Now()
		at, due := r.sched.take(now)
		if !due {
			return at, false, true
		}
		if lim := r.cfg.LatencyLimit; lim > 0 && now.Sub(at) > lim {
			p := r.phaseOf(at)
			c.rate.skipped[p]++
			c.rate.tickSkipped.Add(1)
			if f := r.cfg.OnTransaction; f != nil {
				f(TxEvent{Client: c.id, Script: c.tx.si, Start: at, End: now, Skipped: true})
			}
			c.done++
			if r.stopping.Load() || r.cfg.Transactions > 0 && c.done >= r.cfg.Transactions {
				return at, true, false
			}
			continue
		}
		return at, true, !r.stopping.Load()
	}
}

// awaitArrival waits, on a client's own goroutine, until the next arrival may be
// due: until the pacer wakes it or, where no pacer runs (the client left an event
// loop, which paces its own clients), until the arrival is near. False: the run
// stopped.
func (c *client) awaitArrival() bool {
	if !c.r.pacing {
		return c.timer.sleep(max(0, time.Until(c.r.sched.peek())-earlyStart), c.r.stop, nil)
	}
	select {
	case <-c.r.sched.wake:
		return true
	case <-c.r.stop:
		return false
	}
}

// RateFigures are an open-loop run's own results over the window (Config.Rate),
// and with a latency limit the transactions that ended later than it.
type RateFigures struct {
	// Scheduled are the arrivals the schedule put in the window; Untaken, those
	// no client had begun when it closed: the target did not keep up.
	Scheduled, Untaken int64
	// Skipped could not begin within the latency limit of their arrival; Late
	// completed, but later than it.
	Skipped, Late int64
	// The schedule lag of the transactions that ended in the window: how long
	// each waited for a free client after its arrival.
	LagAvg, LagMax time.Duration
}

// rateFigures adds up the clients' figures for the window.
func (r *runner) rateFigures(clients []*client) RateFigures {
	var f RateFigures
	var lagSum, lagN int64
	for _, c := range clients {
		st := &c.rate
		f.Skipped += st.skipped[Measure]
		f.Late += st.late[Measure]
		lagSum += st.lagSum[Measure]
		lagN += st.lagN[Measure]
		f.LagMax = max(f.LagMax, time.Duration(st.lagMax[Measure]))
	}
	if lagN > 0 {
		f.LagAvg = time.Duration(lagSum / lagN)
	}
	if r.sched != nil {
		f.Scheduled, f.Untaken = r.sched.behind()
	}
	return f
}
