package driver

import (
	"context"
	"encoding/binary"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sys/unix"
)

// The event loop: each of a few threads drives its share of the clients as pgbench's
// -j threads do. The thread sleeps in epoll_wait until any of its clients' servers
// has answered, reads each answer, and sends that client's next statement at once,
// with no goroutine to wake, no runtime scheduler and no second thread between the
// answer and the next request. It runs scripts of statements (Script.Commands)
// closed-loop; a Program, an open-loop run, pauses, a new connection per transaction
// and TLS need a goroutine per client and take the shared-thread transport.
//
// Each loop's goroutine holds its processor while it waits in the kernel, as a thread
// per client does (Run raises GOMAXPROCS by the loops). The connections are blocking
// sockets out of Go's poller (blockingDup): epoll tells the loop which ones are
// readable, and a read after that does not wait. A client whose connection is lost,
// or whose transaction outlives its deadline, leaves the loop for a goroutine that
// counts the failure and reconnects as any client does, and then comes back.

// loopable tells whether cfg's clients can run on event loops. A COPY would make
// the loop feed or refuse it, a round trip in which it could serve no other client.
func loopable(cfg *Config) bool {
	if cfg.Rate > 0 || cfg.ConnectPerTx || cfg.ThreadPerClient {
		return false
	}
	for _, s := range cfg.Scripts {
		if s.Program != nil || s.Keying > 0 || s.ThinkMean > 0 {
			return false
		}
		for _, c := range s.Commands {
			if f := strings.Fields(c.SQL); len(f) > 0 && strings.EqualFold(f[0], "COPY") {
				return false
			}
		}
	}
	return true
}

// evState is where a client on an event loop is in its transaction.
type evState struct {
	si, ci, try int
	start       time.Time
	// pe is the error of a failed statement while the ROLLBACK after it is under way.
	pe *pgconn.PgError
}

type evloop struct {
	r       *runner
	ctx     context.Context
	wg      *sync.WaitGroup
	epfd    int
	wake    int       // an eventfd in the epoll set: a client is back from reconnecting
	clients []*client // by the index epoll reports; nil while away
	live    int       // clients not yet ended, away ones included
	events  []unix.EpollEvent

	mu     sync.Mutex
	back   []*client // back from reconnecting, connected or not
	closed bool      // the loop has ended and closed its descriptors
}

// wakeIndex is the epoll index of the loop's eventfd.
const wakeIndex = -1

// startLoops takes the clients that can run on event loops into up to n loops and
// returns the loops, not yet started, and the other clients. Each client taken
// calls wg.Done as it ends; those left over have sockets for Go's poller.
func (r *runner) startLoops(ctx context.Context, clients []*client, n int, wg *sync.WaitGroup) (loops []*evloop, rest []*client) {
	for range n {
		l, err := newLoop(r, ctx, wg)
		if err != nil {
			break // out of descriptors: the clients take goroutines
		}
		loops = append(loops, l)
	}
	for i, c := range clients {
		if len(loops) > 0 && c.w != nil && c.w.blocking {
			l := loops[i%len(loops)]
			c.slot = len(l.clients)
			l.clients = append(l.clients, c)
			if l.watch(c) {
				l.live++
				continue
			}
			l.clients[c.slot] = nil
		}
		c.unloop(ctx)
		rest = append(rest, c)
	}
	kept := loops[:0]
	for _, l := range loops {
		if l.live == 0 {
			l.close()
			continue
		}
		wg.Add(l.live)
		kept = append(kept, l)
	}
	return kept, rest
}

// unloop readies c for a goroutine of its own: its connection, made blocking for a
// loop, is made again for Go's poller (a TLS one already is). A failure leaves it
// without one, which its goroutine makes as after a lost connection.
func (c *client) unloop(ctx context.Context) {
	c.onLoop = false
	if c.w != nil && c.w.blocking && !c.r.cfg.ThreadPerClient {
		c.close()
		_ = c.connect(ctx)
	}
}

