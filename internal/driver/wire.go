package driver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

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
	raw syscall.RawConn // nil for TLS (then reads and writes go through nc) and when blocking
	// With a raw connection the request is written from inside the read callback:
	// Go's RawConn.Read forgets any readiness seen before it starts, so a request
	// written earlier could be answered before the wait begins and the answer would
	// never be noticed. Written inside, the first read can wait for readiness instead
	// of trying a read that fails with EAGAIN: one system call less per round trip.
	pending bool // out holds a request not yet written
	readFn  func(fd uintptr) bool
	nread   int
	rerr    error
	// werr is a write's broken pipe or reset, kept by sendFailed until the
	// server's last words have been read.
	werr error
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
	// is still delivering an answer bytes at a time.
	//
	// On a Unix-domain socket a read sleeping on the socket is also woken, for
	// nothing, each time the server takes in the request, since it frees send-buffer
	// space; poll wakes only for data. In sysbench's read-write transaction polling
	// first took the client from 38 context switches per transaction to 23, but for
	// point selects reading at once is faster: waits (see waitChooser) picks the way
	// by measuring both, and waitCount counts the waits for it. TCP wakes a reader only
	// for data, so there the read always waits itself, a system call fewer.
	blocking  bool
	unixSock  bool
	waits     *waitChooser
	waitCount *atomic.Int64
	fd        int
	deadline  atomic.Int64
	yieldAt   int64 // unix nanoseconds: when readBlocking next yields (see yieldEvery)
}

// blockingTick bounds each wait of a blocking read or write (SO_RCVTIMEO and
// SO_SNDTIMEO), so that deadlines are noticed within it. With a timeout set, a signal
// also interrupts the wait (EINTR instead of a restart), which lets the runtime stop
// the thread for garbage collection while it waits.
const blockingTick = 20 * time.Millisecond

// yieldEvery is how often a client that waits in the kernel hands its thread back to
// the runtime for a moment. A goroutine inside a raw system call looks to Go's
// runtime as if it were running, and the runtime's monitor preempts one that has run
// 10 ms without being rescheduled: it then went to the global run queue and came
// back on whichever thread was free first. Clients kept moving between threads, a
// backend woke a different thread (often on the other core) from one answer to the
// next, and on point selects at 8 clients 5-11% of the wake-ups between clients and
// backends crossed cores, against 0.3-0.7% for sysbench. goyield puts the goroutine
// on its own processor's queue, where the same thread runs it again at once, and it
// counts as rescheduled, so the monitor leaves the client alone: with a yield every
// 2 ms the crossings fell to sysbench's share.
var yieldEvery = 2 * time.Millisecond // a variable only for a test to compare without

// goyield is the runtime's yield to the current processor's own run queue; unlike
// runtime.Gosched it neither moves the goroutine to the global queue nor wakes
// another thread. The runtime keeps it reachable by linkname for outside packages
// (go.dev/issue/67401).
//
//go:linkname goyield runtime.goyield
func goyield()

func newWire(nc net.Conn, blocking bool) *wire {
	c := &wire{nc: nc, out: make([]byte, 0, 1024), in: make([]byte, 16384), status: 'I', fd: -1}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return c
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	c.raw = raw
	c.readFn = c.rawRead
	if blocking {
		fd := -1
		raw.Control(func(f uintptr) { fd = blockingDup(int(f)) })
		if fd >= 0 {
			// Closing the original takes the socket out of Go's poller, which would
			// otherwise wake a thread of its own for every answer; the duplicate
			// keeps the connection open.
			_, c.unixSock = nc.RemoteAddr().(*net.UnixAddr)
			nc.Close()
			c.blocking, c.fd, c.raw = true, fd, nil
		}
	}
	return c
}

