package driver

import (
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"iter"
	"os"
	"strings"
	"sync"
	"sync/atomic"
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
// answer and the next request. Clients of scripts of statements (Script.Commands)
// or of Steps run closed-loop as a small state it steps through; those of Programs,
// with pauses, or of an open-loop run as coroutines (coro.go), which it also wakes
// from their pauses and for their arrivals. A new connection per transaction and TLS
// need a goroutine per client and take the shared-thread transport.
//
// A loop's goroutine hands its processor back while it waits in epoll (a system call
// the scheduler knows of), so that the loops a run has (Config.Loops) need no
// processors of their own and no change of GOMAXPROCS. The connections are blocking
// sockets out of Go's poller (blockingDup): epoll tells the loop which ones are
// readable, and a read after that does not wait. A client whose connection is lost,
// or whose transaction outlives its deadline, leaves the loop for a goroutine that
// counts the failure and reconnects as any client does, and then comes back.

// loopable tells whether cfg's clients can run on event loops. A COPY would make
// the loop feed or refuse it, a round trip in which it could serve no other client.
// (A script of Steps may hold one too: it is refused in such a round trip, and the
// script's client then stops, as pgbench aborts it.)
func loopable(cfg *Config) bool {
	if cfg.ConnectPerTx || cfg.ThreadPerClient {
		return false
	}
	for _, s := range cfg.Scripts {
		for _, c := range s.Commands {
			if f := strings.Fields(c.SQL); len(f) > 0 && strings.EqualFold(f[0], "COPY") {
				return false
			}
		}
	}
	return true
}

// coroutines tells whether cfg's clients run as coroutines on their loops: their
// transactions are Programs, or pause, or wait for arrivals (see coro).
func coroutines(cfg *Config) bool {
	if cfg.Rate > 0 {
		return true
	}
	for _, s := range cfg.Scripts {
		if s.Program != nil || s.Pauses || s.Keying > 0 || s.ThinkMean > 0 {
			return true
		}
	}
	return false
}

// evState is where a client on an event loop is in its transaction.
type evState struct {
	si, ci, try int
	start       time.Time
	// pe is the error of a failed statement while the ROLLBACK after it is under way.
	pe *pgconn.PgError
	// steps is the script's Stepper, for a script of Steps; outcome, set only while
	// the ROLLBACK after its transaction is under way, is how that transaction ended.
	steps   Stepper
	outcome error
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
	sleep   sleepers // coroutines in a pause, the first to wake first
	// arrivals are the coroutines waiting for an open-loop run's next arrival, first
	// come first served: the first is resumed as one comes due.
	arrivals []*client
	// beginning is set while begin runs; due are the clients whose next transaction
	// begins in the loop's next round, their last having ended within begin (a
	// script of Steps that sent nothing): so a loop never recurses, and its other
	// clients are served between such transactions.
	beginning  bool
	due, spare []*client

	mu     sync.Mutex
	back   []*client // back from reconnecting, connected or not
	closed bool      // the loop has ended and closed its descriptors

	// busy is the share of its life the loop spent serving its clients rather
	// than waiting in epoll (Result.LoopBusy), set before ended is closed.
	busy  float64
	ended chan struct{}
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
	co := coroutines(&r.cfg)
	for i, c := range clients {
		if len(loops) > 0 && c.w != nil && c.w.blocking {
			l := loops[i%len(loops)]
			c.slot = len(l.clients)
			l.clients = append(l.clients, c)
			if l.watch(c) {
				if co {
					c.startCoroutine(ctx)
				}
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
	return &evloop{r: r, ctx: ctx, wg: wg, epfd: epfd, wake: wake, events: make([]unix.EpollEvent, 256), ended: make(chan struct{})}, nil
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
		if c == nil {
			continue
		}
		if c.co != nil {
			l.resume(c)
		} else {
			l.begin(c)
		}
	}
	yieldAt := time.Now().UnixNano() + int64(yieldEvery)
	nextScan := int64(0)
	born, waited := monotonic(), int64(0)
	defer func() {
		if life := monotonic() - born; life > 0 {
			l.busy = 1 - float64(waited)/float64(life)
		}
		close(l.ended)
	}()
	for l.live > 0 {
		wait := int64(blockingTick)
		if len(l.due) > 0 {
			wait = 0
		}
		if len(l.sleep) > 0 {
			wait = max(0, min(wait, l.sleep[0].co.wake-monotonic()))
		}
		if len(l.arrivals) > 0 {
			wait = max(0, min(wait, int64(time.Until(l.r.sched.peek())-earlyStart)))
		}
		asleep := monotonic()
		n, errno := epollWait(l.epfd, l.events, wait)
		waited += monotonic() - asleep
		if errno != 0 {
			// A signal: how the runtime asks this goroutine to stop (see waited).
			yield(time.Now().UnixNano())
		}
		for _, e := range l.events[:n] {
			if e.Fd == wakeIndex {
				l.welcome()
			} else if c := l.clients[e.Fd]; c == nil || c.deferred {
				// A deferred client is between transactions: what its server
				// said (an end of the session) is read once it sends again.
			} else if c.co != nil {
				l.ready(c)
			} else {
				l.readable(c)
			}
		}
		if len(l.sleep) > 0 {
			l.wakeUp(monotonic())
		}
		if len(l.arrivals) > 0 {
			l.arrive()
		}
		// Up to about dueBudget of them before the next look at the sockets: such
		// a transaction takes a fraction of a microsecond, a wait for events a
		// system call.
		for n := 0; n < dueBudget && len(l.due) > 0; {
			n += len(l.due)
			l.beginDue()
		}
		now := time.Now().UnixNano()
		if now >= yieldAt {
			yield(now)
			yieldAt = now + int64(yieldEvery)
		}
		if now >= nextScan {
			nextScan = now + int64(blockingTick)
			l.overdue(now)
		}
	}
}

// overdue cuts off the transactions whose deadline (Config.TxTimeout, the run's
// hard stop) passed by now, in unix nanoseconds.
func (l *evloop) overdue(now int64) {
	for _, c := range l.clients {
		if c == nil || c.deferred || c.co != nil && c.co.want != waitRead {
			continue
		}
		if d := c.w.deadline.Load(); d == 0 || now < d {
			continue
		}
		if c.co != nil {
			c.co.err = os.ErrDeadlineExceeded
			l.resume(c)
		} else {
			l.lost(c, os.ErrDeadlineExceeded)
		}
	}
}

// epollWait is epoll_wait for at most ns nanoseconds. A wait that may sleep tells
// the scheduler, which may then run other goroutines on the loop's processor; a
// look that cannot sleep (ns 0) does not. epoll_pwait2 (Linux 5.11) takes the time
// to the nanosecond, for pauses shorter than a millisecond; without it, the time is
// rounded up to one.
func epollWait(epfd int, events []unix.EpollEvent, ns int64) (int, syscall.Errno) {
	call := syscall.Syscall6
	if ns == 0 {
		call = syscall.RawSyscall6
	}
	var r uintptr
	var errno syscall.Errno
	if !noPwait2.Load() {
		ts := syscall.NsecToTimespec(ns)
		r, _, errno = call(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if errno != 0 && errno != syscall.EINTR {
			// ENOSYS, or EPERM from a seccomp filter that does not know it.
			noPwait2.Store(true)
		}
	}
	if noPwait2.Load() {
		msec := (ns + int64(time.Millisecond) - 1) / int64(time.Millisecond)
		r, _, errno = call(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	}
	if errno != 0 {
		return 0, errno
	}
	return int(r), 0
}

// noPwait2 is set once the kernel has refused epoll_pwait2.
var noPwait2 atomic.Bool

// begin starts c's next transaction, or ends the client.
func (l *evloop) begin(c *client) {
	if l.beginning {
		c.deferred = true
		l.due = append(l.due, c)
		return
	}
	l.beginning = true
	l.begin1(c)
	l.beginning = false
}

// dueBudget bounds the deferred transactions (evloop.due) a loop begins between two
// looks at its sockets: whole rounds of them, until this many have begun.
const dueBudget = 256

// beginDue begins the transactions deferred to this round (see evloop.due).
func (l *evloop) beginDue() {
	due := l.due
	l.due = l.spare[:0]
	for i, c := range due {
		due[i] = nil
		c.deferred = false
		l.begin(c)
	}
	l.spare = due[:0]
}

func (l *evloop) begin1(c *client) {
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
	if st := r.cfg.Scripts[si].Steps; st != nil {
		c.ev.steps = st
		l.startSteps(c)
		return
	}
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
	c.w.scanned, c.w.scanNeed = 0, 0
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
		if c.ev.steps != nil {
			c.sess.countCommits()
		}
		l.lost(c, err)
		return
	}
	if c.ev.steps != nil {
		l.answered(c)
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
		if c.ev.steps != nil {
			l.startSteps(c)
			return
		}
		c.ev.ci = 0
		c.request(c.ev.si, 0)
		l.send(c)
		return
	}
	ev := c.evTx()
	c.finish(ev, c.failedTx(&ev, pe))
	l.begin(c)
}

// startSteps begins an attempt of c's transaction of Steps.
func (l *evloop) startSteps(c *client) {
	next, err := c.ev.steps.Start(c.session(c.ev.si, c.ev.try))
	l.stepped(c, next, err)
}

// answered goes on with c's transaction of Steps once the answer to its request, or
// to the ROLLBACK after it ended, is read.
func (l *evloop) answered(c *client) {
	if err := c.ev.outcome; err != nil {
		c.ev.outcome = nil
		l.stepsOver(c, err)
		return
	}
	next, err := c.ev.steps.Resume(&c.sess, c.sess.answer())
	l.stepped(c, next, err)
}

// stepped sends the request c's Stepper wrote or, once its transaction is over,
// brings the connection back to idle as runProgram does and counts it.
func (l *evloop) stepped(c *client, next Step, err error) {
	switch next {
	case Await:
		l.send(c)
		return
	case Pause:
		// coroutines takes such scripts off this path.
		err = &Abort{Err: errors.New("driver: a script of Steps paused without Script.Pauses")}
	}
	w := c.w
	if w.queued > 0 || len(w.out) > 0 {
		w.out, w.queued = w.out[:0], 0 // written, never sent (see runProgram)
	}
	if err != nil && w.status != 'I' && (errors.As(err, new(*pgconn.PgError)) || errors.Is(err, ErrRollback)) {
		c.ev.outcome = err
		w.appendQuery([]byte("ROLLBACK"))
		l.send(c)
		return
	}
	l.stepsOver(c, err)
}

// stepsOver counts c's transaction of Steps, over with err, and goes on as a
// client's loop goes on after a Program's.
func (l *evloop) stepsOver(c *client, err error) {
	ev := c.evTx()
	if err == nil {
		c.finish(ev, c.completed(ev, false))
		l.begin(c)
		return
	}
	var pe *pgconn.PgError
	isPE := errors.As(err, &pe)
	if rs := l.r.cfg.Scripts[c.ev.si].RollbackState; isPE && rs != "" && pe.Code == rs {
		err = ErrRollback
	}
	var ab *Abort
	switch {
	case errors.Is(err, ErrRollback):
		c.finish(ev, c.completed(ev, true))
		l.begin(c)
	case errors.As(err, &ab):
		c.aborted(ev, ab)
		l.unwatch(c)
		c.close()
		l.end()
	case isPE && !errors.Is(err, errClosed):
		l.failed(c, pe)
	default:
		l.lost(c, err)
	}
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
		l.handBack(c)
	}()
}

// handBack gives c, away from the loop, back to it (welcome).
func (l *evloop) handBack(c *client) {
	// Under the lock, so that the loop cannot have ended and closed the eventfd (its
	// number perhaps reused) in between.
	l.mu.Lock()
	l.back = append(l.back, c)
	if !l.closed {
		one := [8]byte{1}
		unix.Write(l.wake, one[:])
	}
	l.mu.Unlock()
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
		// Ended: a statement client when the run stopped first, a coroutine when
		// its client's loop returned.
		if c.co == nil && c.w == nil || c.co != nil && c.co.ended {
			l.end()
			continue
		}
		if c.w != nil && c.w.blocking {
			l.clients[c.slot] = c
			if l.watch(c) {
				if c.co != nil {
					c.co.away = false
					l.resume(c)
				} else {
					l.begin(c)
				}
				continue
			}
			l.clients[c.slot] = nil
		}
		l.release(c)
	}
}

// release hands c, connected again but not fit for the loop (its new connection
// uses TLS, or epoll refused it), to a goroutine of its own for the rest of the run;
// a coroutine's goes on driving it, away from the loop.
func (l *evloop) release(c *client) {
	l.live--
	go func() {
		defer l.wg.Done()
		defer l.r.clientDone()
		defer c.close()
		c.unloop(l.ctx)
		if co := c.co; co != nil {
			for {
				if _, ok := co.next(); !ok {
					return
				}
			}
		}
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
// ReadyForQuery of every exchange sent. It goes on from where it stopped the last
// time, so that a large answer read in many pieces is scanned once.
func (c *wire) answered() bool {
	if c.scanNeed == 0 {
		c.scanned, c.scanNeed = 0, c.queued+1
	}
	for p := c.r + c.scanned; c.w-p >= 5; {
		n := int(binary.BigEndian.Uint32(c.in[p+1:])) + 1
		if n < 5 {
			return true // await reports the broken message
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
			return true // COPY FROM STDIN: await refuses it (see loopable)
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

// startCoroutine makes c's loop a coroutine, not started until the loop resumes it.
func (c *client) startCoroutine(ctx context.Context) {
	co := &coro{}
	co.next, _ = iter.Pull(func(yield func(struct{}) bool) {
		co.yield = yield
		c.loop(ctx)
		co.ended = true
	})
	c.co = co
	c.w.co = co
}

// resume runs c's coroutine until it waits again, and sees to what it waits for.
func (l *evloop) resume(c *client) {
	co := c.co
	if _, ok := co.next(); !ok {
		l.unwatch(c)
		c.close()
		l.end()
		return
	}
	switch co.want {
	case waitRead:
		if co.muted {
			co.muted = false
			if !l.watch(c) {
				co.err = errClosed
				l.resume(c)
			}
		}
	case waitSleep:
		heap.Push(&l.sleep, c)
	case waitArrival:
		l.arrivals = append(l.arrivals, c)
	case waitAway:
		// Its connection is gone, and with it any registration muted or not.
		co.muted = false
		l.unwatch(c)
		go l.drive(c)
	}
}

// drive runs c's coroutine away from the loop while it connects again, and hands
// it back once it is connected or has ended.
func (l *evloop) drive(c *client) {
	c.co.away = true
	if _, ok := c.co.next(); !ok {
		c.close()
	}
	l.handBack(c)
}

// ready resumes c, whose socket is readable, if it waits for an answer. Else (its
// server said something between transactions, or left) its socket leaves the epoll
// set, which would report it again and again, until it next waits for an answer.
func (l *evloop) ready(c *client) {
	if c.co.want == waitRead {
		l.resume(c)
		return
	}
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.w.fd, nil)
	c.co.muted = true
}

// wakeUp resumes the coroutines whose pause is over at now, and all of them once
// the run stops.
func (l *evloop) wakeUp(now int64) {
	stopping := l.r.stopping.Load()
	for len(l.sleep) > 0 && (stopping || l.sleep[0].co.wake <= now) {
		c := heap.Pop(&l.sleep).(*client)
		c.co.stopped = stopping
		l.resume(c)
	}
}

// arrive resumes the first coroutine waiting for an arrival once one is due (it takes
// it, or waits again if another loop took it first), and all of them once the run
// stops.
func (l *evloop) arrive() {
	stopping := l.r.stopping.Load()
	if !stopping && time.Until(l.r.sched.peek()) > earlyStart {
		return
	}
	n := 1
	if stopping {
		n = len(l.arrivals)
	}
	for range n {
		c := l.arrivals[0]
		l.arrivals = l.arrivals[:copy(l.arrivals, l.arrivals[1:])]
		c.co.stopped = stopping
		l.resume(c)
	}
}

// coRead is readBlocking for a coroutine: it hands the thread back to the loop
// until the socket is readable, then reads what is there.
func (c *wire) coRead() (int, error) {
	co := c.co
	for {
		co.wait(waitRead)
		if err := co.err; err != nil {
			co.err = nil
			return 0, err
		}
		if n, err := c.readNow(); err != syscall.EAGAIN && err != syscall.EINTR {
			return n, err
		}
	}
}

// sleepers is a heap of paused coroutines by the time they wake.
type sleepers []*client

func (h sleepers) Len() int           { return len(h) }
func (h sleepers) Less(i, j int) bool { return h[i].co.wake < h[j].co.wake }
func (h sleepers) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sleepers) Push(x any)        { *h = append(*h, x.(*client)) }
func (h *sleepers) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return c
}
