//go:build !linux

package driver

import (
	"errors"
	"net"
)

// Elsewhere than Linux every client talks to the server through Go's network poller
// with plain reads and writes on the net.Conn. A thread-per-client run still raises
// GOMAXPROCS by its clients, but its clients wait through the poller too: the
// blocking sockets, raw system calls and runtime yields of thread_linux.go were
// built and tuned for Linux alone.

// newWire takes over nc, a connection pgx has set up; blocking is ignored here.
func newWire(nc net.Conn, blocking bool) *wire {
	return &wire{nc: nc, out: make([]byte, 0, 1024), in: make([]byte, 16384), status: 'I', fd: -1}
}

// errNotBlocking is never seen: without blocking sockets these are never called.
var errNotBlocking = errors.New("blocking sockets are used on Linux only")

func (c *wire) readBlocking() (int, error) { return 0, errNotBlocking }

func (c *wire) writeBlocking() error { return errNotBlocking }

func (c *wire) closeBlocking() {}

// voluntarySwitches is 0: with no blocking waits there is nothing to choose between
// (see waitChooser).
func voluntarySwitches() int64 { return 0 }