// blockingDup duplicates a socket into a blocking descriptor with blockingTick
// timeouts, or returns -1.
func blockingDup(fd int) int {
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1
	}
	tv := syscall.NsecToTimeval(int64(blockingTick))
	err := syscall.SetsockoptTimeval(int(nfd), syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	if err == nil {
		err = syscall.SetsockoptTimeval(int(nfd), syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	}
	if err == nil {
		err = syscall.SetNonblock(int(nfd), false)
	}
	if err != nil {
		syscall.Close(int(nfd))
		return -1
	}
	return int(nfd)
}

// close closes the connection.
func (c *wire) close() {
	if c.blocking {
		syscall.Close(c.fd)
		c.fd = -1
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

// waited is called when a blocking read or write returns EAGAIN (blockingTick
// passed) or EINTR (a signal): it fails once the deadline has passed. A signal is
// how the runtime asks a goroutine to stop, for the garbage collector or because it
// ran 10 ms without a break (a wait longer than yieldEvery): rawIO has no point
// where the goroutine could stop, so it yields here, to its own processor's queue.
//
//go:noinline
func (c *wire) waited(err error) error {
	if err == syscall.EINTR {
		goyield()
	}
	if d := c.deadline.Load(); d != 0 && time.Now().UnixNano() >= d {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// readBlocking reads into in[w:], sleeping in the kernel until something arrives.
func (c *wire) readBlocking() (int, error) {
	for {
		var n int
		var err error
		if now := time.Now().UnixNano(); now >= c.yieldAt {
			goyield()
			c.yieldAt = now + int64(yieldEvery)
		}
		if c.unixSock {
			c.waitCount.Add(1)
			if !c.waits.direct.Load() {
				err = pollIn(c.fd)
			}
		}
		if err == nil {
			n, err = rawIO(syscall.SYS_READ, c.fd, c.in[c.w:])
		}
		switch err {
		case nil:
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		case syscall.EAGAIN, syscall.EINTR:
			if err := c.waited(err); err != nil {
				return 0, err
			}
		default:
			return 0, err
		}
	}
}

// writeBlocking sends out whole, then empties it.
func (c *wire) writeBlocking() error {
	b := c.out
	c.out = c.out[:0]
	for len(b) > 0 {
		n, err := rawIO(syscall.SYS_WRITE, c.fd, b)
		switch err {
		case nil:
			b = b[n:]
		case syscall.EAGAIN, syscall.EINTR:
			if err := c.waited(err); err != nil {
				return err
			}
		default:
			if c.sendFailed(err) {
				return nil
			}
			return err
		}
	}
	return nil
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

// rawRead is the callback for syscall.RawConn.Read: false means "wait until readable".
func (c *wire) rawRead(fd uintptr) bool {
	if c.pending {
		c.pending = false
		if err := c.writeRaw(int(fd)); err != nil {
			c.rerr = err
			return true
		}
		if c.werr == nil {
			return false // the answer cannot be there yet
		}
		// The server is gone: what it left is there already, and no new readiness
		// will come to wake a wait for it.
	}
	n, err := rawIO(syscall.SYS_READ, int(fd), c.in[c.w:])
	for err == syscall.EINTR {
		n, err = rawIO(syscall.SYS_READ, int(fd), c.in[c.w:])
	}
	if err == syscall.EAGAIN {
		return false
	}
	c.nread, c.rerr = n, err
	if n == 0 && err == nil {
		c.rerr = io.EOF
	}
	return true
}

// pollIn waits until fd is readable (or closed, or in error), for at most
// blockingTick: then it returns EAGAIN.
func pollIn(fd int) error {
	pfd := struct {
		fd             int32
		events, revent int16
	}{fd: int32(fd), events: 0x1} // POLLIN
	ts := syscall.NsecToTimespec(int64(blockingTick))
	n, _, errno := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	if n == 0 {
		return syscall.EAGAIN
	}
	return nil
}

// rawIO reads or writes a non-blocking socket without telling the scheduler about a
// system call. syscall.Read and Write mark the thread as in a system call; when the
// kernel preempts it there (the server shares the cores), the runtime's monitor hands
// the scheduler to another thread, and the two threads then wake each other with
// futexes: measured at 1.7 extra context switches per TPC-B transaction. A read or
// write on a non-blocking socket never blocks, so the mark buys nothing here. The
// blocking sockets of a thread per client (and pollIn) skip it too: each client then
// keeps its P while it waits, which Run's extra Ps allow for; marked, oltp_point_select
// at 8 clients fell from 53,000-58,000 tps to 42,000-48,000.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
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

// appendParse appends Parse of sql as the unnamed statement, parameter types inferred.
func (c *wire) appendParse(sql string, nparams int) {
	at := c.beginMsg('P')
	c.out = append(c.out, 0)
	c.out = append(c.out, sql...)
	c.out = append(c.out, 0, 0, 0)
	c.endMsg(at)
}

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

// writeRaw writes out on the socket directly; a full socket buffer falls back to the
// blocking net.Conn write (which holds a different lock than the read in progress).
func (c *wire) writeRaw(fd int) error {
	n, err := rawIO(syscall.SYS_WRITE, fd, c.out)
	if err == syscall.EAGAIN || err == syscall.EINTR {
		n, err = 0, nil
	}
	if err != nil {
		c.out = c.out[:0]
		if c.sendFailed(err) {
			return nil
		}
		return err
	}
	if n < len(c.out) {
		_, err = c.nc.Write(c.out[n:])
	}
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
	if c.r > 0 && (c.r == c.w || len(c.in)-c.r < need) {
		copy(c.in, c.in[c.r:c.w])
		c.w -= c.r
		c.r = 0
	}
	if need > len(c.in) {
		grown := make([]byte, need+4096)
		copy(grown, c.in[:c.w])
		c.in = grown
	}
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

// errClosed means the server ended the session (FATAL error or EOF).
var errClosed = errors.New("server closed the connection")

// await reads responses until the ReadyForQuery of the last exchange sent, counting
// that exchange's rows and keeping the first error of all. A FATAL error or a read failure returns a non-nil error: the connection is
// gone.
func (c *wire) await() error {
	c.rows = 0
	c.err = nil
	c.kept, c.rowAt = c.kept[:0], c.rowAt[:0]
	rowsAt := 0 // c.rows when the statement now answering began
	for {
		t, body, err := c.next()
		if err != nil {
			return err
		}
		switch t {
		case 'C':
			if c.stmts != nil {
				c.stmts.count(body, c.rows > rowsAt)
			}
			rowsAt = c.rows
		case 'D':
			c.rows++
			if c.keep {
				c.rowAt = append(c.rowAt, len(c.kept))
				c.kept = append(c.kept, body...)
			}
		case 'Z':
			if len(body) > 0 {
				c.status = body[0]
			}
			if c.queued > 0 {
				c.queued--
				c.rows, rowsAt = 0, 0
				c.kept, c.rowAt = c.kept[:0], c.rowAt[:0]
				continue
			}
			return nil
		case 'E':
			pe := parseError(body)
			if c.err == nil {
				c.err = pe
			}
			if pe.Severity == "FATAL" || pe.Severity == "PANIC" {
				return fmt.Errorf("%w: %w", errClosed, pe)
			}
		}
		// '1' ParseComplete, '2' BindComplete, 'T' RowDescription,
		// 'n' NoData, 'I' EmptyQueryResponse, 'N' notices, 'S' parameter status and
		// 'A' notifications need no action.
	}
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
