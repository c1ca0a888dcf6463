package driver

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
)

// ErrRollback is what a Program returns after rolling its transaction back on purpose,
// as TPC-C's New-Order does for an unused item number. The transaction is counted as
// rolled back, not as failed, and its latency is recorded.
var ErrRollback = errors.New("rolled back on purpose")

// Abort is what a Program returns when its client cannot go on, as pgbench aborts a
// client on a script error (an expression that fails, a \gset without its row): the
// transaction counts as failed, with cause CauseAborted, and the client stops.
//
// With Done set the transaction itself completed and counts as such; the client
// stops after it (pgbench: a script that ends inside a transaction block).
type Abort struct {
	Err  error
	Done bool
}

func (a *Abort) Error() string { return a.Err.Error() }
func (a *Abort) Unwrap() error { return a.Err }

// CauseAborted is the cause of the failure that stopped a client (see Abort).
const CauseAborted = "client aborted"

// Session is a Program's view of its connection for one transaction: it prepares
// parameters, runs the script's prepared statements and reads their results. Values
// returned by Value alias a buffer that the next Exec reuses.
type Session struct {
	c       *client
	si      int
	attempt int
	params  packedParams
	pause   time.Duration // a Stepper's (Pause)
	stopped bool          // the last pause was cut short by the run's stop
	co      *coro         // a Program's coroutine on an event loop
}

// Attempt is which try of the transaction this is, from 1 (see Config.MaxTries).
func (s *Session) Attempt() int { return s.attempt }

// Client is the number of the client running the program, from 0.
func (s *Session) Client() int { return s.c.id }

// Clients is how many clients the run has.
func (s *Session) Clients() int { return s.c.r.cfg.AllClients }

// Draw draws a key from d with the client's random source.
func (s *Session) Draw(d *keydist.Dist) int64 { return d.Draw(s.c.rng) }

// Rand is the client's random source, for values a program draws itself (random
// strings); it must not be kept beyond the transaction.
func (s *Session) Rand() rand.Source { return s.c.rng }

// Uniform draws an integer from [lo, hi].
func (s *Session) Uniform(lo, hi int64) int64 { return s.c.uniform(lo, hi) }

// Int adds an integer parameter for the next Exec.
func (s *Session) Int(v int64) *Session {
	s.params.buf = strconv.AppendInt(s.params.buf, v, 10)
	s.params.end()
	return s
}

// Text adds a text parameter.
func (s *Session) Text(v []byte) *Session {
	s.params.buf = append(s.params.buf, v...)
	s.params.end()
	return s
}

// Param starts a parameter written by the caller with Append..., ended by EndParam;
// for values such as arrays that are built piece by piece.
func (s *Session) Param() []byte { return s.params.buf }

// EndParam ends the parameter whose bytes the caller appended to Param's result.
func (s *Session) EndParam(buf []byte) *Session {
	s.params.buf = buf
	s.params.end()
	return s
}

// Null adds a NULL parameter.
func (s *Session) Null() *Session {
	s.params.ends = append(s.params.ends, -1)
	return s
}

// Exec runs statement i of the script (Script.Statements) with the parameters added
// since the last Exec and waits for the result. A *pgconn.PgError means the statement
// failed and the connection is usable (an open transaction is then in the aborted
// state until the program returns its error, and the driver rolls it back); any
// other error means the connection is lost.
func (s *Session) Exec(i int) error {
	w := s.c.w
	w.appendBindText(s.c.r.names[s.si][i], &s.params)
	w.appendExecuteSync()
	s.params.reset()
	return s.roundTrip()
}

// Query sends a fixed statement with the simple protocol (BEGIN, COMMIT, ROLLBACK).
func (s *Session) Query(sql []byte) error {
	s.c.w.appendQuery(sql)
	return s.roundTrip()
}

// The methods below read the answers of requests a Stepper wrote (steps.go): with
// results set, the answer's rows are kept and its result sets apart with their
// column names.

// Results is how many results the last request kept (see RequestPrepared).
func (s *Session) Results() int { return len(s.c.w.sets) }

// Result describes result r: whether it has rows at all (a result set, even an
// empty one, as opposed to a command's completion), and its rows, for Value, as
// rows first to last-1.
func (s *Session) Result(r int) (tuples bool, first, last int) {
	rs := s.c.w.sets[r]
	return rs.desc >= 0, rs.first, rs.last
}