func newLoop(r *runner, ctx context.Context, wg *sync.WaitGroup) (*evloop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err == nil {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeIndex}
		err = unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &ev)
		if err != nil {
			unix.Close(wake)
		}
	}
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	return &evloop{r: r, ctx: ctx, wg: wg, epfd: epfd, wake: wake, events: make([]unix.EpollEvent, 256)}, nil
}

func (l *evloop) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	unix.Close(l.wake)
	unix.Close(l.epfd)
}

// watch adds c's connection to the epoll set.
func (l *evloop) watch(c *client) bool {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(c.slot)}
	return unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.w.fd, &ev) == nil
}

func (l *evloop) run() {
	defer l.close()
	for _, c := range l.clients {
		if c != nil {
			l.begin(c)
		}
	}
	yieldAt := time.Now().UnixNano() + int64(yieldEvery)
	nextScan := int64(0)
	for l.live > 0 {
		n, errno := epollWait(l.epfd, l.events, int(blockingTick/time.Millisecond))
		if errno != 0 {
			// A signal: how the runtime asks this goroutine to stop (see waited).
			goyield()
		}
		for _, e := range l.events[:n] {
			if e.Fd == wakeIndex {
				l.welcome()
			} else if c := l.clients[e.Fd]; c != nil {
				l.readable(c)
			}
		}
		now := time.Now().UnixNano()
		if now >= yieldAt {
			goyield()
			yieldAt = now + int64(yieldEvery)
		}
		if now >= nextScan {
			nextScan = now + int64(blockingTick)
			for _, c := range l.clients {
				if c == nil {
					continue
				}
				if d := c.w.deadline.Load(); d != 0 && now >= d {
					l.lost(c, os.ErrDeadlineExceeded)
				}
			}
		}
	}
}

// epollWait is epoll_wait without telling the scheduler: the loop keeps its processor.
func epollWait(epfd int, events []unix.EpollEvent, msec int) (int, syscall.Errno) {
	r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), 0
}

// begin starts c's next transaction, or ends the client.
func (l *evloop) begin(c *client) {
	r := l.r
	if r.stopping.Load() || r.cfg.Transactions > 0 && c.done >= r.cfg.Transactions {
		l.unwatch(c)
		c.close()
		l.end()
		return
	}
	si := c.pick()
	c.draw(r.cfg.Scripts[si])
	start := time.Now()
	if start.After(c.rearm) {
		c.armTimeout(start)
	}
	c.ev = evState{si: si, try: 1, start: start}
	c.request(si, 0)
	l.send(c)
}

// end counts a client of the loop that has ended.
func (l *evloop) end() {
	l.live--
	l.r.clientDone()
	l.wg.Done()
}

func (l *evloop) send(c *client) {
	if err := c.w.writeBlocking(); err != nil {
		l.lost(c, err)
	}
}

// readable reads what c's server sent and, once its answer is whole, goes on.
func (l *evloop) readable(c *client) {
	w := c.w
	n, err := w.readMore()
	if err == syscall.EAGAIN || err == syscall.EINTR {
		return
	}
	if n > 0 && !w.answered() {
		return
	}
	if err != nil && err != os.ErrClosed {
		w.werr = err // a reset: what fill returns once the buffer is read
	}
	// A whole answer, or the end of the connection: await reads what is buffered
	// (a FATAL error says why the server left) and, at the end, the failure.
	if err := w.await(); err != nil {
		l.lost(c, err)
		return
	}
	switch {
	case c.ev.pe != nil: // the ROLLBACK after a failed statement
		pe := c.ev.pe
		c.ev.pe = nil
		l.failed(c, pe)
	case w.err != nil && w.status != 'I':
		c.ev.pe = w.err
		w.appendQuery([]byte("ROLLBACK"))
		l.send(c)
	case w.err != nil:
		l.failed(c, w.err)
	case c.ev.ci+1 < len(l.r.cfg.Scripts[c.ev.si].Commands):
		c.ev.ci++
		c.request(c.ev.si, c.ev.ci)
		l.send(c)
	default:
		ev := c.evTx()
		c.finish(ev, c.completed(ev, false))
		l.begin(c)
	}
}

