package pgwire

import (
	"encoding/binary"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Blocking connections on Linux, for a thread per client and for event loops: the
// connection is a blocking socket out of Go's poller. A thread per client sleeps in
// the kernel, holding its thread, until the server answers; an event loop waits in
// epoll for many and reads each once it is readable (ReadSome). Other systems use
// the poller for these connections too (conn_other.go).

// BlockingTick bounds each wait of a blocking read or write (SO_RCVTIMEO and
// SO_SNDTIMEO), so that deadlines are noticed within it. With a timeout set, a signal
// also interrupts the wait (EINTR instead of a restart), which lets the runtime stop
// the thread for garbage collection while it waits.
const BlockingTick = 20 * time.Millisecond

// yieldEvery is how often a client that waits in the kernel hands its thread back to
// the runtime for a moment. A goroutine inside a raw system call looks to the runtime
// as if it were running, and the runtime preempts one that has run 10 ms without
// being rescheduled, sending it to the global run queue and so, often, to another
// thread on the other core, away from its backend. goyield puts it on its own
// processor's queue instead, where the same thread runs it again at once, and it
// counts as rescheduled, so the runtime leaves the client alone.
var yieldEvery = 2 * time.Millisecond

// YieldEvery is how often a thread that waits in the kernel yields (see Yield).
func YieldEvery() time.Duration { return yieldEvery }

// SetYieldEvery changes YieldEvery, so that a test can compare runs with and
// without; it returns the function that restores it. Not for use while a
// connection is in use.
func SetYieldEvery(d time.Duration) (restore func()) {
	old := yieldEvery
	yieldEvery = d
	return func() { yieldEvery = old }
}

// goyield is the runtime's yield to the current processor's own run queue; unlike
// runtime.Gosched it neither moves the goroutine to the global queue nor wakes
// another thread. The runtime keeps it reachable by linkname for outside packages
// (go.dev/issue/67401).
//
//go:linkname goyield runtime.goyield
func goyield()

// timerCheckEvery is how often, at most, one of the process's clients or loops that
// hold their processors wakes an idle thread to look at the timers. Go fires an idle
// processor's timers from a thread that passes through the scheduler's work stealing,
// or that sleeps in the network poller until the first of them. Threads that only ever
// yield to their own queues never steal, and once the last idle thread has parked
// without polling, a timer left on an idle processor (the runner's end of the window,
// its interval ticker) waits until something else wakes a thread: seconds, at times.
// Readying a goroutine wakes an idle thread, which steals it and, stealing, looks at
// every processor's timers; the client that readied it goes on where it was.
const timerCheckEvery = 20 * time.Millisecond

var (
	nextTimerCheck atomic.Int64 // unix nanoseconds
	timerPump      = make(chan struct{})
	startPump      sync.Once
)

// Yield hands the thread back to the runtime for a moment (goyield) and, when the
// process is due to have its idle processors' timers looked at, then readies a
// goroutine that does nothing else, so that an idle thread wakes up to take it.
func Yield(now int64) {
	goyield()
	if t := nextTimerCheck.Load(); now >= t && nextTimerCheck.CompareAndSwap(t, now+int64(timerCheckEvery)) {
		startPump.Do(func() {
			go func() {
				for range timerPump {
				}
			}()
		})
		// Readied after the yield, the goroutine waits in this processor's queue
		// while the client runs on, and the thread that wakes takes it from there.
		select {
		case timerPump <- struct{}{}:
		default:
		}
	}
}

// blockingDup duplicates a socket into a blocking descriptor with BlockingTick
// timeouts, or returns -1.
func blockingDup(fd int) int {
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1
	}
	tv := syscall.NsecToTimeval(int64(BlockingTick))
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

// waited is called when a blocking read or write returns EAGAIN (BlockingTick
// passed) or EINTR (a signal): it fails once the deadline has passed. A signal is
// how the runtime asks a goroutine to stop, for the garbage collector or because it
// ran 10 ms without a break (a wait longer than yieldEvery): rawIO has no point
// where the goroutine could stop, so it yields here (see Yield).
//
//go:noinline
func (c *Conn) waited(err error) error {
	now := time.Now().UnixNano()
	if err == syscall.EINTR {
		Yield(now)
	}
	if d := c.deadline.Load(); d != 0 && now >= d {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// readBlocking reads into in[w:], sleeping in the kernel until something arrives.
func (c *Conn) readBlocking() (int, error) {
	for {
		var n int
		var err error
		if now := time.Now().UnixNano(); now >= c.yieldAt {
			Yield(now)
			c.yieldAt = now + int64(yieldEvery)
		}
		if c.direct != nil {
			c.waitCount.Add(1)
			if !c.direct.Load() {
				err = pollIn(c.fd)
			}
		}
		if err == nil {
			n, err = c.readNow()
		}
		switch err {
		case nil:
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

// readNow reads what the blocking socket holds into in[w:], waiting if it holds
// nothing; the end of the connection is io.EOF.
func (c *Conn) readNow() (int, error) {
	n, err := rawIO(syscall.SYS_READ, c.fd, c.in[c.w:])
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

// writeBlocking sends out whole, then empties it.
func (c *Conn) writeBlocking() error {
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

// pollIn waits until fd is readable (or closed, or in error), for at most
// BlockingTick: then it returns EAGAIN.
func pollIn(fd int) error {
	pfd := struct {
		fd             int32
		events, revent int16
	}{fd: int32(fd), events: 0x1} // POLLIN
	ts := syscall.NsecToTimespec(int64(BlockingTick))
	n, _, errno := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	if n == 0 {
		return syscall.EAGAIN
	}
	return nil
}

// closeBlocking closes the blocking socket.
func (c *Conn) closeBlocking() {
	syscall.Close(c.fd)
	c.fd = -1
}

// voluntarySwitches is the process's voluntary context switches so far.
func voluntarySwitches() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Nvcsw)
}

// What an event loop needs of its connections: it waits in epoll on FD, writes each
// request at once (WriteOut), reads what comes as it comes (ReadSome), and cuts off
// a transaction past its Deadline itself.

// Blocking tells whether the connection is a blocking socket, fit for an event loop.
func (c *Conn) Blocking() bool { return c.blocking }

// FD is the blocking socket's descriptor.
func (c *Conn) FD() int { return c.fd }

// Deadline is when the connection is to be cut off, in unix nanoseconds; 0 for never.
func (c *Conn) Deadline() int64 { return c.deadline.Load() }

// WriteOut sends the buffered request on the blocking socket at once, and starts
// watching for a new answer (ReadSome).
func (c *Conn) WriteOut() error {
	c.scanned, c.scanNeed = 0, 0
	return c.writeBlocking()
}

// ReadSome reads once what the socket holds, which epoll said is readable, and tells
// whether Await may now read the answer without waiting: it is whole, or the
// connection ended (Await then reads what is buffered, a FATAL error saying why the
// server left, and at the end the failure).
func (c *Conn) ReadSome() bool {
	n, err := c.readMore()
	if err == syscall.EAGAIN || err == syscall.EINTR {
		return false
	}
	if n > 0 && !c.answered() {
		return false
	}
	if err != nil && err != os.ErrClosed {
		c.werr = err // a reset: what fill returns once the buffer is read
	}
	return true
}

// readMore reads once into the buffer, with room for 4 KiB more first.
func (c *Conn) readMore() (int, error) {
	c.room(c.w - c.r + 4096)
	n, err := rawIO(syscall.SYS_READ, c.fd, c.in[c.w:])
	if err == nil && n == 0 {
		return 0, os.ErrClosed
	}
	c.w += n
	return n, err
}

// answered tells whether the buffer holds the whole answer Await waits for: the
// ReadyForQuery of every exchange sent. It goes on from where it stopped the last
// time, so that a large answer read in many pieces is scanned once.
func (c *Conn) answered() bool {
	if c.scanNeed == 0 {
		c.scanned, c.scanNeed = 0, c.queued+1
	}
	for p := c.r + c.scanned; c.w-p >= 5; {
		n := int(binary.BigEndian.Uint32(c.in[p+1:])) + 1
		if n < 5 {
			return true // Await reports the broken message
		}
		if c.w-p < n {
			return false
		}
		switch c.in[p] {
		case 'Z':
			if c.scanNeed--; c.scanNeed == 0 {
				return true
			}
		case 'G':
			return true // COPY FROM STDIN: Await refuses it
		case 'E':
			if sev := parseError(c.in[p+5 : p+n]).Severity; sev == "FATAL" || sev == "PANIC" {
				return true // the server is leaving: no ReadyForQuery follows
			}
		}
		p += n
		c.scanned = p - c.r
	}
	return false
}
