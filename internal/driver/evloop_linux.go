package driver

import (
	"container/heap"
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pgbakeoff/pgbakeoff/internal/pacing"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
)

// The event loop: each of a few threads drives its share of the clients as pgbench's
// -j threads do. The thread sleeps in epoll_wait until any of its clients' servers
// has answered, reads each answer, and sends that client's next statement at once,
// with no goroutine to wake, no runtime scheduler and no second thread between the
// answer and the next request. It waits for what each client waits for (tx.go): an
// answer in epoll, a pause or an arrival by its timeout; a connection is made away
// from it, by a goroutine that hands the client back. A new connection per
// transaction and TLS need a goroutine per client and take the shared-thread
// transport.
//
// A loop's goroutine hands its processor back while it waits in epoll (a system call
// the scheduler knows of), so that the loops a run has (Config.Loops) need no
// processors of their own and no change of GOMAXPROCS. The connections are blocking
// sockets out of Go's poller (pgwire.New): epoll tells the loop which ones are
// readable, and a read after that does not wait.

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

type evloop struct {
	r       *runner
	ctx     context.Context
	wg      *sync.WaitGroup
	epfd    int
	wake    int       // an eventfd in the epoll set: a client is back from connecting
	clients []*client // by the index epoll reports; nil while away
	live    int       // clients not yet ended, away ones included
	events  []unix.EpollEvent
	sleep   sleepers // clients in a pause, the first to wake first
	// arrivals are the clients waiting for an open-loop run's next arrival, first
	// come first served: the first goes on as one comes due.
	arrivals []*client
	// due are the clients whose next transaction begins in the loop's next round:
	// so a loop never recurses through transactions that send nothing (a script of
	// Steps that only sets variables), and serves its other clients between them.
	due, spare []*client

	mu     sync.Mutex
	back   []*client // back from connecting, connected or not
	closed bool      // the loop has ended and closed its descriptors

	// busy is how long it has served its clients rather than waited in epoll so
	// far, in nanoseconds, as of its last scan; life, set before ended is closed,
	// how long it ran.
	busy  atomic.Int64
	life  int64
	ended chan struct{}
	// With Config.Loops 0 (loopSet.scale): size is how many clients it has, as of
	// its last scan; give how many of them it is still to hand to the newer loop
	// to, each as it ends a transaction; and on that loop, pending how many are
	// still to come.
	size    atomic.Int32
	give    atomic.Int32
	to      *evloop
	pending atomic.Int32
}

// wakeIndex is the epoll index of the loop's eventfd.
const wakeIndex = -1

