package driver

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// schedule deals the start times of an open-loop run (Config.Rate): a Poisson
// process of Rate arrivals a second shared by all clients, as pgbench -R paces its
// clients. One pacer goroutine waits for each arrival and offers it to the free
// clients, the one that waited longest taking it; an arrival that finds every
// client busy waits for one, and since latency counts from the arrival, that wait
// is in it (no coordinated omission). One waiter for all clients: each idle client
// waiting for an arrival of its own would wake the process as often, and at a
// high rate with many clients cost a timer each.
type schedule struct {
	rng  *rand.PCG
	mean float64 // the mean gap between arrivals, in nanoseconds
	next int64   // the next arrival not yet taken, in nanoseconds from the run's start
	// The window, in nanoseconds from the run's start, and the arrivals in it
	// taken so far.
	from, to int64
	taken    int64
	due      chan time.Time // arrivals offered to free clients
	done     chan struct{}  // closed as the pacer stops
	timer    *time.Timer
	waiter   *preciseWaiter
	noWaiter bool // none could be made
}

func newSchedule(rate float64, seed uint64) *schedule {
	s := &schedule{rng: rand.NewPCG(seed, 0x5eed), mean: float64(time.Second) / rate, due: make(chan time.Time), done: make(chan struct{})}
	s.next = s.gap()
	return s
}

// gap draws the time to the next arrival: exponential with the mean gap.
func (s *schedule) gap() int64 {
	u := float64(s.rng.Uint64()>>11) * 0x1p-53 // [0, 1)
	return max(1, int64(-math.Log1p(-u)*s.mean))
}

// pace offers the arrivals, each once its time has come, until the run stops or
// every client has ended.
func (s *schedule) pace(start time.Time, stop, finished <-chan struct{}) {
	defer close(s.done)
	defer func() {
		if s.waiter != nil {
			s.waiter.close()
		}
	}()
	for {
		at := start.Add(time.Duration(s.next))
		if !s.waitUntil(at, stop) {
			return
		}
		select {
		case s.due <- at:
		case <-stop:
			return
		case <-finished:
			return
		}
		if s.next >= s.from && s.next < s.to {
			s.taken++
		}
		s.next += s.gap()
	}
}

// waitUntil waits for the arrival at: on a Go timer while it is far, then, at
// rates up to preciseRate, on the precise waiter; within earlyStart of it the
// arrival is offered at once (a transaction that starts before its arrival counts
// its latency from its start). Above preciseRate the Go timer waits throughout:
// arrivals then come every 100 us or sooner, the client's threads are busy and run
// their timers between goroutines, and a precise wait's system calls (some 10 us
// each) would cost more than the transactions themselves. False: the run stopped.
func (s *schedule) waitUntil(at time.Time, stop <-chan struct{}) bool {
	const earlyStart = 20 * time.Microsecond
	d := time.Until(at)
	if d > 2*time.Millisecond {
		if !s.sleep(d-time.Millisecond, stop) {
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
	return s.sleep(d, stop)
}

// preciseRate is the highest rate whose arrivals are waited for precisely.
const preciseRate = 10000

// sleep waits on the pacer's Go timer; false if the run stopped first.
func (s *schedule) sleep(d time.Duration, stop <-chan struct{}) bool {
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.timer.C:
		return true
	case <-stop:
		s.timer.Stop()
		return false
	}
}

// behind counts, once the pacer has stopped, the window's arrivals: those taken
// and those no client took before it closed (the target fell behind).
func (s *schedule) behind() (scheduled, untaken int64) {
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

// pace takes the client's next arrival from the pacer. With a latency limit,
// arrivals already later than the limit are skipped and counted, as pgbench -L
// skips them, each a transaction of --transactions of script si, the one chosen.
// False: the run stopped, or the client has done its transactions.
func (c *client) pace(si int) (time.Time, bool) {
	r := c.r
	for {
		var at time.Time
		select {
		case at = <-r.sched.due:
		case <-r.stop:
			return at, false
		}
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
		return at, !r.stopping.Load()
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
