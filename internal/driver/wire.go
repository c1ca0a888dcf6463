package driver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// wire speaks just enough of the PostgreSQL frontend/backend protocol (version 3) to
// run benchmark transactions without allocating: requests are built into one reused
// buffer and sent with one write, responses are parsed in place from one reused read
// buffer. pgx establishes the connection (TLS, authentication, .pgpass) and prepares
// statements; the connection is then hijacked for the hot path.
//
// Written by hand because a general driver's per-call allocations and goroutine
// hand-offs cost more client CPU per transaction than pgbench spends, and on a machine
// the client shares with the server that CPU is taken from the server.
type wire struct {
	nc  net.Conn        // closed at once when blocking
	raw syscall.RawConn // nil for TLS and off Linux (then reads and writes go through nc), and when blocking
	// With a raw connection the request is written from inside the read callback:
	// Go's RawConn.Read forgets any readiness seen before it starts, so a request
	// written earlier could be answered before the wait begins and the answer would
	// never be noticed. Written inside, the first read can wait for readiness instead
	// of trying a read that fails with EAGAIN: one system call less per round trip.
	pending bool // out holds a request not yet written
	readFn  func(fd uintptr) bool
	nread   int
	rerr    error
	// werr is a write's broken pipe or reset, or an event loop's failed read, kept
	// until the server's last words have been read.
	werr error
	// On an event loop, how far answered has looked at an answer coming in pieces:
	// the bytes of whole messages past r it has passed, and the ReadyForQuery
	// messages still to come (0 before it starts; see evloop.send).
	scanned, scanNeed int

	out  []byte
	in   []byte // read buffer
	r, w int    // unread bytes are in[r:w]
	// Results of the last exchange.
	rows int
	// With keep set, await copies each DataRow's body into kept, starting at
	// rowAt[i]; programs read result values from there.
	keep   bool
	kept   []byte
	rowAt  []int
	status byte // transaction status from ReadyForQuery: 'I', 'T' or 'E'
	// With results set (for the next exchange only), await also keeps each
	// result apart in sets, with its RowDescription's body in kept.
	results bool
	sets    []resultSet
	// extended is set when the exchange being sent uses the extended protocol.
	extended bool
	// copied is set when the last await met COPY, which a script cannot feed: a
	// COPY FROM STDIN was failed at once, a COPY TO STDOUT's data read and dropped.
	copied bool
	// commits counts, for its client, the exchanges that committed, as each
	// answer is read: each that ran a statement and ended (ReadyForQuery) idle
	// without an error, and did not end a failed block.
	commits *int64
	// stmts, when set, counts the statements completed, as Queries describes.
	stmts *Queries
	err   *pgconn.PgError
	// queued counts the exchanges (each ending in Sync or a simple Query) sent ahead
	// of the last one; await reads their answers first and keeps only their errors.
	queued int
	// With blocking set (Config.ThreadPerClient) the connection is fd, a blocking
	// socket out of Go's poller, and reads sleep in the kernel, holding the
	// goroutine's thread, until the answer arrives. deadline (unix nanoseconds, 0 for
	// none) then replaces the net.Conn's deadlines; it is checked each time a read or
	// write has waited blockingTick, so it cuts off a stalled connection, not one that
	// is still delivering an answer bytes at a time. An event loop (also blocking)
	// checks it every blockingTick and cuts off any transaction past it.
	//
	// On a Unix-domain socket a read sleeping on the socket is also woken, for
	// nothing, each time the server takes in the request, since it frees send-buffer
	// space; poll wakes only for data. Which way costs less depends on the workload:
	// waits (see waitChooser) picks it by measuring both, and waitCount counts the
	// waits for it. TCP wakes a reader only for data, so there the read always waits
	// itself, a system call fewer.
	blocking  bool
	unixSock  bool
	waits     *waitChooser
	waitCount *atomic.Int64
	fd        int
	deadline  atomic.Int64
	yieldAt   int64 // unix nanoseconds: when readBlocking next yields (see yieldEvery)
}

