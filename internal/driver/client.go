package driver

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
)

// client is one benchmark connection and the loop that drives it.
type client struct {
	id     int
	r      *runner
	mu     sync.Mutex // guards w.nc swaps against the runner's deadline setting
	w      *wire
	rng    *rand.PCG
	hist   *histogram.Worker
	vals   []int64
	params []int64
	text   []byte
	// Per script and command: parts of the statement for the simple protocol.
	parts [][][]string
	order [][][]int
	done  int // transactions finished, for --transactions
	sess  Session
	deck  []int // script indices still to deal, with Config.Deck
	// rearm is when the connection's deadline must next be moved for
	// Config.TxTimeout; never without one.
	rearm time.Time
	waits atomic.Int64 // answers waited for on a Unix-domain socket, for runner.waits
	// stmts counts the statements of the transaction under way (the wire adds to
	// it); queries, per script and phase, those of the transactions that ended.
	stmts   Queries
	queries [][phases]Queries
	rate    rateStats // with Config.Rate or Config.LatencyLimit
	timer   timer
	// With event loops: whether the client is on one, its index there, and where
	// it is in its transaction.
	onLoop bool
	slot   int
	ev     evState
	// deferred is set while the client waits in its loop's due list (evloop.begin).
	deferred bool
	co       *coro // its coroutine on its loop, unless it is a small state there (coro.go)
}

// never is later than any transaction starts.
var never = time.Unix(1<<62, 0)

func stmtName(script, cmd int) string { return "P" + strconv.Itoa(script) + "_" + strconv.Itoa(cmd) }

// armTimeout moves the connection's deadline for Config.TxTimeout T so that a
// transaction starting now has at least T, and at most 1.5 T, to complete. Moved only
// once every T/2, not for each transaction: each move updates a runtime timer, which
// would cost more than the branch that decides.
func (c *client) armTimeout(now time.Time) {
	t := c.r.cfg.TxTimeout
	c.rearm = now.Add(t / 2)
	d := now.Add(t + t/2)
	c.mu.Lock()
	// Never past the run's hard stop, which the runner may have set meanwhile.
	if hs := c.r.hardStop(); hs.Before(d) {
		d = hs
	}
	if c.w != nil {
		c.w.setDeadline(d)
	}
	c.mu.Unlock()
}

// uniform draws from [lo, hi] with Lemire's multiply-shift; the bias for ranges far
// below 2^64 is negligible.
func (c *client) uniform(lo, hi int64) int64 {
	n := uint64(hi-lo) + 1
	if n == 0 {
		return int64(c.rng.Uint64())
	}
	h, _ := bits.Mul64(c.rng.Uint64(), n)
	return lo + int64(h)
}

// draw draws script s's variables for a transaction.
func (c *client) draw(s *Script) {
	for i, v := range s.Vars {
		if v.Dist != nil {
			c.vals[i] = v.Dist.Draw(c.rng)
			continue
		}
		c.vals[i] = c.uniform(v.Min, v.Max)
	}
}

func (c *client) pick() int {
	s := c.r.cfg.Scripts
	if len(s) == 1 {
		return 0
	}
	if c.r.cfg.Deck {
		if len(c.deck) == 0 {
			for i := range s {
				for range s[i].Weight {
					c.deck = append(c.deck, i)
				}
			}
			for i := len(c.deck) - 1; i > 0; i-- {
				j := c.uniform(0, int64(i))
				c.deck[i], c.deck[j] = c.deck[j], c.deck[i]
			}
		}
		si := c.deck[len(c.deck)-1]
		c.deck = c.deck[:len(c.deck)-1]
		return si
	}
	x := c.uniform(1, c.r.totalWeight)
	for i := range s {
		x -= int64(s[i].Weight)
		if x <= 0 {
			return i
		}
	}
	return len(s) - 1
}

