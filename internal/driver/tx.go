package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
)

// A client's transactions, the same on every transport. Every script runs as Steps
// (a Stepper): its own, a script of Commands (commands), or a Program (coro.go).
// The client goes from one wait to the next, and each of its methods here returns
// what it waits for next (a want); its transport, an event loop (evloop_linux.go) or
// a goroutine of its own (drive), waits for that and calls it again. So the rules of
// a transaction (retries, the rollback after a failure, aborts, lost connections,
// pauses, arrivals) are written once, here, whatever waits.

// want is what a client waits for before it goes on.
type want uint8

const (
	wantNext    want = iota // nothing: its next transaction begins (next)
	wantAnswer              // the answer to the request in its connection's output: send it, read it whole, then answered
	wantPause               // monotonic() to reach client.wake, then paused
	wantArrival             // an open-loop run's next arrival to come due, then arrived
	wantConnect             // a connection, made away from any loop (connectFor), then connected
	wantEnd                 // nothing more: the transport ends it (end)
)

// stage is where a client is in its transaction, for what it waits for to go on.
type stage uint8

const (
	stageArrival  stage = iota // waiting for the transaction's arrival
	stageConnect               // connecting before the transaction
	stageKeying                // in the pause before it (Script.Keying)
	stageTx                    // in it: an answer or a pause of its Steps
	stageRollback              // in the ROLLBACK after it failed inside a block
	stageLost                  // connecting again after it was lost with its connection
	stageThink                 // in the pause after it (Script.ThinkMean)
)

// txState is the client's transaction under way.
type txState struct {
	si, ci, try int
	stage       stage
	steps       Stepper
	arrival     time.Time // with Config.Rate
	start       time.Time // the latency counts from here: the arrival, if earlier
	lag         time.Duration
	// outcome, while the ROLLBACK after it is under way, is how the transaction
	// ended; lost, with stageLost, what ended its connection, and ev and phase what
	// is counted once the client is connected again.
	outcome error
	lost    error
	ev      TxEvent
	phase   Phase
}

// next begins the client's next transaction: it picks the script, and in an open-loop
// run takes its arrival.
func (c *client) next() want {
	r := c.r
	if r.stopping.Load() || r.cfg.Transactions > 0 && c.done >= r.cfg.Transactions {
		return wantEnd
	}
	si := c.pick()
	c.tx = txState{si: si, try: 1, steps: r.steps[si]}
	if r.sched != nil {
		return c.arrive()
	}
	return c.ready()
}

// arrive takes the transaction's arrival once it is due. The arrival is taken before
// any new connection is made: one that waits for a lost connection waits in its latency.
func (c *client) arrive() want {
	at, due, ok := c.takeArrival()
	switch {
	case !ok:
		return wantEnd
	case !due:
		c.tx.stage = stageArrival
		return wantArrival
	}
	c.tx.arrival = at
	return c.ready()
}

// arrived goes on once an arrival may be due; false: the run stopped first.
func (c *client) arrived(ok bool) want {
	if !ok {
		return wantEnd
	}
	return c.arrive()
}

// ready makes a connection if the client has none, draws the script's variables and
// waits its keying time.
func (c *client) ready() want {
	if c.w == nil {
		c.tx.stage = stageConnect
		return wantConnect
	}
	s := c.r.cfg.Scripts[c.tx.si]
	c.draw(s)
	if s.Keying > 0 && c.r.cfg.Rate == 0 {
		return c.pause(stageKeying, s.Keying)
	}
	return c.begin()
}

// begin starts the transaction's first try.
func (c *client) begin() want {
	start := time.Now()
	if start.After(c.rearm) {
		c.armTimeout(start)
	}
	c.tx.start = start
	if a := c.tx.arrival; !a.IsZero() && a.Before(start) {
		// Latency counts from the arrival; the wait for this client is the lag.
		c.tx.start, c.tx.lag = a, start.Sub(a)
	}
	return c.attempt()
}

