package pgwire

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrClosed means the server ended the session (FATAL error or EOF).
var ErrClosed = errors.New("server closed the connection")

// ErrCopy is what a statement that started COPY returns: a script has no data to
// send and nowhere to put what it would receive.
var ErrCopy = errors.New("COPY is not supported in scripts")

// Await reads responses until the ReadyForQuery of the last exchange sent, counting
// that exchange's rows and keeping the first error of all. A FATAL error or a read
// failure returns a non-nil error: the connection is gone.
func (c *Conn) Await() error {
	c.rows, c.err, c.copied = 0, nil, false
	c.kept, c.rowAt, c.sets = c.kept[:0], c.rowAt[:0], c.sets[:0]
	// Commits are counted from what the statements report: one for each COMMIT of
	// a block, and one for each implicit transaction (statements outside a block up
	// to a ReadyForQuery) that ends well.
	a := answer{sets: c.results, inBlock: c.status != 'I', extended: c.extended}
	c.results, c.extended = false, false
	for {
		t, body, err := c.next()
		if err != nil {
			return err
		}
		switch t {
		case 'C', 'I':
			c.completed(&a, t, body)
		case 'T':
			if a.sets {
				c.sets = append(c.sets, resultSet{desc: len(c.kept), descEnd: len(c.kept) + len(body), first: len(c.rowAt)})
				c.kept = append(c.kept, body...)
				a.open = true
			}
		case 'D':
			c.rows++
			if c.keep {
				c.rowAt = append(c.rowAt, len(c.kept))
				c.kept = append(c.kept, body...)
			}
		case 'Z':
			if c.ready(&a, body) {
				return nil
			}
		case 'G':
			if err := c.refuseCopy(a.extended); err != nil {
				return err
			}
		case 'H': // CopyOutResponse: its data rows ('d') and end ('c') are passed over
			c.copied = true
		case 'E':
			if !a.inBlock {
				a.implicit = false // the implicit transaction rolls back
			}
			pe := parseError(body)
			if c.err == nil {
				c.err = pe
			}
			if pe.Severity == "FATAL" || pe.Severity == "PANIC" {
				return fmt.Errorf("%w: %w", ErrClosed, pe)
			}
		}
		// '1' ParseComplete, '2' BindComplete, 'n' NoData, 'N' notices,
		// 'S' parameter status and 'A' notifications need no action.
	}
}

// answer is where await is in an answer.
type answer struct {
	sets     bool // keep each result apart (KeepResults)
	open     bool // a result set has begun and not completed
	rowsAt   int  // Conn.rows when the statement now answering began
	inBlock  bool // inside a transaction block
	implicit bool // statements run outside a block since the last ReadyForQuery
	extended bool // the request used the extended protocol
}

// completed follows a statement's CommandComplete (t 'C', its tag in body) or an
// empty query's response ('I').
func (c *Conn) completed(a *answer, t byte, body []byte) {
	if t == 'C' {
		a.inBlock, a.implicit = c.countTag(body, a.inBlock, a.implicit)
		if c.Stmts != nil {
			c.Stmts.count(body, c.rows > a.rowsAt)
		}
	} else if !a.inBlock {
		a.implicit = true // an empty statement starts and commits a transaction too
	}
	a.rowsAt = c.rows
	if a.sets {
		if !a.open {
			c.sets = append(c.sets, resultSet{desc: -1, first: len(c.rowAt), last: len(c.rowAt)})
		}
		c.sets[len(c.sets)-1].last = len(c.rowAt)
		a.open = false
	}
}

// ready follows a ReadyForQuery, whose body is the transaction status, and tells
// whether it ends the answer: else it ended an exchange queued ahead, whose results
// are not kept.
func (c *Conn) ready(a *answer, body []byte) bool {
	if len(body) > 0 {
		if a.implicit && body[0] == 'I' {
			c.commit()
		}
		c.status = body[0]
	}
	a.inBlock, a.implicit = c.status != 'I', false
	if c.queued == 0 {
		return true
	}
	c.queued--
	c.rows, a.rowsAt = 0, 0
	c.kept, c.rowAt, c.sets = c.kept[:0], c.rowAt[:0], c.sets[:0]
	return false
}

// refuseCopy answers a CopyInResponse: it sends no data but a failure, so that the
// server ends the COPY.
func (c *Conn) refuseCopy(extended bool) error {
	c.copied = true
	at := c.beginMsg('f')
	c.out = append(c.out, ErrCopy.Error()...)
	c.out = append(c.out, 0)
	c.endMsg(at)
	if extended {
		// The server ignored the Sync sent with the statement while it waited for
		// data; after the failure it waits for another.
		c.AppendSync()
	}
	return c.writeNow()
}

// commit counts a transaction the server committed.
func (c *Conn) commit() {
	if c.Commits != nil {
		*c.Commits++
	}
}

// countTag follows transaction blocks through a statement's CommandComplete tag:
// BEGIN opens one (statements already run in the implicit transaction join it),
// COMMIT of a block commits it, ROLLBACK ends it (a COMMIT of a failed block
// reports ROLLBACK), PREPARE TRANSACTION ends it without a commit, and any other
// statement outside a block is part of an implicit transaction.
func (c *Conn) countTag(tag []byte, inBlock, implicit bool) (bool, bool) {
	tag = bytes.TrimRight(tag, "\x00")
	switch {
	case bytes.Equal(tag, []byte("BEGIN")), bytes.Equal(tag, []byte("START TRANSACTION")):
		return true, false
	case bytes.Equal(tag, []byte("COMMIT")):
		if inBlock {
			c.commit()
			return false, false
		}
		return false, true // COMMIT outside a block: a warning, and a transaction of its own
	case bytes.Equal(tag, []byte("ROLLBACK")), bytes.Equal(tag, []byte("PREPARE TRANSACTION")):
		return false, false
	}
	if !inBlock {
		implicit = true
	}
	return inBlock, implicit
}

// parseError decodes an ErrorResponse body into pgx's error type, so errors
// are classified by SQLSTATE exactly as pgx would.
func parseError(body []byte) *pgconn.PgError {
	pe := &pgconn.PgError{}
	for len(body) > 0 && body[0] != 0 {
		field := body[0]
		end := 1
		for end < len(body) && body[end] != 0 {
			end++
		}
		v := string(body[1:end])
		switch field {
		case 'V':
			pe.Severity = v
		case 'S':
			if pe.Severity == "" {
				pe.Severity = v
			}
		case 'C':
			pe.Code = v
		case 'M':
			pe.Message = v
		case 'D':
			pe.Detail = v
		case 'H':
			pe.Hint = v
		}
		if end >= len(body) {
			break
		}
		body = body[end+1:]
	}
	return pe
}
