//go:build !linux

package driver

import (
	"errors"
	"net"
	"syscall"
)

// Elsewhere than Linux every client talks to the server through Go's network poller
// with plain reads and writes on the net.Conn. A thread-per-client run still raises
// GOMAXPROCS by its clients, but its clients wait through the poller too: the
// blocking sockets, raw system calls and runtime yields of thread_linux.go were
// built and tuned for Linux alone.

// newWire takes over nc, a connection pgx has set up; blocking is ignored here.
func newWire(nc net.Conn, blocking bool) *wire {
	c := &wire{out: make([]byte, 0, 1024), in: make([]byte, 16384), status: 'I', fd: -1}
	c.nc = keepConn{Conn: nc, w: c}
	return c
}

// keepConn keeps a write's broken pipe or reset for the read that follows, as
// sendFailed does on Linux: a server that ended the session said why before it
// closed, and the read returns that.
type keepConn struct {
	net.Conn
	w *wire
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

func (c *wire) readBlocking() (int, error) { return 0, errNotBlocking }

func (c *wire) writeBlocking() error { return errNotBlocking }

func (c *wire) closeBlocking() {}

// voluntarySwitches is 0: with no blocking waits there is nothing to choose between
// (see waitChooser).
func voluntarySwitches() int64 { return 0 }
