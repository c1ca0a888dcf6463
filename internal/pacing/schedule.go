// Package pacing times an open-loop run's transactions: the schedule of their
// arrivals, a Poisson process the clients share, and the pacer that wakes a waiting
// client as each comes due, with the sleeps they wait in. It stands apart from the
// driver, which only takes arrivals and waits for them, because the process and its
// timing (precise waits, the cap on gaps, the count of arrivals a target left
// untaken) are one concern, tested without a server.
package pacing

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Schedule deals the start times of an open-loop run: a Poisson process of rate
// arrivals a second shared by all clients, as pgbench -R paces its clients. A client that is free takes the next arrival once it is due; an
// arrival that finds every client busy waits for one, and since latency counts from
// the arrival, that wait is in it (no coordinated omission). While clients are
// free and the next arrival is not yet due, they wait for one pacer goroutine,
// which wakes one of them as it comes due: one waiter for all clients, since each
// idle client sleeping until an arrival of its own would wake the process as often,
// and at a high rate with many clients cost a timer each. A client that finds an
// arrival already due takes it without the pacer, so a target near or past its
// capacity does not pay a hand-over for each transaction.
type Schedule struct {
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
	timer    Timer
	waiter   *preciseWaiter
	noWaiter bool // none could be made
}

// MinRate is the lowest open-loop rate: a transaction every 1,000 s. Lower ones
// would leave a run's window empty, and their gaps near the clock's range.
const MinRate = 0.001

// EarlyStart is how long before its arrival a transaction may begin rather than
// wait: shorter waits cost more than they are worth (its latency then counts from
// its start).
const EarlyStart = 20 * time.Microsecond

// New makes the schedule of rate arrivals a second from start, drawn from seed; the
// window whose arrivals Behind counts is from and to after start.
func New(rate float64, seed uint64, start time.Time, from, to time.Duration) *Schedule {
	s := &Schedule{rng: rand.NewPCG(seed, 0x5eed), mean: float64(time.Second) / rate, wake: make(chan struct{}), done: make(chan struct{}),
		start: start, from: int64(from), to: int64(to)}
	s.next = s.gap()
	return s
}

// EndWindow moves the window's end to to after the start, for a run that ended
// sooner than planned.
func (s *Schedule) EndWindow(to time.Duration) {
	s.mu.Lock()
	s.to = int64(to)
	s.mu.Unlock()
}

// Wake is where the pacer (Pace) hands a due arrival to one waiting client.
func (s *Schedule) Wake() <-chan struct{} { return s.wake }

// Done is closed once the pacer has stopped, or at once after NoPacer.
func (s *Schedule) Done() <-chan struct{} { return s.done }

// NoPacer says that no pacer runs: the clients wait for their arrivals themselves.
func (s *Schedule) NoPacer() { close(s.done) }

// gap draws the time to the next arrival: exponential with the mean gap.
func (s *Schedule) gap() int64 {
	u := float64(s.rng.Uint64()>>11) * 0x1p-53 // [0, 1)
	// Capped, so that a long run's sum of gaps stays far from overflowing: at
	// MinRate this is 500 times the mean.
	return max(1, int64(min(-math.Log1p(-u)*s.mean, float64(time.Second)/MinRate*500)))
}

// Take takes the next arrival if it is due at now, and says so; else it returns
// when it is due.
func (s *Schedule) Take(now time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.start.Add(time.Duration(s.next))
	if at.Sub(now) > EarlyStart {
		return at, false
	}
	if s.next >= s.from && s.next < s.to {
		s.taken++
	}
	s.next += s.gap()
	return at, true
}

// Peek is when the next arrival is due.
func (s *Schedule) Peek() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start.Add(time.Duration(s.next))
}

// Pace wakes a waiting client as each arrival comes due, until the run stops or
// every client has ended. With every client busy it waits for one to wait; the
// clients take due arrivals meanwhile.
func (s *Schedule) Pace(stop, finished <-chan struct{}) {
	defer close(s.done)
	defer func() {
		if s.waiter != nil {
			s.waiter.close()
		}
	}()
	for {
		if !s.waitUntil(s.Peek(), stop, finished) {
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
func (s *Schedule) waitUntil(at time.Time, stop, finished <-chan struct{}) bool {
	d := time.Until(at)
	if d > 2*time.Millisecond {
		if !s.timer.Sleep(d-time.Millisecond, stop, finished) {
			return false
		}
		d = time.Until(at)
	}
	if d <= EarlyStart {
		return true
	}
	if s.mean >= float64(time.Second)/preciseRate && s.waiter == nil && !s.noWaiter {
		s.waiter = newPreciseWaiter()
		s.noWaiter = s.waiter == nil
	}
	if s.waiter != nil && s.waiter.wait(d) {
		return true
	}
	return s.timer.Sleep(d, stop, finished)
}

// preciseRate is the highest rate whose arrivals are waited for precisely.
const preciseRate = 10000

// Behind counts, once the pacer has stopped, the window's arrivals: those taken
// and those no client took before it closed (the target fell behind).
func (s *Schedule) Behind() (scheduled, untaken int64) {
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