// resultSet is one result of an exchange: its rows are rowAt[first:last], and
// kept[desc:descEnd] its RowDescription (desc -1 for a command without rows).
type resultSet struct {
	desc, descEnd int
	first, last   int
}

// close closes the connection.
func (c *wire) close() {
	if c.blocking {
		c.closeBlocking()
		return
	}
	c.nc.Close()
}

// setDeadline makes reads and writes fail with os.ErrDeadlineExceeded from t on.
func (c *wire) setDeadline(t time.Time) {
	if c.blocking {
		c.deadline.Store(t.UnixNano())
		return
	}
	c.nc.SetDeadline(t)
}

// sendFailed keeps a write's broken pipe or connection reset for the read that
// follows. A server that ends the session (terminated: 57P01) sends a FATAL error
// before closing; a request written after that fails, and the error that says why
// is still in the socket. The read returns it, or this error once the socket is
// drained without one.
func (c *wire) sendFailed(err error) bool {
	if err == syscall.EPIPE || err == syscall.ECONNRESET {
		c.werr = err
		return true
	}
	return false
}

// beginMsg appends a message type and a length placeholder; endMsg fills the length.
func (c *wire) beginMsg(t byte) int {
	c.out = append(c.out, t, 0, 0, 0, 0)
	return len(c.out) - 4
}

func (c *wire) endMsg(at int) {
	binary.BigEndian.PutUint32(c.out[at:], uint32(len(c.out)-at))
}

// appendBind appends Bind for the named prepared statement (or "" for the unnamed
// one) with text parameters, all results in text.
func (c *wire) appendBind(stmt string, params []int64) {
	c.extended = true
	at := c.beginMsg('B')
	c.out = append(c.out, 0) // unnamed portal
	c.out = append(c.out, stmt...)
	c.out = append(c.out, 0, 0, 0) // statement name end, 0 parameter format codes (all text)
	c.out = binary.BigEndian.AppendUint16(c.out, uint16(len(params)))
	for _, v := range params {
		lenAt := len(c.out)
		c.out = append(c.out, 0, 0, 0, 0)
		c.out = strconv.AppendInt(c.out, v, 10)
		binary.BigEndian.PutUint32(c.out[lenAt:], uint32(len(c.out)-lenAt-4))
	}
	c.out = append(c.out, 0, 0) // 0 result format codes (all text)
	c.endMsg(at)
}

