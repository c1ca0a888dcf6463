// Package pgwire speaks just enough of the PostgreSQL frontend/backend protocol
// (version 3) to run benchmark transactions without allocating, on a connection
// pgx has set up: it builds requests, sends them, and reads and parses their
// answers in place, counting statements and commits as they complete.
//
// It stands apart from the driver, which decides what to send and when, because
// it is a codec with rules of its own (message framing, the transaction status,
// what a command tag says), tested on its own against a real server, and because
// the driver's transports (an event loop, a goroutine or a thread per client) all
// share it.
package pgwire

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Conn is one connection taken over from pgx for the hot path: requests are built into one reused
// buffer and sent with one write, responses are parsed in place from one reused read
// buffer. pgx establishes the connection (TLS, authentication, .pgpass) and prepares
// statements; the connection is then hijacked for the hot path.
//
// Written by hand because a general driver's per-call allocations and goroutine
// hand-offs cost more client CPU per transaction than pgbench spends, and on a machine
// the client shares with the server that CPU is taken from the server.
type Conn struct {
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
	// messages still to come (0 before it starts; see WriteOut).
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
	// Commits counts, for its client, the exchanges that committed, as each
	// answer is read: each that ran a statement and ended (ReadyForQuery) idle
	// without an error, and did not end a failed block.
	Commits *int64
	// Stmts, when set, counts the statements completed, as Queries describes.
	Stmts *Queries
	err   *pgconn.PgError
	// queued counts the exchanges (each ending in Sync or a simple Query) sent ahead
	// of the last one; await reads their answers first and keeps only their errors.
	queued int
	// With blocking set (a thread per client, or an event loop) the connection is fd, a blocking
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
	// a WaitChooser measures both (ChooseWait): direct, when set, says to read at
	// once, and waitCount counts the waits. TCP wakes a reader only for data, so there the
	// read always waits itself, a system call fewer.
	blocking  bool
	unixSock  bool
	direct    *atomic.Bool
	waitCount *atomic.Int64
	fd        int
	deadline  atomic.Int64
	yieldAt   int64 // unix nanoseconds: when readBlocking next yields (see SetYieldEvery)
}

// resultSet is one result of an exchange: its rows are rowAt[first:last], and
// kept[desc:descEnd] its RowDescription (desc -1 for a command without rows).
type resultSet struct {
	desc, descEnd int
	first, last   int
}

// Close closes the connection.
func (c *Conn) Close() {
	if c.blocking {
		c.closeBlocking()
		return
	}
	c.nc.Close()
}

// buffers are prev's buffers, emptied, for a new connection; new ones when prev
// is nil.
func buffers(prev *Conn) (out, in, kept []byte, rowAt []int) {
	if prev == nil {
		return make([]byte, 0, 1024), make([]byte, 16384), nil, nil
	}
	return prev.out[:0], prev.in, prev.kept[:0], prev.rowAt[:0]
}

// SetDeadline makes reads and writes fail with os.ErrDeadlineExceeded from t on.
func (c *Conn) SetDeadline(t time.Time) {
	if c.blocking {
		c.deadline.Store(t.UnixNano())
		return
	}
	c.nc.SetDeadline(t)
}

// ChooseWait makes a blocking connection on a Unix-domain socket wait for its
// answers as w chooses, counting its waits in count (w.Counter). Other connections
// always wait the same way and ignore it.
func (c *Conn) ChooseWait(w *WaitChooser, count *atomic.Int64) {
	if c.unixSock {
		c.direct, c.waitCount = &w.direct, count
	}
}

// Terminate ends the session politely, so that the backend flushes its statistics
// at once, and closes the connection.
func (c *Conn) Terminate() {
	c.out = append(c.out[:0], 'X', 0, 0, 0, 4)
	c.SetDeadline(time.Now().Add(time.Second))
	_ = c.writeNow()
	c.Close()
}

// sendFailed keeps a write's broken pipe or connection reset for the read that
// follows. A server that ends the session (terminated: 57P01) sends a FATAL error
// before closing; a request written after that fails, and the error that says why
// is still in the socket. The read returns it, or this error once the socket is
// drained without one.
func (c *Conn) sendFailed(err error) bool {
	if err == syscall.EPIPE || err == syscall.ECONNRESET {
		c.werr = err
		return true
	}
	return false
}

// Flush sends the buffered messages in one write; with a raw connection the write
// happens at the start of the next read (see pending).
func (c *Conn) Flush() error {
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
func (c *Conn) writeNow() error {
	c.pending = false
	if c.blocking {
		return c.writeBlocking()
	}
	_, err := c.nc.Write(c.out)
	c.out = c.out[:0]
	return err
}

// RoundTrip sends the buffered messages and reads the answer (Await).
func (c *Conn) RoundTrip() error {
	if err := c.Flush(); err != nil {
		return err
	}
	return c.Await()
}

// next returns the next backend message's type and body. The body aliases the read
// buffer and is valid until the following call.
func (c *Conn) next() (byte, []byte, error) {
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
func (c *Conn) fill(need int) error {
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
func (c *Conn) room(need int) {
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