// loop runs transactions until the run stops. It never returns an error: failures are
// counted, and a lost connection is re-established until the run ends.
func (c *client) loop(ctx context.Context) {
	cfg := &c.r.cfg
	for !c.r.stopping.Load() {
		if cfg.Transactions > 0 && c.done >= cfg.Transactions {
			return
		}
		si := c.pick()
		s := cfg.Scripts[si]
		// The arrival, before any reconnection: one that waits for a lost
		// connection waits in its latency.
		var arrival time.Time
		if c.r.sched != nil {
			var ok bool
			if arrival, ok = c.pace(si); !ok {
				return
			}
		}
		if c.w == nil && !c.offLoop(func() bool { return c.connectAgain(ctx) }) {
			return
		}
		c.draw(s)
		if s.Keying > 0 && cfg.Rate == 0 && !c.sleep(s.Keying) {
			return
		}
		start := time.Now()
		if start.After(c.rearm) {
			c.armTimeout(start)
		}
		var phase Phase
		ev := TxEvent{Client: c.id, Script: si, Start: start}
		if !arrival.IsZero() && arrival.Before(start) {
			// Latency counts from the arrival; the wait for this client is the lag.
			ev.Start, ev.Lag = arrival, start.Sub(arrival)
		}
		for try := 1; ; try++ {
			ev.Tries = try
			var err error
			if s.Program != nil || s.Steps != nil {
				err = c.runProgram(si, s, try)
			} else {
				err = c.exec(si, s)
			}
			ev.End = time.Now()
			if err == nil || errors.Is(err, ErrRollback) {
				phase = c.completed(ev, err != nil)
				break
			}
			ev.Failed = true
			var ab *Abort
			if errors.As(err, &ab) {
				c.aborted(ev, ab)
				return
			}
			var pe *pgconn.PgError
			if errors.As(err, &pe) && !errors.Is(err, errClosed) {
				if c.retrying(si, pe, try) {
					continue
				}
				phase = c.failedTx(&ev, pe)
				break
			}
			phase = c.lostTx(&ev, err)
			if c.r.stopping.Load() {
				return // cut off by the hard stop, or lost as the run ends: no outage
			}
			if !c.offLoop(func() bool { return c.reconnect(ctx, err, 1) }) {
				return
			}
			break
		}
		if !arrival.IsZero() {
			c.rate.lag(phase, ev.Lag)
		}
		if cfg.ConnectPerTx && c.w != nil {
			t0 := time.Now()
			c.close()
			c.r.connectNs.Add(int64(time.Since(t0)))
		}
		c.finish(ev, phase)
		if s.ThinkMean > 0 && cfg.Rate == 0 {
			// Exponential with the given mean, cut at ten times it (TPC-C 5.2.5.4).
			u := float64(c.rng.Uint64()>>11) * 0x1p-53 // [0, 1)
			think := time.Duration(-math.Log(max(1e-12, 1-u)) * float64(s.ThinkMean))
			if !c.sleep(min(think, 10*s.ThinkMean)) {
				return
			}
		}
	}
}

// The ends of a transaction, the same on every transport; each returns the phase the
// transaction counts in.

// completed records transaction ev, committed or rolled back on purpose, and
// counts it late past Config.LatencyLimit.
func (c *client) completed(ev TxEvent, rolledBack bool) Phase {
	phase := c.r.record(c.hist, ev.Script, ev.Start, ev.End, ev.Tries > 1, rolledBack)
	if lim := c.r.cfg.LatencyLimit; lim > 0 && ev.End.Sub(ev.Start) > lim {
		c.rate.late[phase]++
		c.rate.tickLate.Add(1)
	}
	return phase
}

// aborted counts transaction ev, after which its client stops on ab: the script
// cannot go on, as pgbench aborts a client.
func (c *client) aborted(ev TxEvent, ab *Abort) {
	if ab.Done {
		c.r.record(c.hist, ev.Script, ev.Start, ev.End, ev.Tries > 1, false)
		ev.Failed = false
		if c.r.cfg.OnTransaction != nil {
			c.r.cfg.OnTransaction(ev)
		}
	}
	c.r.abortClient(ev.Script, ev.End, ab, ev.Tries > 1)
}

// retrying tells whether try of script si, failed with pe, is tried again, and
// counts the retry.
func (c *client) retrying(si int, pe *pgconn.PgError, try int) bool {
	if !retryable(c.r.cfg.Scripts[si], pe.Code) || try >= c.r.cfg.MaxTries || c.r.stopping.Load() {
		return false
	}
	c.r.retry(si, pe)
	return true
}

