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
// clients. A client that is free takes the next arrival and waits for it; an
// arrival that finds every client busy waits for one, and since latency counts from
// the arrival, that wait is in it (no coordinated omission).
type schedule struct {
	mu   sync.Mutex
	rng  *rand.PCG
	mean float64 // the mean gap between arrivals, in nanoseconds
	next int64   // the next arrival not yet taken, in nanoseconds from the run's start
	// The window, in nanoseconds from the run's start, and the arrivals in it
	// taken so far.
	from, to int64
	taken    int64
}

func newSchedule(rate float64, seed uint64) *schedule {
	s := &schedule{rng: rand.NewPCG(seed, 0x5eed), mean: float64(time.Second) / rate}
	s.next = s.gap()
	return s
}

// gap draws the time to the next arrival: exponential with the mean gap.
func (s *schedule) gap() int64 {
	u := float64(s.rng.Uint64()>>11) * 0x1p-53 // [0, 1)
	return max(1, int64(-math.Log1p(-u)*s.mean))
}

// take returns the next arrival, in nanoseconds from the run's start.
func (s *schedule) take() int64 {
	s.mu.Lock()
	t := s.next
	s.next += s.gap()
	if t >= s.from && t < s.to {
		s.taken++
	}
	s.mu.Unlock()
	return t
}

// behind counts, once the clients have stopped, the window's arrivals: those
// taken and those no client took before it closed (the target fell behind).
func (s *schedule) behind() (scheduled, untaken int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := max(s.next, s.from); t < s.to; t += s.gap() {
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

// pace waits for the client's next arrival and returns it. With a latency limit,
// arrivals already later than the limit are skipped and counted, as pgbench -L
// skips them, each a transaction of --transactions of script si, the one chosen.
// False: the run stopped, or the client has done its transactions.
func (c *client) pace(si int) (time.Time, bool) {
	r := c.r
	for {
		at := r.start.Add(time.Duration(r.sched.take()))
		now := time.Now()
		if lim := r.cfg.LatencyLimit; lim > 0 && now.Sub(at) > lim {
			p := r.phaseOf(at)
			c.rate.skipped[p]++
			c.rate.tickSkipped.Add(1)
			if f := r.cfg.OnTransaction; f != nil {
				f(TxEvent{Client: c.id, Script: si, Start: at, End: now, Skipped: true})
			}
			c.done++
			if r.stopping.Load() || r.cfg.Transactions > 0 && c.done >= r.cfg.Transactions {
				return at, false
			}
			continue
		}
		if !c.waitUntil(at, now) {
			return at, false
		}
		return at, !r.stopping.Load()
	}
}

// waitUntil waits for the arrival at: on a Go timer while it is far, then on the
// precise waiter; within earlyStart of it the transaction starts at once (its
// latency then counts from its start). Waits of at most shortWait, which come
// when arrivals are frequent and the client's threads busy, are a Go timer's too:
// a busy thread runs its timers between goroutines, on time, and the precise
// waiter's system calls would cost more than they save. False: the run stopped.
func (c *client) waitUntil(at, now time.Time) bool {
	const earlyStart, shortWait = 20 * time.Microsecond, 200 * time.Microsecond
	d := at.Sub(now)
	if d > 2*time.Millisecond {
		if !c.sleep(d - time.Millisecond) {
			return false
		}
		d = time.Until(at)
	}
	if d <= earlyStart {
		return true
	}
	if d <= shortWait {
		return c.sleep(d)
	}
	if c.waiter == nil && !c.noWaiter {
		c.waiter = newPreciseWaiter()
		c.noWaiter = c.waiter == nil
	}
	if c.waiter != nil && c.waiter.wait(d) {
		return true
	}
	return c.sleep(d)
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
	// The schedule lag of the transactions that began: how long each waited for
	// a free client after its arrival.
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
