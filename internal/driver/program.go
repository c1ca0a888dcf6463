package driver

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
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
	params  pgwire.Params
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
	s.params.Int(v)
	return s
}

// Text adds a text parameter.
func (s *Session) Text(v []byte) *Session {
	s.params.Text(v)
	return s
}

// Param starts a parameter written by the caller with Append..., ended by EndParam;
// for values such as arrays that are built piece by piece.
func (s *Session) Param() []byte { return s.params.Start() }

// EndParam ends the parameter whose bytes the caller appended to Param's result.
func (s *Session) EndParam(buf []byte) *Session {
	s.params.End(buf)
	return s
}

// Null adds a NULL parameter.
func (s *Session) Null() *Session {
	s.params.Null()
	return s
}

// Exec runs statement i of the script (Script.Statements) with the parameters added
// since the last Exec and waits for the result. A *pgconn.PgError means the statement
// failed and the connection is usable (an open transaction is then in the aborted
// state until the program returns its error, and the driver rolls it back); any
// other error means the connection is lost.
func (s *Session) Exec(i int) error {
	s.bind(s.c.r.names[s.si][i])
	s.c.w.AppendExecuteSync()
	return s.roundTrip()
}

// Query sends a fixed statement with the simple protocol (BEGIN, COMMIT, ROLLBACK).
func (s *Session) Query(sql []byte) error {
	s.c.w.AppendQuery(sql)
	return s.roundTrip()
}

// The methods below read the answers of requests a Stepper wrote (steps.go): with
// results set, the answer's rows are kept and its result sets apart with their
// column names.

// Results is how many results the last request kept (see RequestPrepared).
func (s *Session) Results() int { return s.c.w.Results() }

// Result describes result r: whether it has rows at all (a result set, even an
// empty one, as opposed to a command's completion), and its rows, for Value, as
// rows first to last-1.
func (s *Session) Result(r int) (tuples bool, first, last int) { return s.c.w.Result(r) }

// Columns calls f with each column name of result r, in order; the name aliases a
// buffer the next statement reuses.
func (s *Session) Columns(r int, f func(i int, name []byte) error) error {
	return s.c.w.Columns(r, f)
}

// InTransaction reports whether the session is inside a transaction block.
func (s *Session) InTransaction() bool { return s.c.w.InTransaction() }

// Sleep pauses the transaction for d; false means the run is stopping.
func (s *Session) Sleep(d time.Duration) bool {
	if d <= 0 {
		return !s.c.r.stopping.Load()
	}
	if co := s.co; co != nil {
		s.pause = d
		return co.yield(Pause, nil) && !s.stopped
	}
	return s.c.timer.Sleep(d, s.c.r.stop, nil) && !s.c.r.stopping.Load()
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
	s.bind(s.c.r.names[s.si][i])
	s.c.w.AppendExecuteSync()
	s.c.w.Queue()
	return s
}

// SendQuery queues a fixed statement as Send does; BEGIN queued before the first
// statement of a transaction costs no round trip of its own.
func (s *Session) SendQuery(sql []byte) *Session {
	s.c.w.AppendQuery(sql)
	s.c.w.Queue()
	return s
}

func (s *Session) roundTrip() error {
	if co := s.co; co != nil {
		if !co.yield(Await, nil) {
			return errAbandoned
		}
		return co.answer
	}
	if err := s.c.w.RoundTrip(); err != nil {
		return err
	}
	if pe := s.c.w.Err(); pe != nil {
		return pe
	}
	return nil
}

// ErrCopy is what a statement that started COPY returns: a script has no data to
// send and nowhere to put what it would receive.
var ErrCopy = pgwire.ErrCopy

// Pending is how many bytes of statements wait to be sent (in a pipeline).
func (s *Session) Pending() int { return s.c.w.Pending() }

// In a pipeline (pgbench's \startpipeline) statements go out without waiting for
// their answers: SendPrepared and SendSQL queue them without a Sync, PipelineSync
// ends the implicit transaction so far, and RequestPipelineEnd writes the last Sync,
// whose answer is every statement's, with the first error.

// SendPrepared queues prepared statement i with the parameters added since.
func (s *Session) SendPrepared(i int) {
	s.bind(s.c.r.names[s.si][i])
	s.c.w.AppendExecute()
}

// SendSQL queues sql, parsed as the unnamed statement, with the parameters added since.
func (s *Session) SendSQL(sql []byte) {
	pgwire.AppendParse(s.c.w, sql)
	s.bind("")
	s.c.w.AppendExecute()
}

// bind writes a Bind of stmt, prepared ("" for the unnamed statement), with the
// parameters added since, and readies them for the next statement.
func (s *Session) bind(stmt string) {
	s.c.w.AppendBindText(stmt, &s.params)
	s.params.Reset()
}

// PipelineSync queues a Sync.
func (s *Session) PipelineSync() {
	s.c.w.AppendSync()
	s.c.w.Queue()
}

// Rows is how many rows the last Exec returned.
func (s *Session) Rows() int { return s.c.w.KeptRows() }

// Value is column col of row row of the last result in text form; nil for NULL.
func (s *Session) Value(row, col int) []byte { return s.c.w.Value(row, col) }

// IntValue is Value parsed as an integer; 0 for NULL or text that is not one.
func (s *Session) IntValue(row, col int) int64 { return s.c.w.IntValue(row, col) }

// session readies the client's Session for a try of its transaction. Only Steps
// and Programs read their answers' rows.
func (c *client) session() *Session {
	sess := &c.sess
	sess.c, sess.si, sess.attempt = c, c.tx.si, c.tx.try
	sess.params.Reset()
	c.w.KeepRows(c.r.cfg.Scripts[c.tx.si].Commands == nil)
	return sess
}