// Columns calls f with each column name of result r, in order; the name aliases a
// buffer the next statement reuses.
func (s *Session) Columns(r int, f func(i int, name []byte) error) error {
	rs := s.c.w.sets[r]
	if rs.desc < 0 {
		return nil
	}
	b := s.c.w.kept[rs.desc:rs.descEnd]
	if len(b) < 2 {
		return nil
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	for i := 0; i < n; i++ {
		end := 0
		for end < len(b) && b[end] != 0 {
			end++
		}
		if err := f(i, b[:end]); err != nil {
			return err
		}
		if end+19 > len(b) {
			break
		}
		b = b[end+19:] // the name's NUL and 18 bytes of table, column, type and format
	}
	return nil
}

// InTransaction reports whether the session is inside a transaction block.
func (s *Session) InTransaction() bool { return s.c.w.status != 'I' }

// Sleep pauses the transaction for d; false means the run is stopping.
func (s *Session) Sleep(d time.Duration) bool {
	if d <= 0 {
		return !s.c.r.stopping.Load()
	}
	if co := s.co; co != nil {
		s.pause = d
		return co.yield(Pause, nil) && !s.stopped
	}
	return s.c.timer.sleep(d, s.c.r.stop, nil) && !s.c.r.stopping.Load()
}

// InWindow reports whether t falls in the measured window.
func (s *Session) InWindow(t time.Time) bool { return s.c.r.phaseOf(t) == Measure }

// Stopping reports whether the run is ending.
func (s *Session) Stopping() bool { return s.c.r.stopping.Load() }

// Send queues statement i with the parameters added since the last Exec, to go out
// with the next Exec or Query in the same write. That call waits for every queued
// answer too and returns the first error among them; Rows and Value then describe
// its own result only. A program queues what it needs no answer to before going on,
// such as the INSERT before COMMIT, so that the pair costs one round trip. Each
// queued statement is its own protocol exchange: one that fails does not stop the
// next, but inside a transaction block the next then fails as the block is aborted,
// and a queued COMMIT becomes a rollback.
func (s *Session) Send(i int) *Session {
	w := s.c.w
	w.appendBindText(s.c.r.names[s.si][i], &s.params)
	w.appendExecuteSync()
	w.queued++
	s.params.reset()
	return s
}

// SendQuery queues a fixed statement as Send does; BEGIN queued before the first
// statement of a transaction costs no round trip of its own.
func (s *Session) SendQuery(sql []byte) *Session {
	s.c.w.appendQuery(sql)
	s.c.w.queued++
	return s
}

func (s *Session) roundTrip() error {
	if co := s.co; co != nil {
		if !co.yield(Await, nil) {
			return errAbandoned
		}
		return co.answer
	}
	w := s.c.w
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.await(); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	return nil
}

// answer is the outcome of a request whose answer has been read: the first SQL
// error among its statements, or ErrCopy.
func (s *Session) answer() error {
	w := s.c.w
	if w.copied {
		return ErrCopy
	}
	if w.err != nil {
		return w.err
	}
	return nil
}

// ErrCopy is what a statement that started COPY returns: a script has no data to
// send and nowhere to put what it would receive.
var ErrCopy = errors.New("COPY is not supported in scripts")

// Pending is how many bytes of statements wait to be sent (in a pipeline).
func (s *Session) Pending() int { return len(s.c.w.out) }

// In a pipeline (pgbench's \startpipeline) statements go out without waiting for
// their answers: SendPrepared and SendSQL queue them without a Sync, PipelineSync
// ends the implicit transaction so far, and RequestPipelineEnd writes the last Sync,
// whose answer is every statement's, with the first error.

// SendPrepared queues prepared statement i with the parameters added since.
func (s *Session) SendPrepared(i int) {
	w := s.c.w
	w.appendBindText(s.c.r.names[s.si][i], &s.params)
	w.appendExecute()
	s.params.reset()
}

// SendSQL queues sql, parsed as the unnamed statement, with the parameters added since.
func (s *Session) SendSQL(sql []byte) {
	w := s.c.w
	appendParse(w, sql)
	w.appendBindText("", &s.params)
	w.appendExecute()
	s.params.reset()
}

// PipelineSync queues a Sync.
func (s *Session) PipelineSync() {
	s.c.w.appendSync()
	s.c.w.queued++
}

// Rows is how many rows the last Exec returned.
func (s *Session) Rows() int { return len(s.c.w.rowAt) }

// Value is column col of row row of the last result in text form; nil for NULL.
func (s *Session) Value(row, col int) []byte {
	w := s.c.w
	b := w.kept[w.rowAt[row]:]
	if row+1 < len(w.rowAt) {
		b = w.kept[w.rowAt[row]:w.rowAt[row+1]]
	}
	if len(b) < 2 || col >= int(binary.BigEndian.Uint16(b)) {
		return nil
	}
	b = b[2:]
	for i := 0; ; i++ {
		n := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if i == col {
			if n < 0 {
				return nil
			}
			return b[:n]
		}
		if n > 0 {
			b = b[n:]
		}
	}
}

// IntValue is Value parsed as an integer; 0 for NULL or text that is not one.
func (s *Session) IntValue(row, col int) int64 {
	v := s.Value(row, col)
	var n int64
	neg := false
	for i, ch := range v {
		switch {
		case ch == '-' && i == 0:
			neg = true
		case ch >= '0' && ch <= '9':
			n = n*10 + int64(ch-'0')
		default:
			if neg {
				return -n
			}
			return n
		}
	}
	if neg {
		return -n
	}
	return n
}

// session readies the client's Session for a try of its transaction. Only Steps
// and Programs read their answers' rows.
func (c *client) session() *Session {
	sess := &c.sess
	sess.c, sess.si, sess.attempt = c, c.tx.si, c.tx.try
	sess.params.reset()
	c.w.keep = c.r.cfg.Scripts[c.tx.si].Commands == nil
	return sess
}
