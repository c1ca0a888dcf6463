package driver

import (
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
)

// A Stepper is a transaction written as steps: rather than waiting for each answer,
// it writes a request into the session and returns, and is called again with the
// answer, whatever waits for it (tx.go). Every script runs as one: a script of
// Commands, a Program (program, in coro.go) and pgbench's script files.
//
// Start begins an attempt of the transaction (Session.Attempt), Resume goes on after
// what the last step waited for. Each returns Await once it has written a request
// (RequestPrepared, RequestSQL, RequestText, RequestPipelineEnd), Pause after
// Session.Pause, or Finished with the transaction's outcome, an error as a Program
// returns one. Resume's answer is the request's outcome: nil, a *pgconn.PgError
// (the connection is usable) or ErrCopy; a lost connection never reaches it.
type Stepper interface {
	Start(s *Session) (Step, error)
	Resume(s *Session, answer error) (Step, error)
}

// Step is what a Stepper waits for next.
type Step uint8

const (
	Finished Step = iota // the transaction is over, with the error returned
	Await                // the answer to the request written
	Pause                // the time given to Session.Pause
)

// RequestPrepared writes an execution of prepared statement i with the parameters
// added since, for a Stepper to await; with results set the answer's rows are kept,
// and its result sets apart with their column names (Results, Result, Columns).
func (s *Session) RequestPrepared(i int, results bool) {
	s.requestBound(s.c.r.names[s.si][i], results)
}

// RequestSQL writes sql, parsed as the unnamed statement, with the parameters added
// since (the extended protocol, one statement).
func (s *Session) RequestSQL(sql []byte, results bool) {
	pgwire.AppendParse(s.c.w, sql)
	s.requestBound("", results)
}

// RequestText writes sql with the simple protocol; it may hold several statements,
// each answering with its own result.
func (s *Session) RequestText(sql []byte, results bool) {
	s.c.w.AppendQuery(sql)
	s.c.w.KeepResults(results)
}

// RequestPipelineEnd writes the Sync that ends a pipeline (see SendPrepared); the
// answer is the first error among all of the pipeline's statements.
func (s *Session) RequestPipelineEnd() { s.c.w.AppendSync() }

func (s *Session) requestBound(stmt string, results bool) {
	s.bind(stmt)
	if results {
		s.c.w.AppendDescribePortal()
	}
	s.c.w.AppendExecuteSync()
	s.c.w.KeepResults(results)
}

// Pause sets the pause a Stepper returns Pause for; it counts in the transaction's
// latency, as a Program's Sleep does.
func (s *Session) Pause(d time.Duration) { s.pause = d }
