//go:build !linux

package pgwire

import (
	"errors"
	"net"
	"syscall"
)

// Elsewhere than Linux every connection talks to the server through Go's network
// poller with plain reads and writes on the net.Conn: the blocking sockets, raw
// system calls and runtime yields of blocking_linux.go were built and tuned for
// Linux alone.

// New takes over nc, a connection pgx has set up; blocking is ignored here.
// prev, a closed connection no longer in use, lends its buffers (nil: new ones).
func New(nc net.Conn, blocking bool, prev *Conn) *Conn {
	c := &Conn{status: 'I', fd: -1}
	c.out, c.in, c.kept, c.rowAt = buffers(prev)
	c.nc = keepConn{Conn: nc, w: c}
	return c
}

// keepConn keeps a write's broken pipe or reset for the read that follows, as
// sendFailed does on Linux: a server that ended the session said why before it
// closed, and the read returns that.
type keepConn struct {
	net.Conn
	w *Conn
}

func (k keepConn) Write(b []byte) (int, error) {
	n, err := k.Conn.Write(b)
	if err != nil && isBroken(err) {
		k.w.werr = err
		return len(b), nil
	}
	return n, err
}

// isBroken tells a connection the server closed: a broken pipe or a reset, or on
// Windows WSAECONNABORTED (10053) and WSAECONNRESET (10054).
func isBroken(err error) bool {
	for _, e := range []error{syscall.EPIPE, syscall.ECONNRESET, syscall.Errno(10053), syscall.Errno(10054)} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// errNotBlocking is never seen: without blocking sockets these are never called.
var errNotBlocking = errors.New("blocking sockets are used on Linux only")

func (c *Conn) readBlocking() (int, error) { return 0, errNotBlocking }

func (c *Conn) writeBlocking() error { return errNotBlocking }

func (c *Conn) closeBlocking() {}

// voluntarySwitches is 0: with no blocking waits there is nothing to choose between
// (see WaitChooser).
func voluntarySwitches() int64 { return 0 }
