package driver

import (
	"sync/atomic"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pacing"
)

// MinRate is the lowest open-loop rate (Config.Rate): a transaction every 1,000 s.
const MinRate = pacing.MinRate

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
		at, due := r.sched.Take(now)
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
		return c.timer.Sleep(max(0, time.Until(c.r.sched.Peek())-pacing.EarlyStart), c.r.stop, nil)
	}
	select {
	case <-c.r.sched.Wake():
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
		f.Scheduled, f.Untaken = r.sched.Behind()
	}
	return f
}