// appendBindText appends Bind for the named prepared statement with the text
// parameters in p, all results in text.
func (c *wire) appendBindText(stmt string, p *packedParams) {
	c.extended = true
	at := c.beginMsg('B')
	c.out = append(c.out, 0)
	c.out = append(c.out, stmt...)
	c.out = append(c.out, 0, 0, 0)
	c.out = binary.BigEndian.AppendUint16(c.out, uint16(len(p.ends)))
	start := 0
	for _, end := range p.ends {
		if end < 0 {
			c.out = append(c.out, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		c.out = binary.BigEndian.AppendUint32(c.out, uint32(end-start))
		c.out = append(c.out, p.buf[start:end]...)
		start = end
	}
	c.out = append(c.out, 0, 0)
	c.endMsg(at)
}

// packedParams holds one statement's text parameters in one buffer, so that building
// them allocates nothing once the buffer has grown: ends[i] is where parameter i ends
// in buf, or -1 for NULL.
type packedParams struct {
	buf  []byte
	ends []int
}

func (p *packedParams) reset() { p.buf, p.ends = p.buf[:0], p.ends[:0] }

func (p *packedParams) end() { p.ends = append(p.ends, len(p.buf)) }

// appendParse appends Parse of sql, a string or bytes, as the unnamed statement,
// parameter types inferred.
func appendParse[S ~string | ~[]byte](c *wire, sql S) {
	at := c.beginMsg('P')
	c.out = append(c.out, 0)
	c.out = append(c.out, sql...)
	c.out = append(c.out, 0, 0, 0)
	c.endMsg(at)
}

// appendDescribePortal asks for the unnamed portal's RowDescription, which the
// extended protocol sends only when asked: it names the columns.
func (c *wire) appendDescribePortal() {
	c.out = append(c.out, 'D', 0, 0, 0, 6, 'P', 0)
}

// appendExecute appends Execute of the unnamed portal (all rows), and appendSync a
// Sync: apart, for a pipeline.
func (c *wire) appendExecute() { c.out = append(c.out, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) }
func (c *wire) appendSync()    { c.out = append(c.out, 'S', 0, 0, 0, 4) }

// appendExecuteSync appends Execute of the unnamed portal (all rows) and Sync.
func (c *wire) appendExecuteSync() {
	c.out = append(c.out, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, 'S', 0, 0, 0, 4)
}

// appendQuery appends a simple-protocol Query.
func (c *wire) appendQuery(sql []byte) {
	at := c.beginMsg('Q')
	c.out = append(c.out, sql...)
	c.out = append(c.out, 0)
	c.endMsg(at)
}

// flush sends the buffered messages in one write; with a raw connection the write
// happens at the start of the next read (see pending).
func (c *wire) flush() error {
	if c.blocking {
		return c.writeBlocking()
	}
	if c.raw != nil {
		c.pending = true
		return nil
	}
	return c.writeNow()
}

// writeNow sends the buffered messages at once, for messages with no answer.
func (c *wire) writeNow() error {
	c.pending = false
	if c.blocking {
		return c.writeBlocking()
	}
	_, err := c.nc.Write(c.out)
	c.out = c.out[:0]
	return err
}

// next returns the next backend message's type and body. The body aliases the read
// buffer and is valid until the following call.
func (c *wire) next() (byte, []byte, error) {
	for c.w-c.r < 5 {
		if err := c.fill(5); err != nil {
			return 0, nil, err
		}
	}
	t := c.in[c.r]
	n := int(binary.BigEndian.Uint32(c.in[c.r+1:])) + 1
	if n < 5 {
		return 0, nil, fmt.Errorf("protocol error: message %q with length %d", t, n-1)
	}
	for c.w-c.r < n {
		if err := c.fill(n); err != nil {
			return 0, nil, err
		}
	}
	body := c.in[c.r+5 : c.r+n]
	c.r += n
	return t, body, nil
}

// fill reads until at least need bytes are buffered, compacting or growing as needed.
func (c *wire) fill(need int) error {
	c.room(need)
	var n int
	var err error
	if c.blocking {
		n, err = c.readBlocking()
	} else if c.raw != nil {
		c.nread, c.rerr = 0, nil
		if err = c.raw.Read(c.readFn); err == nil {
			n, err = c.nread, c.rerr
		}
		if n < 0 {
			n = 0
		}
	} else {
		n, err = c.nc.Read(c.in[c.w:])
	}
	c.w += n
	if n > 0 {
		return nil
	}
	if c.werr != nil {
		return c.werr // the server left without a word after all
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// room makes the read buffer hold need bytes from its unread start: it moves the
// unread bytes to the front, and grows the buffer when that is not enough.
func (c *wire) room(need int) {
	if c.r > 0 && (c.r == c.w || len(c.in)-c.r < need) {
		copy(c.in, c.in[c.r:c.w])
		c.w -= c.r
		c.r = 0
	}
	if need > len(c.in) {
		// Doubled at least, so that an answer of many reads costs linear copying.
		grown := make([]byte, max(need+4096, 2*len(c.in)))
		copy(grown, c.in[:c.w])
		c.in = grown
	}
}

// errClosed means the server ended the session (FATAL error or EOF).
var errClosed = errors.New("server closed the connection")

// await reads responses until the ReadyForQuery of the last exchange sent, counting
// that exchange's rows and keeping the first error of all. A FATAL error or a read
// failure returns a non-nil error: the connection is gone.
func (c *wire) await() error {
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
				return fmt.Errorf("%w: %w", errClosed, pe)
			}
		}
		// '1' ParseComplete, '2' BindComplete, 'n' NoData, 'N' notices,
		// 'S' parameter status and 'A' notifications need no action.
	}
}

// answer is where await is in an answer.
type answer struct {
	sets     bool // keep each result apart (wire.results)
	open     bool // a result set has begun and not completed
	rowsAt   int  // wire.rows when the statement now answering began
	inBlock  bool // inside a transaction block
	implicit bool // statements run outside a block since the last ReadyForQuery
	extended bool // the request used the extended protocol
}

// completed follows a statement's CommandComplete (t 'C', its tag in body) or an
// empty query's response ('I').
func (c *wire) completed(a *answer, t byte, body []byte) {
	if t == 'C' {
		a.inBlock, a.implicit = c.countTag(body, a.inBlock, a.implicit)
		if c.stmts != nil {
			c.stmts.count(body, c.rows > a.rowsAt)
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
func (c *wire) ready(a *answer, body []byte) bool {
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
func (c *wire) refuseCopy(extended bool) error {
	c.copied = true
	at := c.beginMsg('f')
	c.out = append(c.out, ErrCopy.Error()...)
	c.out = append(c.out, 0)
	c.endMsg(at)
	if extended {
		// The server ignored the Sync sent with the statement while it waited for
		// data; after the failure it waits for another.
		c.appendSync()
	}
	return c.writeNow()
}

// commit counts a transaction the server committed.
func (c *wire) commit() {
	if c.commits != nil {
		*c.commits++
	}
}

// countTag follows transaction blocks through a statement's CommandComplete tag:
// BEGIN opens one (statements already run in the implicit transaction join it),
// COMMIT of a block commits it, ROLLBACK ends it (a COMMIT of a failed block
// reports ROLLBACK), PREPARE TRANSACTION ends it without a commit, and any other
// statement outside a block is part of an implicit transaction.
func (c *wire) countTag(tag []byte, inBlock, implicit bool) (bool, bool) {
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

// Queries counts statements as sysbench's PostgreSQL driver does (pgsql_check_status
// in drv_pgsql.c): one that returned a result set, even an empty one, is a read; one
// that reports changed rows is a write; anything else is other: BEGIN, COMMIT,
// ROLLBACK, and an UPDATE or DELETE that matched no row. Statements that failed are
// not counted. Without a RowDescription (see count) two kinds of statement, in no
// sysbench script, count otherwise: CREATE TABLE AS and SELECT INTO as reads (sysbench:
// writes), and an INSERT ... RETURNING that returned no row as other (sysbench: a read).
type Queries struct{ Read, Write, Other int64 }

// Total is every statement counted.
func (q Queries) Total() int64 { return q.Read + q.Write + q.Other }

// Add adds o's counts to q's.
func (q *Queries) Add(o Queries) {
	q.Read += o.Read
	q.Write += o.Write
	q.Other += o.Other
}

// count counts the statement whose CommandComplete tag is tag ("SELECT 5",
// "UPDATE 0", "INSERT 0 1", "COMMIT", NUL-terminated). Without Describe the
// extended protocol sends no RowDescription, so a result set is told by its rows or
// by the SELECT tag.
func (q *Queries) count(tag []byte, rows bool) {
	if rows || (len(tag) >= 6 && string(tag[:6]) == "SELECT") {
		q.Read++
		return
	}
	end := len(tag)
	if end > 0 && tag[end-1] == 0 {
		end--
	}
	// The tag's last word is the row count, for the commands that have one.
	i := end
	changed := false
	for i > 0 && tag[i-1] >= '0' && tag[i-1] <= '9' {
		changed = changed || tag[i-1] != '0'
		i--
	}
	if changed && i < end && i > 0 && tag[i-1] == ' ' {
		q.Write++
		return
	}
	q.Other++
}

// parseError decodes an ErrorResponse body into the driver's error type, so errors
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
