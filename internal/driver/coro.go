package driver

import "time"

// A client whose transactions are code (a Program), pause (keying and think times)
// or wait for arrivals (an open-loop run) cannot be a small state the event loop
// steps through, so on a loop it runs as a coroutine: its goroutine's code,
// unchanged, on the loop's thread. Where it would wait (an answer, a pause, an
// arrival, a new connection) it hands the thread back to the loop,
// which resumes it once the wait is over. The hand-off is a direct switch between
// two goroutines on one thread (iter.Pull), not a trip through the scheduler.

// coWait is what a coroutine waits for when it hands the thread back.
type coWait uint8

const (
	waitRead    coWait = iota // an answer: resumed when the socket is readable
	waitSleep                 // a pause: resumed at wake
	waitArrival               // an open-loop run's next arrival (client.pace)
	waitAway                  // a connection: a goroutine drives it until it is connected
	waitBack                  // connected again: the loop takes it back
)

// coro is a client's coroutine on an event loop.
type coro struct {
	next  func() (struct{}, bool)
	yield func(struct{}) bool
	want  coWait
	wake  int64 // monotonic nanoseconds, with waitSleep
	// err, when set, is what the read it is resumed in fails with (its deadline).
	err error
	// stopped is set when a pause, or the wait for an arrival, is cut short because
	// the run stops.
	stopped bool
	// away is set while a goroutine drives it rather than the loop: it then waits
	// as a goroutine does (while it reconnects, or for good once released).
	away bool
	// muted is set while its socket is out of the epoll set: it became readable
	// while the client was not waiting for an answer (see evloop.ready).
	muted bool
	ended bool // its client's loop has returned
}

// wait hands the thread back to the loop until what w names is there.
func (co *coro) wait(w coWait) {
	co.want = w
	co.yield(struct{}{})
}

// monotonic is nanoseconds on the monotonic clock, for pauses a clock step must not
// stretch or cut.
func monotonic() int64 { return int64(time.Since(clockBase)) }

var clockBase = time.Now()

// sleep pauses the client for d or until the run stops; false means it stopped.
func (c *client) sleep(d time.Duration) bool {
	if co := c.co; co != nil && !co.away {
		co.wake, co.stopped = monotonic()+int64(d), false
		co.wait(waitSleep)
		return !co.stopped && !c.r.stopping.Load()
	}
	return c.timer.sleep(d, c.r.stop, nil) && !c.r.stopping.Load()
}

// offLoop runs connect, which makes the client's connection, away from its event
// loop: a connection takes round trips with waits no loop could serve others in.
func (c *client) offLoop(connect func() bool) bool {
	co := c.co
	if co == nil || co.away {
		return connect()
	}
	co.wait(waitAway)
	if !connect() {
		return false
	}
	co.wait(waitBack)
	return true
}