// failed retries c's transaction after pe, as the shared-thread transport does, or
// counts it failed.
func (l *evloop) failed(c *client, pe *pgconn.PgError) {
	if c.retrying(c.ev.si, pe, c.ev.try) {
		c.ev.try++
		c.ev.ci = 0
		c.request(c.ev.si, 0)
		l.send(c)
		return
	}
	ev := c.evTx()
	c.finish(ev, c.failedTx(&ev, pe))
	l.begin(c)
}

// evTx is c's transaction under way, ending now.
func (c *client) evTx() TxEvent {
	return TxEvent{Client: c.id, Script: c.ev.si, Start: c.ev.start, End: time.Now(), Tries: c.ev.try}
}

// lost takes c, whose connection is lost, out of the loop: a goroutine counts the
// transaction as failed and reconnects as the shared-thread transport does, then
// hands the client back (welcome).
func (l *evloop) lost(c *client, err error) {
	r := l.r
	l.unwatch(c)
	ev := c.evTx()
	phase := c.lostTx(&ev, err)
	go func() {
		if !r.stopping.Load() && c.reconnect(l.ctx, err, 1) {
			c.finish(ev, phase)
		}
		// Under the lock, so that the loop cannot have ended and closed the eventfd
		// (its number perhaps reused) in between.
		l.mu.Lock()
		l.back = append(l.back, c)
		if !l.closed {
			one := [8]byte{1}
			unix.Write(l.wake, one[:])
		}
		l.mu.Unlock()
	}()
}

// welcome takes back the clients that have reconnected, and ends those that have not.
func (l *evloop) welcome() {
	var buf [8]byte
	unix.Read(l.wake, buf[:])
	l.mu.Lock()
	back := l.back
	l.back = nil
	l.mu.Unlock()
	for _, c := range back {
		if c.w == nil { // the run stopped first
			l.end()
			continue
		}
		if c.w.blocking {
			l.clients[c.slot] = c
			if l.watch(c) {
				l.begin(c)
				continue
			}
			l.clients[c.slot] = nil
		}
		l.release(c)
	}
}

// release hands c, connected again but not fit for the loop (its new connection
// uses TLS, or epoll refused it), to a goroutine of its own for the rest of the run.
func (l *evloop) release(c *client) {
	l.live--
	go func() {
		defer l.wg.Done()
		defer l.r.clientDone()
		defer c.close()
		c.unloop(l.ctx)
		c.loop(l.ctx)
	}()
}

// unwatch takes c's connection out of the epoll set; c is away from the loop until
// welcome takes it back.
func (l *evloop) unwatch(c *client) {
	if c.w != nil {
		unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.w.fd, nil)
	}
	l.clients[c.slot] = nil
}

// readMore reads once into the buffer, with room for 4 KiB more first.
func (c *wire) readMore() (int, error) {
	c.room(c.w - c.r + 4096)
	n, err := rawIO(syscall.SYS_READ, c.fd, c.in[c.w:])
	if err == nil && n == 0 {
		return 0, os.ErrClosed
	}
	c.w += n
	return n, err
}

// answered tells whether the buffer holds the whole answer await waits for: the
// ReadyForQuery of every exchange sent.
func (c *wire) answered() bool {
	need := c.queued + 1
	for p := c.r; c.w-p >= 5; {
		n := int(binary.BigEndian.Uint32(c.in[p+1:])) + 1
		if n < 5 {
			return true // await reports the broken message
		}
		if c.w-p < n {
			return false
		}
		switch c.in[p] {
		case 'Z':
			if need--; need == 0 {
				return true
			}
		case 'G':
			return true // COPY FROM STDIN (see loopable): await refuses it
		case 'E':
			if sev := parseError(c.in[p+5 : p+n]).Severity; sev == "FATAL" || sev == "PANIC" {
				return true // the server is leaving: no ReadyForQuery follows
			}
		}
		p += n
	}
	return false
}
