package driver

import (
	"context"
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/pacing"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
)

// client is one benchmark connection and the loop that drives it.
type client struct {
	id     int
	r      *runner
	mu     sync.Mutex // guards swaps of w against the runner's deadline setting
	w      *pgwire.Conn
	spare  *pgwire.Conn // the last closed: the next takes its buffers, not new ones all at once after a crash
	rng    *rand.PCG
	hist   *histogram.Worker
	vals   []int64
	params []int64
	done   int // transactions finished, for --transactions
	// commits are the server transactions its answers committed (pgwire.Conn.Commits).
	commits int64
	sess    Session
	deck    []int // script indices still to deal, with Config.Deck
	// rearm is when the connection's deadline must next be moved for
	// Config.TxTimeout; never without one.
	rearm time.Time
	waits *atomic.Int64 // answers waited for on a Unix-domain socket, for runner.waits
	// stmts counts the statements of the transaction under way (the connection adds
	// to it); queries, per script and phase, those of the transactions that ended.
	stmts   Queries
	queries [][phases]Queries
	rate    rateStats // with Config.Rate or Config.LatencyLimit
	timer   pacing.Timer
	tx      txState // its transaction under way (tx.go)
	wake    int64   // with wantPause: when the pause ends, monotonic nanoseconds
	// With event loops: whether the client is on one, its index there, what it
	// waits for there, and whether its socket is out of the epoll set while it
	// waits for anything but an answer (evloop.mute).
	onLoop  bool
	slot    int
	waiting want
	muted   bool
	// connectOK is whether the connection made away from the loop was made;
	// moved is set while the client moves to another loop (evloop.move).
	connectOK bool
	moved     bool
	co        *coro // its programs' coroutine on its loop (coro.go)
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
		c.w.SetDeadline(d)
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

// lostTx counts transaction ev lost with the connection, which err ended.
func (c *client) lostTx(ev *TxEvent, err error) Phase {
	ev.Failed, ev.SQLState = true, connectionState(err)
	return c.r.fail(ev.Script, ev.End, ev.SQLState, connfail.Cause(err), err.Error(), ev.Tries > 1)
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
		return c.reconnect(ctx, pgwire.ErrClosed, 0)
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

// request appends statement ci of script si, with the transaction's values, to the
// connection's output.
func (c *client) request(si, ci int) {
	c.params = c.params[:0]
	for _, p := range c.r.cfg.Scripts[si].Commands[ci].Params {
		c.params = append(c.params, c.vals[p])
	}
	c.w.AppendStatement(c.r.stmts[si][ci], c.params)
}