// failedTx counts transaction ev failed with the SQL error pe.
func (c *client) failedTx(ev *TxEvent, pe *pgconn.PgError) Phase {
	ev.Failed, ev.SQLState = true, pe.Code
	return c.r.fail(ev.Script, ev.End, pe.Code, "", pe.Message, ev.Tries > 1)
}

// lostTx counts transaction ev lost with the connection, which err ended, and drops it.
func (c *client) lostTx(ev *TxEvent, err error) Phase {
	ev.Failed, ev.SQLState = true, connectionState(err)
	phase := c.r.fail(ev.Script, ev.End, ev.SQLState, Cause(err), err.Error(), ev.Tries > 1)
	c.dropConn()
	return phase
}

// finish does what follows every transaction: the callback, and the statements of
// every try counted in the phase the transaction ended in.
func (c *client) finish(ev TxEvent, phase Phase) {
	if c.r.cfg.OnTransaction != nil {
		c.r.cfg.OnTransaction(ev)
	}
	c.queries[ev.Script][phase].Add(c.stmts)
	c.stmts = Queries{}
	c.done++
}

// connectAgain makes the client's connection before a transaction: after the last
// one closed it (Config.ConnectPerTx), counted and timed, else after it was lost;
// false means the run stopped first.
func (c *client) connectAgain(ctx context.Context) bool {
	if !c.r.cfg.ConnectPerTx || c.r.stopping.Load() {
		return c.reconnect(ctx, errClosed, 0)
	}
	t0 := time.Now()
	err := c.connect(ctx)
	if err != nil {
		return !c.r.stopping.Load() && c.reconnect(ctx, err, 0)
	}
	c.r.connects.Add(1)
	c.r.connectNs.Add(int64(time.Since(t0)))
	return true
}

// timer sleeps on one Go timer made once, for sleeps before many transactions
// (pgbench's \sleep, TPC-C's think times, the open-loop pacer).
type timer struct{ t *time.Timer }

// sleep waits for d; false if stop or done closed first (a nil one never does).
func (t *timer) sleep(d time.Duration, stop, done <-chan struct{}) bool {
	if t.t == nil {
		t.t = time.NewTimer(d)
	} else {
		t.t.Reset(d)
	}
	select {
	case <-t.t.C:
		return true
	case <-stop:
	case <-done:
	}
	t.t.Stop()
	return false
}

func retryable(s *Script, code string) bool {
	return code == "40001" || code == "40P01" || slices.Contains(s.RetryStates, code)
}

// connectionState classifies a lost connection: SQLSTATE 08006 (connection failure)
// unless the server said why.
func connectionState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code != "" {
		return pe.Code
	}
	return "08006"
}

// exec runs script s once. A *pgconn.PgError is an SQL error with the connection
// still usable (any open transaction has been rolled back); any other error means the
// connection is lost.
func (c *client) exec(si int, s *Script) error {
	w := c.w
	for ci := range s.Commands {
		c.request(si, ci)
		if err := w.flush(); err != nil {
			return err
		}
		if err := w.await(); err != nil {
			return err
		}
		if w.err != nil {
			pe := w.err
			if w.status != 'I' {
				w.appendQuery([]byte("ROLLBACK"))
				if err := w.flush(); err != nil {
					return err
				}
				if err := w.await(); err != nil {
					return err
				}
			}
			return pe
		}
	}
	return nil
}

// request appends statement ci of script si, with the transaction's values, to the
// wire's output.
func (c *client) request(si, ci int) {
	w := c.w
	cmd := &c.r.cfg.Scripts[si].Commands[ci]
	c.params = c.params[:0]
	for _, p := range cmd.Params {
		c.params = append(c.params, c.vals[p])
	}
	switch c.r.cfg.Protocol {
	case Prepared:
		w.appendBind(c.r.names[si][ci], c.params)
		w.appendExecuteSync()
	case Extended:
		appendParse(w, cmd.SQL)
		w.appendBind("", c.params)
		w.appendExecuteSync()
	case Simple:
		c.text = c.text[:0]
		parts, order := c.parts[si][ci], c.order[si][ci]
		for i, p := range order {
			c.text = append(c.text, parts[i]...)
			c.text = strconv.AppendInt(c.text, c.params[p], 10)
		}
		c.text = append(c.text, parts[len(parts)-1]...)
		w.appendQuery(c.text)
	}
}
