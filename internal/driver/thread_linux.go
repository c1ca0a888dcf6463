package driver

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The thread-per-client transport (Config.ThreadPerClient) on Linux: each client's
// connection is a blocking socket out of Go's poller, and the client's goroutine
// sleeps in the kernel, holding its thread, until the server answers. Other systems
// use the poller for these clients too (transport_other.go).

// blockingTick bounds each wait of a blocking read or write (SO_RCVTIMEO and
// SO_SNDTIMEO), so that deadlines are noticed within it. With a timeout set, a signal
// also interrupts the wait (EINTR instead of a restart), which lets the runtime stop
// the thread for garbage collection while it waits.
const blockingTick = 20 * time.Millisecond

// yieldEvery is how often a client that waits in the kernel hands its thread back to
// the runtime for a moment. A goroutine inside a raw system call looks to the runtime
// as if it were running, and the runtime preempts one that has run 10 ms without
// being rescheduled, sending it to the global run queue and so, often, to another
// thread on the other core, away from its backend. goyield puts it on its own
// processor's queue instead, where the same thread runs it again at once, and it
// counts as rescheduled, so the runtime leaves the client alone.
var yieldEvery = 2 * time.Millisecond // a variable only for a test to compare without

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

// yield hands the thread back to the runtime for a moment (goyield) and, when the
// process is due to have its idle processors' timers looked at, then readies a
// goroutine that does nothing else, so that an idle thread wakes up to take it.
func yield(now int64) {
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

// waited is called when a blocking read or write returns EAGAIN (blockingTick
// passed) or EINTR (a signal): it fails once the deadline has passed. A signal is
// how the runtime asks a goroutine to stop, for the garbage collector or because it
// ran 10 ms without a break (a wait longer than yieldEvery): rawIO has no point
// where the goroutine could stop, so it yields here (see yield).
//
//go:noinline
func (c *wire) waited(err error) error {
	now := time.Now().UnixNano()
	if err == syscall.EINTR {
		yield(now)
	}
	if d := c.deadline.Load(); d != 0 && now >= d {
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
			yield(now)
			c.yieldAt = now + int64(yieldEvery)
		}
		if c.unixSock {
			c.waitCount.Add(1)
			if !c.waits.direct.Load() {
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
func (c *wire) readNow() (int, error) {
	n, err := rawIO(syscall.SYS_READ, c.fd, c.in[c.w:])
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
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

// closeBlocking closes the blocking socket.
func (c *wire) closeBlocking() {
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