// attempt starts a try of the transaction.
func (c *client) attempt() want {
	c.tx.stage = stageTx
	return c.step(c.tx.steps.Start(c.session()))
}

// pause waits d in stage st.
func (c *client) pause(st stage, d time.Duration) want {
	c.tx.stage, c.wake = st, monotonic()+int64(d)
	return wantPause
}

// step goes on as the transaction's Steps asked.
func (c *client) step(next Step, err error) want {
	switch next {
	case Await:
		return wantAnswer
	case Pause:
		return c.pause(stageTx, c.sess.pause)
	}
	return c.over(err)
}

// paused goes on after a pause, which the run's stop may have cut short.
func (c *client) paused() want {
	stopping := c.r.stopping.Load()
	switch c.tx.stage {
	case stageKeying:
		if stopping {
			return wantEnd
		}
		return c.begin()
	case stageThink:
		if stopping {
			return wantEnd
		}
		return wantNext
	}
	c.sess.stopped = stopping
	return c.step(c.tx.steps.Resume(&c.sess, nil))
}

// answered goes on once the answer to the client's request is read, or the
// connection is lost (err: then also the transaction).
func (c *client) answered(err error) want {
	if err != nil {
		if c.tx.stage == stageTx {
			c.abandon()
		}
		return c.lose(err)
	}
	if c.tx.stage == stageRollback {
		return c.settle(c.tx.outcome)
	}
	return c.step(c.tx.steps.Resume(&c.sess, c.w.Outcome()))
}

// over ends a try of the transaction with err, once its Steps are finished. What
// they wrote and never sent is dropped, or it would go out with the next request;
// a try that failed inside a transaction block rolls the block back first.
func (c *client) over(err error) want {
	c.w.Discard()
	if err != nil && c.w.InTransaction() {
		if _, sql := sqlError(err); sql || errors.Is(err, ErrRollback) {
			c.tx.stage, c.tx.outcome = stageRollback, err
			c.w.AppendQuery([]byte("ROLLBACK"))
			return wantAnswer
		}
	}
	return c.settle(err)
}

// settle counts the try that ended with err, the connection idle: the transaction
// completed or rolled back on purpose, is retried, failed, stops the client
// (Abort) or was lost with its connection.
func (c *client) settle(err error) want {
	ev := c.event()
	if err == nil {
		return c.after(ev, c.completed(ev, false))
	}
	pe, sql := sqlError(err)
	if rs := c.r.cfg.Scripts[c.tx.si].RollbackState; sql && rs != "" && pe.Code == rs {
		err = ErrRollback
	}
	var ab *Abort
	switch {
	case errors.Is(err, ErrRollback):
		return c.after(ev, c.completed(ev, true))
	case errors.As(err, &ab):
		c.aborted(ev, ab)
		return wantEnd
	case sql:
		if c.retrying(c.tx.si, pe, c.tx.try) {
			c.tx.try++
			return c.attempt()
		}
		return c.after(ev, c.failedTx(&ev, pe))
	}
	return c.lose(err)
}

// lose counts the transaction lost with the connection err ended; the client then
// connects again (the transport drops the connection first), unless the run is
// stopping: then it ends, and the loss is no outage. With Config.AbortOnLost the
// client stops there, aborted.
func (c *client) lose(err error) want {
	ev := c.event()
	phase := c.lostTx(&ev, err)
	switch {
	case c.r.stopping.Load():
		return wantEnd
	case c.r.cfg.AbortOnLost:
		c.r.clientStopped(fmt.Sprintf("client %d lost its connection: %v", c.id, err))
		return wantEnd
	}
	c.tx.stage, c.tx.lost, c.tx.ev, c.tx.phase = stageLost, err, ev, phase
	return wantConnect
}

// connectFor makes the connection the client waits for, away from any loop: again
// after a loss, or before a transaction; false means the run stopped first.
func (c *client) connectFor(ctx context.Context) bool {
	c.dropConn()
	if c.tx.stage == stageLost {
		return c.reconnect(ctx, c.tx.lost, 1)
	}
	return c.connectAgain(ctx)
}