// startLoops takes the clients that can run on event loops into up to n loops,
// starts them, and returns them and the other clients. Each client taken calls
// wg.Done as it ends; those left over have sockets for Go's poller.
func (r *runner) startLoops(ctx context.Context, clients []*client, n int, wg *sync.WaitGroup) (ls *loopSet, rest []*client) {
	var loops []*evloop
	for range n {
		l, err := newLoop(r, ctx, wg)
		if err != nil {
			break // out of descriptors: the clients take goroutines
		}
		loops = append(loops, l)
	}
	for i, c := range clients {
		if len(loops) > 0 && c.w != nil && c.w.Blocking() {
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
	ls = &loopSet{r: r, ctx: ctx, wg: wg, done: make(chan struct{})}
	for _, l := range loops {
		if l.live == 0 {
			l.close()
			continue
		}
		wg.Add(l.live)
		l.size.Store(int32(l.live))
		ls.loops = append(ls.loops, l)
		go l.run()
	}
	return ls, rest
}

// unloop readies c for a goroutine of its own: its connection, made blocking for a
// loop, is made again for Go's poller (a TLS one already is). A failure leaves it
// without one, which its goroutine makes as before a transaction.
func (c *client) unloop(ctx context.Context) {
	c.onLoop = false
	if c.w != nil && c.w.Blocking() && !c.r.cfg.ThreadPerClient {
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
	return unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.w.FD(), &ev) == nil
}

func (l *evloop) run() {
	defer l.close()
	born, waited := monotonic(), int64(0)
	defer func() {
		l.life = monotonic() - born
		l.busy.Store(l.life - waited)
		if k := l.give.Swap(0); k > 0 {
			l.to.pending.Add(-k) // they end here
		}
		close(l.ended)
	}()
	for _, c := range l.clients {
		if c != nil {
			l.dispatch(c, wantNext)
		}
	}
	yieldAt := time.Now().UnixNano() + int64(pgwire.YieldEvery())
	nextScan := int64(0)
	for l.live > 0 || l.pending.Load() > 0 && !l.r.ended.Load() {
		asleep := monotonic()
		n, errno := epollWait(l.epfd, l.events, l.timeout(asleep))
		waited += monotonic() - asleep
		if errno != 0 {
			// A signal: how the runtime asks this goroutine to stop (see waited).
			pgwire.Yield(time.Now().UnixNano())
		}
		for _, e := range l.events[:n] {
			if e.Fd == wakeIndex {
				l.welcome()
			} else if c := l.clients[e.Fd]; c != nil {
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
			pgwire.Yield(now)
			yieldAt = now + int64(pgwire.YieldEvery())
		}
		if now >= nextScan {
			nextScan = now + int64(pgwire.BlockingTick)
			l.overdue(now)
			l.busy.Store(monotonic() - born - waited)
			l.size.Store(int32(l.live))
		}
	}
}

// timeout is how long, at now, the loop may wait in epoll: until its first pause
// ends or the next arrival comes due, and at most pgwire.BlockingTick, the period
// of its scan for deadlines.
func (l *evloop) timeout(now int64) int64 {
	wait := int64(pgwire.BlockingTick)
	if len(l.due) > 0 {
		return 0
	}
	if len(l.sleep) > 0 {
		wait = max(0, min(wait, l.sleep[0].wake-now))
	}
	if len(l.arrivals) > 0 {
		wait = max(0, min(wait, int64(time.Until(l.r.sched.Peek())-pacing.EarlyStart)))
	}
	return wait
}

// dispatch waits for what c wants, as the loop waits: an answer in epoll, a pause
// in the heap, an arrival in the queue, a connection by a goroutine away from the
// loop. Its next transaction begins at once, but a second one, after a
// transaction that sent nothing, waits for the next round (evloop.due).
func (l *evloop) dispatch(c *client, w want) {
	began := false
	for {
		c.waiting = w
		switch w {
		case wantNext:
			if k := l.give.Load(); k > 0 {
				l.give.Store(k - 1)
				l.move(c)
				return
			}
			if !began {
				began, w = true, c.next()
				continue
			}
			l.due = append(l.due, c)
		case wantAnswer:
			if c.muted {
				if c.muted = !l.watch(c); c.muted {
					w = c.answered(pgwire.ErrClosed)
					continue
				}
			}
			if err := c.w.WriteOut(); err != nil {
				w = c.answered(err)
				continue
			}
		case wantPause:
			heap.Push(&l.sleep, c)
		case wantArrival:
			l.arrivals = append(l.arrivals, c)
		case wantConnect:
			l.unwatch(c)
			go func() {
				c.connectOK = c.connectFor(l.ctx)
				l.handBack(c)
			}()
		default:
			l.unwatch(c)
			c.end()
			l.end()
		}
		return
	}
}

// dueBudget bounds the transactions (evloop.due) a loop begins between two looks at
// its sockets: whole rounds of them, until this many have begun.
const dueBudget = 256

// beginDue begins the transactions due in this round (see evloop.due).
func (l *evloop) beginDue() {
	due := l.due
	l.due = l.spare[:0]
	for i, c := range due {
		due[i] = nil
		l.dispatch(c, wantNext)
	}
	l.spare = due[:0]
}

// end counts a client of the loop that has ended.
func (l *evloop) end() {
	l.live--
	l.wg.Done()
}

// overdue cuts off the transactions whose deadline (Config.TxTimeout, the run's
// hard stop) passed by now, in unix nanoseconds.
func (l *evloop) overdue(now int64) {
	for _, c := range l.clients {
		if c == nil || c.waiting != wantAnswer {
			continue
		}
		if d := c.w.Deadline(); d != 0 && now >= d {
			l.dispatch(c, c.answered(os.ErrDeadlineExceeded))
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

// welcome takes back the clients that have connected, and ends those that have not.
func (l *evloop) welcome() {
	var buf [8]byte
	unix.Read(l.wake, buf[:])
	l.mu.Lock()
	back := l.back
	l.back = nil
	l.mu.Unlock()
	for _, c := range back {
		if c.moved {
			l.arrived(c)
			continue
		}
		if !c.connectOK {
			l.dispatch(c, wantEnd)
			continue
		}
		if c.w != nil && c.w.Blocking() {
			l.clients[c.slot], c.muted = c, false
			if l.watch(c) {
				l.dispatch(c, c.connected(true))
				continue
			}
			l.clients[c.slot] = nil
		}
		l.release(c, func() want { return c.connected(true) })
	}
}

// release hands c, connected again but not fit for the loop (its new connection
// uses TLS, or epoll refused it), to a goroutine of its own for the rest of the
// run, which goes on with what then.
func (l *evloop) release(c *client, then func() want) {
	l.live--
	go func() {
		defer l.wg.Done()
		c.unloop(l.ctx)
		c.drive(l.ctx, then())
	}()
}

// move hands c, between two transactions, to the newer loop it is to give clients
// to (evloop.give).
func (l *evloop) move(c *client) {
	l.unwatch(c)
	l.live--
	c.moved = true
	l.to.handBack(c)
}

// arrived takes c, moved from an older loop, among the loop's clients.
func (l *evloop) arrived(c *client) {
	c.moved = false
	l.pending.Add(-1)
	c.slot, c.muted = len(l.clients), false
	l.clients = append(l.clients, c)
	l.live++
	if !l.watch(c) {
		l.clients[c.slot] = nil
		l.release(c, func() want { return wantNext })
		return
	}
	l.dispatch(c, wantNext)
}

// unwatch takes c's connection out of the epoll set; c is away from the loop until
// welcome takes it back.
func (l *evloop) unwatch(c *client) {
	if c.w != nil && !c.muted {
		unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.w.FD(), nil)
	}
	l.clients[c.slot] = nil
}

// readable reads what c's server sent and, once its answer is whole, goes on. A
// client that waits for anything else has its socket taken out of the epoll set,
// which would report it again and again: its server said something between
// transactions (it ended the session), which the client reads once it next waits
// for an answer.
func (l *evloop) readable(c *client) {
	if c.waiting != wantAnswer {
		unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.w.FD(), nil)
		c.muted = true
		return
	}
	if c.w.ReadSome() {
		l.dispatch(c, c.answered(c.w.Await()))
	}
}

// wakeUp ends the pauses that are over at now, and all of them once the run stops.
func (l *evloop) wakeUp(now int64) {
	stopping := l.r.stopping.Load()
	for len(l.sleep) > 0 && (stopping || l.sleep[0].wake <= now) {
		c := heap.Pop(&l.sleep).(*client)
		l.dispatch(c, c.paused())
	}
}

// arrive lets the first client waiting for an arrival go on once one is due (it
// takes it, or waits again if another loop took it first), and all of them once the
// run stops.
func (l *evloop) arrive() {
	stopping := l.r.stopping.Load()
	if !stopping && time.Until(l.r.sched.Peek()) > pacing.EarlyStart {
		return
	}
	n := 1
	if stopping {
		n = len(l.arrivals)
	}
	for range n {
		c := l.arrivals[0]
		l.arrivals = l.arrivals[:copy(l.arrivals, l.arrivals[1:])]
		l.dispatch(c, c.arrived(!stopping))
	}
}

// sleepers is a heap of paused clients by the time they wake.
type sleepers []*client

func (h sleepers) Len() int           { return len(h) }
func (h sleepers) Less(i, j int) bool { return h[i].wake < h[j].wake }
func (h sleepers) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sleepers) Push(x any)        { *h = append(*h, x.(*client)) }
func (h *sleepers) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return c
}

// loopSet is a run's event loops. With Config.Loops 0 it adds loops while they are
// busy (scale): while each spends most of its time serving its clients rather than
// waiting in epoll, its clients' answers wait for it, whether it runs or waits for a
// core the server holds; another loop then serves some of them meanwhile.
type loopSet struct {
	r     *runner
	ctx   context.Context
	wg    *sync.WaitGroup
	loops []*evloop     // the scaler's until done is closed
	done  chan struct{} // closed once no loop is added any more
}

// scaleEvery is how often the scaler looks at the loops, and scaleBusy the share of
// that time each must have been busy for another to be added.
const (
	scaleEvery = 500 * time.Millisecond
	scaleBusy  = 0.7
)

// scale adds a loop, up to most, whenever every loop was busy more than scaleBusy of
// the last scaleEvery, until the run stops or its clients have finished.
func (ls *loopSet) scale(most int, finished <-chan struct{}) {
	defer close(ls.done)
	t := time.NewTicker(scaleEvery)
	defer t.Stop()
	last, at := make([]int64, len(ls.loops)), monotonic()
	for len(ls.loops) < most {
		select {
		case <-ls.r.stop:
			return
		case <-finished:
			return
		case <-t.C:
		}
		now := monotonic()
		add := true
		for i, l := range ls.loops {
			// A loop still handing clients over is not judged until it has.
			b := l.busy.Load()
			add = add && float64(b-last[i]) > scaleBusy*float64(now-at) && l.give.Load() == 0
			last[i] = b
		}
		at = now
		if add && !ls.add() {
			return
		}
		last = append(last, 0)[:len(ls.loops)]
	}
}

// add starts a loop and has each older loop give it its share of the clients, one by
// one as they end a transaction; false if no loop could be made.
func (ls *loopSet) add() bool {
	l, err := newLoop(ls.r, ls.ctx, ls.wg)
	if err != nil {
		return false
	}
	n := int32(len(ls.loops) + 1)
	gives := make([]int32, len(ls.loops))
	var moving int32
	for i, o := range ls.loops {
		gives[i] = o.size.Load() / n
		moving += gives[i]
	}
	if moving == 0 {
		l.close()
		return true
	}
	l.pending.Store(moving)
	go l.run()
	for i, o := range ls.loops {
		if gives[i] > 0 {
			o.to = l
			o.give.Store(gives[i])
		}
	}
	ls.loops = append(ls.loops, l)
	return true
}

// wait returns each loop's busy share of its life (Result.LoopBusy) once no loop is
// added any more and every loop has ended.
func (ls *loopSet) wait() []float64 {
	if ls == nil {
		return nil
	}
	<-ls.done
	var busy []float64
	for _, l := range ls.loops {
		<-l.ended
		busy = append(busy, float64(l.busy.Load())/float64(max(1, l.life)))
	}
	return busy
}
