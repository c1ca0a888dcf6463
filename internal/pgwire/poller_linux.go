package pgwire

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// Reading and writing through Go's network poller on Linux: each round trip reads
// and writes the socket with raw system calls inside syscall.RawConn.Read, so that
// goroutines share GOMAXPROCS threads. New also makes a blocking connection for a
// thread per client or an event loop (blocking_linux.go).

// New takes over nc, a connection pgx has set up: through its raw socket where
// there is one (not for TLS), or, with blocking, as a blocking duplicate.
// prev, a closed connection no longer in use, lends its buffers (nil: new ones).
func New(nc net.Conn, blocking bool, prev *Conn) *Conn {
	c := &Conn{nc: nc, status: 'I', fd: -1}
	c.out, c.in, c.kept, c.rowAt = buffers(prev)
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

// rawRead is the callback for syscall.RawConn.Read: false means "wait until readable".
func (c *Conn) rawRead(fd uintptr) bool {
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

// writeRaw writes out on the socket directly; a full socket buffer falls back to the
// blocking net.Conn write (which holds a different lock than the read in progress).
func (c *Conn) writeRaw(fd int) error {
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

// rawIO reads or writes a non-blocking socket without telling the scheduler about a
// system call. syscall.Read and Write mark the thread as in a system call; when the
// kernel preempts it there (the server shares the cores), the runtime's monitor hands
// the scheduler to another thread, and the two threads then wake each other with
// futexes. A read or write on a non-blocking socket never blocks, so the mark buys
// nothing here. The blocking sockets of a thread per client (and pollIn) skip it too:
// each client then keeps its P while it waits, which the caller's extra Ps allow for.
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