// connected goes on once connectFor has returned ok.
func (c *client) connected(ok bool) want {
	switch {
	case !ok:
		return wantEnd
	case c.tx.stage == stageLost:
		return c.after(c.tx.ev, c.tx.phase)
	}
	return c.ready()
}

// after does what follows every transaction, ev, counted in phase: the open-loop
// lag, a new connection with Config.ConnectPerTx, the callback, and the think time.
func (c *client) after(ev TxEvent, phase Phase) want {
	cfg := &c.r.cfg
	if !c.tx.arrival.IsZero() {
		c.rate.lag(phase, ev.Lag)
	}
	if cfg.ConnectPerTx && c.w != nil {
		t0 := time.Now()
		c.close()
		c.r.connectNs.Add(int64(time.Since(t0)))
	}
	c.finish(ev, phase)
	if mean := cfg.Scripts[ev.Script].ThinkMean; mean > 0 && cfg.Rate == 0 {
		// Exponential with the given mean, cut at ten times it (TPC-C 5.2.5.4).
		u := float64(c.rng.Uint64()>>11) * 0x1p-53 // [0, 1)
		think := time.Duration(-math.Log(max(1e-12, 1-u)) * float64(mean))
		return c.pause(stageThink, min(think, 10*mean))
	}
	return wantNext
}

// event is the transaction under way, ending now.
func (c *client) event() TxEvent {
	return TxEvent{Client: c.id, Script: c.tx.si, Start: c.tx.start, End: time.Now(), Tries: c.tx.try, Lag: c.tx.lag}
}

// end closes the connection of a client that has ended.
func (c *client) end() {
	c.close()
	if c.co != nil {
		c.co.stop()
		c.co = nil
	}
	c.r.outages.ClientDone()
}

// drive runs the client on a goroutine of its own, from w, until it ends: each wait
// is waited in place, an answer on its thread (ThreadPerClient) or through Go's
// network poller.
func (c *client) drive(ctx context.Context, w want) {
	for {
		switch w {
		case wantNext:
			w = c.next()
		case wantAnswer:
			w = c.answered(c.w.RoundTrip())
		case wantPause:
			c.timer.Sleep(time.Duration(c.wake-monotonic()), c.r.stop, nil)
			w = c.paused()
		case wantArrival:
			w = c.arrived(c.awaitArrival())
		case wantConnect:
			w = c.connected(c.connectFor(ctx))
		default:
			c.end()
			return
		}
	}
}

// sqlError tells whether err is a statement's own error, the connection still usable.
func sqlError(err error) (*pgconn.PgError, bool) {
	if err == nil {
		return nil, false
	}
	var pe *pgconn.PgError
	return pe, errors.As(err, &pe) && !errors.Is(err, pgwire.ErrClosed)
}

// commands runs a script of Commands: its statements in turn, each with the
// transaction's values (client.request).
type commands struct{}

func (commands) Start(s *Session) (Step, error) {
	if len(s.c.r.cfg.Scripts[s.si].Commands) == 0 {
		return Finished, nil
	}
	s.c.tx.ci = 0
	s.c.request(s.si, 0)
	return Await, nil
}

func (commands) Resume(s *Session, _ error) (Step, error) {
	c := s.c
	if pe := c.w.Err(); pe != nil {
		return Finished, pe // a COPY that failed too: no ErrCopy, as the statement's own error
	}
	c.tx.ci++
	if c.tx.ci == len(c.r.cfg.Scripts[s.si].Commands) {
		return Finished, nil
	}
	c.request(s.si, c.tx.ci)
	return Await, nil
}

// monotonic is nanoseconds on the monotonic clock, for pauses a clock step must not
// stretch or cut.
func monotonic() int64 { return int64(time.Since(clockBase)) }

var clockBase = time.Now()
