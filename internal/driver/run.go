package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/outage"
	"github.com/pgbakeoff/pgbakeoff/internal/pacing"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Config is one run: a target, the scripts and how to drive them.
type Config struct {
	Target       *target.Target
	Scripts      []*Script
	Clients      int
	Protocol     Protocol
	Warmup       time.Duration // not measured
	Duration     time.Duration // the measurement window; ignored with Transactions
	Transactions int           // per client; when set, the run ends after them
	MaxTries     int           // tries per transaction on serialization failure or deadlock
	Interval     time.Duration // reporting interval, default 1s
	Seed         uint64
	MaxBackoff   time.Duration // reconnect backoff cap, default 1s
	// OutageTimeout ends the run early, marked Incomplete, when no client has had a
	// connection for that long; 0 waits for the server until the run ends.
	OutageTimeout time.Duration
	// TxTimeout abandons a transaction that has not completed within it (a stalled
	// network, a black-holed connection): the connection is closed, the transaction
	// counted as failed, and the outage that follows has cause "timeout". It fires
	// between TxTimeout and 1.5 TxTimeout after the transaction began, retries
	// included. 0 = no limit.
	TxTimeout time.Duration
	// ConnectTimeout bounds each connection attempt, statement preparation
	// included; 0 = the target's connect_timeout, else 10s per address.
	ConnectTimeout time.Duration
	// ResolveOnce resolves the target's host name once, at the start, and connects
	// every client, reconnections included, to the address found (see
	// target.Target.ResolveOnce); Result.Address records it.
	ResolveOnce bool
	// Deck deals the scripts from a shuffled deck holding each script Weight times,
	// as TPC-C's terminals do (exact proportions over every deck), instead of drawing
	// each transaction at random by weight as pgbench does.
	Deck bool
	// ConnectPerTx closes each client's connection after every transaction and
	// opens a new one for the next, as pgbench -C does, to measure what
	// connecting costs; Result.Connects and ConnectPerTx count it.
	ConnectPerTx bool
	// OnTransaction, when set, is called as each transaction ends (failed ones too,
	// not those of a client that stopped on an Abort), in the goroutine that drives
	// the client (its own, or its event loop's): it must be quick and safe for
	// concurrent use.
	OnTransaction func(TxEvent)
	// OnConnectionLost, when set, is called as a client finds its connection lost
	// (or, connecting for each transaction, refused), before it connects again,
	// with the cause as connfail.Cause gives it. It must be quick and safe for
	// concurrent use.
	OnConnectionLost func(at time.Time, cause string)
	// ExitOnAbort ends the run as soon as a client stops on an Abort, as pgbench's
	// --exit-on-abort; otherwise the other clients go on.
	ExitOnAbort bool
	// AbortOnLost stops a client whose connection is lost, counted as aborted, as
	// pgbench aborts it, where otherwise it connects again and goes on.
	AbortOnLost bool
	// ThreadPerClient gives each client an OS thread that sleeps in the kernel until
	// its server answers, as sysbench's threads do, instead of sharing GOMAXPROCS
	// threads (event loops, or Go's network poller), as pgbench -j does. On a
	// machine the client shares with the server it leaves no CPU idle between an
	// answer and the next request, at the price of a context switch per statement:
	// it pays for transactions that only read, not for those that write and so wait
	// for their commits' WAL flushes.
	// Run raises GOMAXPROCS by Clients for the run; at most MaxThreadClients. TLS
	// connections are multiplexed either way, and so are all connections on other
	// systems than Linux (see package pgwire).
	ThreadPerClient bool
	// Loops is how many event loops the clients share, as pgbench -j's threads;
	// each loop takes a core while its clients keep it busy. 0 starts with one
	// and adds one, up to the machine's cores, whenever every loop was busy more
	// than 70% of the last half second (Result.LoopBusy).
	Loops int
	// Rate, when above 0, runs the clients open-loop: transactions arrive at Rate a
	// second in all, as a Poisson process, and each one's latency counts from its
	// arrival (see pacing.Schedule). Keying and think times are then not waited.
	Rate float64
	// LatencyLimit counts the transactions that end later than it after their
	// arrival (Result.Rate.Late) and, with Rate, skips those that could not begin
	// within it (Result.Rate.Skipped), as pgbench -L does; 0 = no limit.
	LatencyLimit time.Duration
	// OnInterval receives each interval as it ends, from one goroutine.
	OnInterval func(Interval)
	// OnWindow is called as the measurement window opens (true) and closes (false),
	// from the same goroutine as OnInterval; it should return quickly.
	OnWindow func(open bool)
	// FirstClient is the first client's number: the clients of one shard of a run
	// spread over several processes are numbered as in a single process, so that
	// their random streams and what scripts derive from the number are the same.
	FirstClient int
	// AllClients is how many clients the run has in all its shards; 0: Clients.
	AllClients int
	// StartAt, when set, is the instant the warm-up begins, once every client has
	// connected: the shards of one run begin together, their intervals aligned on
	// the same instants. Run fails if it has passed by then. WaitStart, when set,
	// is called once every client has connected and gives that instant instead.
	StartAt   time.Time
	WaitStart func(ctx context.Context) (time.Time, error)
	// OnStart, when set, is told the instant the warm-up begins, before any
	// client sends a transaction.
	OnStart func(start time.Time)
}

// Phase of a transaction, by the time it ended.
type Phase int

const (
	Warmup  Phase = iota // before the window
	Measure              // inside the window: the only one reported as results
	After                // after the window, while clients finish
	phases
)

func (p Phase) String() string { return [...]string{"warmup", "measure", "after"}[p] }

// Interval is what happened between two ticks.
type Interval struct {
	Seq        int
	Start, End time.Time
	Phase      Phase // of most of the interval
	Committed  int64
	RolledBack int64
	Failed     int64
	Retried    int64
	Latency    *hdrhistogram.Histogram // all scripts, all phases
	// Down is how many clients had no connection as the interval ended, and
	// ConnectErrors how many attempts to connect again failed during it.
	Down          int
	ConnectErrors int64
	// With Config.Rate and Config.LatencyLimit: the mean schedule lag of the
	// transactions that ended in the interval, those skipped and those late.
	Lag           time.Duration
	Skipped, Late int64
	// The run so far, for live metrics, read once a tick from what the driver
	// keeps anyway. ByScript are the interval's latencies by phase and script
	// (index Phase*len(Scripts)+script), valid only during OnInterval; Totals the
	// counts since the start, indexed alike; Errors the failures and retried
	// tries since the start by script and SQLSTATE; Reconnects the connections
	// made again and OutageSeconds how long some client was without one.
	ByScript      []*hdrhistogram.Histogram
	Totals        []Totals
	Errors        []ErrorCount
	Reconnects    int64
	OutageSeconds float64
}

// Totals are one phase and script's counts since the run began.
type Totals struct {
	Failed, Retried, Retries, RolledBack int64
}

// ScriptResult is one transaction type's totals over the measurement window.
type ScriptResult struct {
	Name       string
	Weight     int
	Committed  int64
	RolledBack int64 // rolled back on purpose (Script.RollbackState, ErrRollback); in Latency
	Failed     int64
	Retried    int64 // transactions that succeeded or failed after more than one try
	Retries    int64 // extra tries in all
	Latency    *hdrhistogram.Histogram
	// Queries are the statements of the transactions that ended in the window,
	// retried tries and rollbacks included, counted as sysbench counts them. Retries
	// count in the phase they happened in, so a transaction retried just before the
	// window opens adds statements here but no retry.
	Queries Queries
}

// Queries counts statements as sysbench does (see pgwire.Queries).
type Queries = pgwire.Queries

// ErrorCount is how often one SQLSTATE was seen for one script.
type ErrorCount struct {
	Script   string
	SQLState string
	// Cause is set for transactions lost with their connection (SQLSTATE 08006, or
	// the server's FATAL one): why it was lost, as connfail.Cause classifies it.
	Cause   string
	Retried bool // seen on a try that was then retried
	Count   int64
	Example string
}

// Result is a finished run.
type Result struct {
	Start       time.Time // clients connected, warm-up begins
	WindowStart time.Time
	WindowEnd   time.Time
	End         time.Time
	Scripts     []ScriptResult
	Errors      []ErrorCount
	Outages     []Outage
	// ConnectErrors are the failed attempts to connect again, by cause.
	ConnectErrors []ConnectErrorCount
	Committed     int64 // measured window, all scripts
	Failed        int64
	CommitsTotal  int64 // server transactions committed by the clients, warm-up, tail, session starts and statement preparation included
	ConnectTime   time.Duration
	// With Config.ConnectPerTx: the connections made and closed between
	// transactions, and the time that took, all clients together.
	Connects     int64
	ConnectPerTx time.Duration
	Interrupted  bool
	// Incomplete is set when the run ended early because no client had a
	// connection for Config.OutageTimeout; IncompleteReason says so for people.
	// Everything measured until then is in the result.
	Incomplete       bool
	IncompleteReason string
	// Aborted counts the clients that stopped on an error their script cannot go
	// on from (an Abort), as pgbench aborts a client; Abort is the first such error.
	Aborted int
	Abort   string
	// Address is where the first connection went: IP address and port, or the
	// Unix socket's path.
	Address string
	// Rate are the open-loop figures (Config.Rate, Config.LatencyLimit).
	Rate RateFigures
	// ReadAtOnce is, with Config.ThreadPerClient on a Unix-domain socket, the share
	// of answers read without polling first (see pgwire.WaitChooser).
	ReadAtOnce float64
	// EventLoops is how many event loops drove the clients (see evloop_linux.go);
	// 0 when each client had a goroutine. LoopBusy is each loop's share of its
	// life spent serving its clients rather than waiting for their servers: on
	// a machine of its own, a loop near 1 is what limited its clients (where the
	// client shares its cores with the server, a loop that waits for a core counts
	// as busy too).
	EventLoops int
	LoopBusy   []float64
	// SharedThreads is, when clients ran on goroutines of their own (not loops,
	// not a thread each), the threads they shared: GOMAXPROCS.
	SharedThreads int
}

// TxEvent is one transaction as it ended (Config.OnTransaction).
type TxEvent struct {
	Client, Script int
	Start, End     time.Time
	Tries          int    // 1, or more when it was retried
	Failed         bool   // it failed on its last try, or its connection was lost
	SQLState       string // why it failed
	// With Config.Rate, Start is the arrival; Lag is how long the transaction
	// waited for its client after it. Skipped transactions (Config.LatencyLimit)
	// never ran: End is when they were skipped.
	Lag     time.Duration
	Skipped bool
}

type counters struct{ failed, retried, retries, rolledBack atomic.Int64 }

type runner struct {
	cfg         Config
	names       [][]string            // each script's statements as prepared (stmtName)
	stmts       [][]*pgwire.Statement // each script's Commands as the protocol sends them
	totalWeight int64
	start       time.Time
	windowStart time.Time
	windowEnd   time.Time
	hardStopNs  atomic.Int64 // unix nanoseconds after which clients are cut off
	stopping    atomic.Bool
	stop        chan struct{}
	reg         *histogram.Registry
	count       [][phases]counters // per script
	// Cumulative, interval-independent totals for the tick.
	tickFailed     atomic.Int64
	tickRetried    atomic.Int64
	tickRolledBack atomic.Int64
	// Each session's start and each statement prepared outside a transaction
	// block is a transaction the server counts as committed.
	prepares atomic.Int64
	// Config.ConnectPerTx: connections made between transactions, and the time
	// spent connecting and disconnecting.
	connects, connectNs atomic.Int64
	steps               []Stepper // each script's, as its clients run it (tx.go)

	ended  atomic.Bool         // every client has ended
	sched  *pacing.Schedule    // with Config.Rate
	pacing bool                // the pacer runs for clients on goroutines of their own
	target *target.Target      // cfg.Target with the run's connect timeout, resolved once if asked
	waits  *pgwire.WaitChooser // with Config.ThreadPerClient: how clients on a Unix-domain socket wait
	loops  int                 // event loops the clients run on (see evloop_linux.go); 0 for none

	abortCh chan struct{} // closed when the first client stops on an Abort
	mu      sync.Mutex
	aborted int
	abort   string
	errs    map[errKey]*ErrorCount
	address string
	// The clients without a connection, their outages and failed reconnections.
	outages *outage.Book
}

type errKey struct {
	script  int
	state   string
	cause   string
	retried bool
}

// Run executes cfg. It returns when the window has ended and every client has
// finished its transaction, or when ctx is cancelled (the result is then marked
// interrupted, with everything measured so far).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	r, err := newRunner(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if r.cfg.ThreadPerClient {
		defer addProcs(r.cfg.Clients)()
	}
	clients, err := r.connectAll(ctx)
	if err != nil {
		return nil, err
	}
	r.outages.Running(len(clients))
	res := &Result{ConnectTime: time.Since(r.start)}
	if err := r.begin(ctx, clients); err != nil {
		for _, c := range clients {
			c.close()
		}
		return nil, err
	}
	// Cancelled as the run stops, so that no client waits for a connection then.
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	finished, stopChooser, chosen, loops := r.launch(runCtx, clients, res)
	iv := newIntervals(r, clients)
	sv := r.supervise(ctx, cancelRun, clients, iv, finished, res)
	res.End = time.Now()
	if sv.windowOpen {
		sv.window(false) // --transactions: the window closes when the last client is done
	}
	iv.tick(res.End)
	if stopChooser != nil {
		close(stopChooser)
		res.ReadAtOnce = <-chosen
	}
	r.collect(res, clients, iv.cumulative)
	res.LoopBusy = loops.wait()
	res.EventLoops = len(res.LoopBusy)
	return res, nil
}

// noLoops keeps every client off the event loops, for a test of the other
// transport on Linux.
var noLoops bool

// newRunner checks cfg and readies what the run counts into.
func newRunner(ctx context.Context, cfg Config) (*runner, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, stop: make(chan struct{}), abortCh: make(chan struct{}), errs: map[errKey]*ErrorCount{}}
	r.outages = outage.NewBook(r.scrub)
	r.target = &target.Target{DSN: cfg.Target.DSN, Config: cfg.Target.Config.Copy()}
	if cfg.ConnectTimeout > 0 {
		r.target.Config.ConnectTimeout = cfg.ConnectTimeout
	}
	if cfg.ResolveOnce {
		t, err := r.target.ResolveOnce(ctx)
		if err != nil {
			return nil, err
		}
		r.target = t
	}
	var names []string
	for p := Phase(0); p < phases; p++ {
		for _, s := range cfg.Scripts {
			names = append(names, p.String()+"/"+s.Name)
		}
	}
	r.reg = histogram.NewRegistry(names)
	if cfg.ThreadPerClient {
		r.waits = &pgwire.WaitChooser{}
	} else if loopable(&r.cfg) && !noLoops {
		r.loops = max(1, min(cfg.Loops, cfg.Clients))
	}
	r.count = make([][phases]counters, len(cfg.Scripts))
	for si, s := range cfg.Scripts {
		r.totalWeight += int64(s.Weight)
		var n []string
		for ci := range max(len(s.Commands), len(s.Statements)) {
			n = append(n, stmtName(si, ci))
		}
		r.names = append(r.names, n)
		var stmts []*pgwire.Statement
		for ci, cmd := range s.Commands {
			st, err := pgwire.NewStatement(cfg.Protocol, stmtName(si, ci), cmd.SQL, len(cmd.Params))
			if err != nil {
				return nil, err
			}
			stmts = append(stmts, st)
		}
		r.stmts = append(r.stmts, stmts)
		switch {
		case s.Steps != nil:
			r.steps = append(r.steps, s.Steps)
		case s.Program != nil:
			r.steps = append(r.steps, program(s.Program))
		default:
			r.steps = append(r.steps, commands{})
		}
	}
	return r, nil
}

// begin waits, once every client has connected, for the instant the warm-up
// begins (Config.StartAt or WaitStart), and sets the window and the arrivals'
// schedule from it.
func (r *runner) begin(ctx context.Context, clients []*client) error {
	cfg := &r.cfg
	if cfg.WaitStart != nil {
		at, err := cfg.WaitStart(ctx)
		if err != nil {
			return err
		}
		cfg.StartAt = at
	}
	r.start = time.Now()
	if !cfg.StartAt.IsZero() {
		if late := r.start.Sub(cfg.StartAt); late > 0 {
			return fmt.Errorf("the run was to start at %s, and its clients were connected only %s later: leave the shards more time to connect before the start",
				cfg.StartAt.Format(time.RFC3339Nano), late.Round(time.Millisecond))
		}
		t := time.NewTimer(time.Until(cfg.StartAt))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		r.start = cfg.StartAt
	}
	if cfg.OnStart != nil {
		cfg.OnStart(r.start)
	}
	r.windowStart = r.start.Add(cfg.Warmup)
	if cfg.Transactions > 0 {
		r.windowEnd = r.start.Add(MaxSpan)
	} else {
		r.windowEnd = r.windowStart.Add(cfg.Duration)
	}
	r.hardStopNs.Store(r.windowEnd.Add(30 * time.Second).UnixNano())
	if cfg.Rate > 0 {
		// Shards draw arrivals of their own: the same seed would send theirs together.
		r.sched = pacing.New(cfg.Rate, cfg.Seed+uint64(cfg.FirstClient), r.start, cfg.Warmup, r.windowEnd.Sub(r.start))
	}
	return nil
}

// launch starts the clients: those that can on event loops, the others on
// goroutines of their own, and the pacer, the scaler of loops and the chooser of
// waits where the run has them. finished is closed once every client has ended;
// with a chooser, closing stopChooser makes it send the share of answers read at
// once on chosen.
func (r *runner) launch(ctx context.Context, clients []*client, res *Result) (finished, stopChooser chan struct{}, chosen chan float64, loops *loopSet) {
	var wg sync.WaitGroup
	rest := clients
	if r.loops > 0 {
		loops, rest = r.startLoops(ctx, clients, r.loops, &wg)
	}
	if len(rest) > 0 && !r.cfg.ThreadPerClient {
		res.SharedThreads = runtime.GOMAXPROCS(0)
	}
	r.pacing = r.sched != nil && len(rest) > 0
	for _, c := range rest {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.drive(ctx, wantNext)
		}()
	}
	finished = make(chan struct{})
	go func() {
		wg.Wait()
		r.ended.Store(true)
		close(finished)
	}()
	if loops != nil {
		if r.cfg.Loops == 0 {
			go loops.scale(min(runtime.NumCPU(), r.cfg.Clients), finished)
		} else {
			close(loops.done)
		}
	}
	if r.sched != nil {
		if r.pacing {
			go r.sched.Pace(r.stop, finished)
		} else {
			r.sched.NoPacer() // the event loops pace their clients
		}
	}
	chosen = make(chan float64, 1)
	if r.waits != nil {
		stopChooser = make(chan struct{})
		go r.waits.Choose(stopChooser, chosen)
	}
	return finished, stopChooser, chosen, loops
}

// intervals turns the clients' histograms into an Interval on each tick, and
// keeps each phase and script's cumulative histogram.
type intervals struct {
	r          *runner
	clients    []*client
	cumulative []*hdrhistogram.Histogram
	seq        int
	start      time.Time
}

func newIntervals(r *runner, clients []*client) *intervals {
	iv := &intervals{r: r, clients: clients, start: r.start, cumulative: make([]*hdrhistogram.Histogram, int(phases)*len(r.cfg.Scripts))}
	for i := range iv.cumulative {
		iv.cumulative[i] = histogram.New()
	}
	return iv
}

// tick ends the interval at end and hands it to Config.OnInterval.
func (t *intervals) tick(end time.Time) {
	r, cfg := t.r, &t.r.cfg
	hs := r.reg.Tick()
	iv := Interval{Seq: t.seq, Start: t.start, End: end, Latency: histogram.New()}
	// The phase that covers most of the interval: ticks fire a little after the
	// window's edges, so by an interval's end the next phase has begun.
	iv.Phase = r.phaseOf(t.start.Add(end.Sub(t.start) / 2))
	for i, h := range hs {
		t.cumulative[i].Merge(h)
		iv.Latency.Merge(h)
	}
	iv.RolledBack = r.tickRolledBack.Swap(0)
	iv.Committed = iv.Latency.TotalCount() - iv.RolledBack
	iv.Failed = r.tickFailed.Swap(0)
	iv.Retried = r.tickRetried.Swap(0)
	iv.ConnectErrors = r.outages.TickConnectErrors()
	if cfg.Rate > 0 || cfg.LatencyLimit > 0 {
		var lagSum, lagN int64
		for _, c := range t.clients {
			lagSum += c.rate.tickLagSum.Swap(0)
			lagN += c.rate.tickLagN.Swap(0)
			iv.Skipped += c.rate.tickSkipped.Swap(0)
			iv.Late += c.rate.tickLate.Swap(0)
		}
		if lagN > 0 {
			iv.Lag = time.Duration(lagSum / lagN)
		}
	}
	iv.Down = r.outages.Down()
	iv.ByScript = hs
	iv.Totals = make([]Totals, len(hs))
	for si := range cfg.Scripts {
		for p := range phases {
			c := &r.count[si][p]
			iv.Totals[int(p)*len(cfg.Scripts)+si] = Totals{Failed: c.failed.Load(), Retried: c.retried.Load(), Retries: c.retries.Load(), RolledBack: c.rolledBack.Load()}
		}
	}
	iv.Errors = r.errorCounts()
	var down time.Duration
	iv.Reconnects, down = r.outages.Reconnected()
	iv.OutageSeconds = down.Seconds()
	t.seq++
	t.start = end
	if cfg.OnInterval != nil {
		cfg.OnInterval(iv)
	}
}

// supervisor is what the goroutine that watches the run keeps: whether the window
// is open, and how to stop every client.
type supervisor struct {
	r          *runner
	clients    []*client
	cancelRun  context.CancelFunc
	windowOpen bool
}

// window tells Config.OnWindow that the window opened or closed.
func (s *supervisor) window(open bool) {
	if s.r.cfg.OnWindow != nil && open != s.windowOpen {
		s.r.cfg.OnWindow(open)
	}
	s.windowOpen = open
}

// stopAll stops the run: clients finish their transaction, and one stuck past the
// grace period is cut off. The window, if open, closes.
func (s *supervisor) stopAll() {
	r := s.r
	if r.stopping.CompareAndSwap(false, true) {
		close(r.stop)
		grace := time.Now().Add(10 * time.Second)
		if grace.Before(r.hardStop()) {
			r.hardStopNs.Store(grace.UnixNano())
		}
		for _, c := range s.clients {
			c.setDeadline(r.hardStop())
		}
		s.cancelRun()
	}
	if s.windowOpen {
		s.window(false)
	}
}

// supervise ticks the intervals, opens and closes the window, and stops the run
// at its end, on ctx's cancellation, after Config.OutageTimeout without any
// connection, or at the first Abort with Config.ExitOnAbort, until every client
// has finished.
func (r *runner) supervise(ctx context.Context, cancelRun context.CancelFunc, clients []*client, iv *intervals, finished chan struct{}, res *Result) *supervisor {
	cfg := &r.cfg
	sv := &supervisor{r: r, clients: clients, cancelRun: cancelRun}
	ticker := time.NewTicker(cfg.Interval)
	defer ticker.Stop()
	endTimer := time.NewTimer(time.Until(r.windowEnd))
	defer endTimer.Stop()
	openTimer := time.NewTimer(time.Until(r.windowStart))
	defer openTimer.Stop()
	// outage fires when no client has had a connection for cfg.OutageTimeout.
	outage := time.NewTimer(time.Hour)
	outage.Stop()
	defer outage.Stop()
	ctxDone := ctx.Done()
	var abortCh <-chan struct{}
	if cfg.ExitOnAbort {
		abortCh = r.abortCh
	}
	for {
		select {
		case now := <-ticker.C:
			iv.tick(now)
		case <-openTimer.C:
			sv.window(true)
		case <-endTimer.C:
			r.windowEnded(res)
			sv.stopAll()
		case <-ctxDone:
			res.Interrupted = true
			ctxDone = nil
			sv.stopAll()
		case <-r.outages.Changed():
			if since, _ := r.outages.AllDownSince(); cfg.OutageTimeout > 0 && !since.IsZero() {
				outage.Reset(time.Until(since.Add(cfg.OutageTimeout)))
			} else {
				outage.Stop()
			}
		case <-outage.C:
			if r.outageOver(outage, res) {
				sv.stopAll()
			}
		case <-abortCh:
			abortCh = nil
			sv.stopAll()
		case <-finished:
			return sv
		}
	}
}

// windowEnded notes a server that went away and has not come back by the
// window's end: it left part of the window unmeasured, however long the outage
// timeout.
func (r *runner) windowEnded(res *Result) {
	since, last := r.outages.AllDownSince()
	if since.IsZero() {
		return
	}
	res.Incomplete = true
	res.IncompleteReason = fmt.Sprintf("the server had not come back when the window ended: no client had a connection for its last %s",
		time.Since(since).Round(100*time.Millisecond))
	if last != "" {
		res.IncompleteReason += "; the last attempt to connect failed with " + connfail.Name(last)
	}
}

// outageOver tells, when the outage timer fires, whether no client has had a
// connection for Config.OutageTimeout, and marks the result incomplete if so;
// else it sets the timer again for what is left.
func (r *runner) outageOver(outage *time.Timer, res *Result) bool {
	since, last := r.outages.AllDownSince()
	if since.IsZero() || r.stopping.Load() {
		return false
	}
	if left := time.Until(since.Add(r.cfg.OutageTimeout)); left > 0 {
		outage.Reset(left)
		return false
	}
	res.Incomplete = true
	res.IncompleteReason = fmt.Sprintf("no client had a connection for %s (the outage timeout)", r.cfg.OutageTimeout)
	if last != "" {
		res.IncompleteReason += "; the last attempt to connect failed with " + connfail.Name(last)
	}
	return true
}

// collect fills the result with the run's totals once every client has ended:
// per script, the window's histograms and counts, and the server transactions
// of every phase; the errors, outages and failed connections, in order.
func (r *runner) collect(res *Result, clients []*client, cumulative []*hdrhistogram.Histogram) {
	cfg := &r.cfg
	if cfg.Transactions > 0 || res.End.Before(r.windowEnd) {
		r.windowEnd = res.End
	}
	if r.sched != nil {
		<-r.sched.Done()
		r.sched.EndWindow(r.windowEnd.Sub(r.start))
	}
	res.Rate = r.rateFigures(clients)
	res.Start, res.WindowStart, res.WindowEnd = r.start, r.windowStart, r.windowEnd
	for si, s := range cfg.Scripts {
		m := &r.count[si][Measure]
		sr := ScriptResult{Name: s.Name, Weight: s.Weight, Latency: cumulative[int(Measure)*len(cfg.Scripts)+si],
			Failed: m.failed.Load(), Retried: m.retried.Load(), Retries: m.retries.Load(), RolledBack: m.rolledBack.Load()}
		sr.Committed = sr.Latency.TotalCount() - sr.RolledBack
		for _, c := range clients {
			sr.Queries.Add(c.queries[si][Measure])
		}
		res.Scripts = append(res.Scripts, sr)
		res.Committed += sr.Committed
		res.Failed += sr.Failed
	}
	res.CommitsTotal = r.prepares.Load()
	for _, c := range clients {
		res.CommitsTotal += c.commits
	}
	res.Connects, res.ConnectPerTx = r.connects.Load(), time.Duration(r.connectNs.Load())
	res.Errors = r.errorCounts()
	r.mu.Lock()
	res.Address = r.address
	res.Aborted, res.Abort = r.aborted, r.abort
	r.mu.Unlock()
	res.Outages, res.ConnectErrors = r.outages.Outages(), r.outages.ConnectErrors()
}

func (cfg *Config) validate() error {
	if cfg.Target == nil {
		return errors.New("no target")
	}
	if len(cfg.Scripts) == 0 {
		return errors.New("no script to run")
	}
	for _, s := range cfg.Scripts {
		if err := s.Validate(); err != nil {
			return err
		}
		if s.Weight == 0 && len(cfg.Scripts) > 1 {
			return fmt.Errorf("script %s has weight 0", s.Name)
		}
		if len(cfg.Scripts) == 1 && s.Weight == 0 {
			s.Weight = 1
		}
	}
	if cfg.Clients < 1 {
		return fmt.Errorf("Clients must be at least 1, got %d", cfg.Clients)
	}
	if cfg.AllClients == 0 {
		cfg.AllClients = cfg.Clients
	}
	if cfg.FirstClient < 0 || cfg.FirstClient+cfg.Clients > cfg.AllClients {
		return fmt.Errorf("clients %d to %d are not among the run's %d", cfg.FirstClient, cfg.FirstClient+cfg.Clients-1, cfg.AllClients)
	}
	if err := CheckThreads(cfg.ThreadPerClient, cfg.Clients); err != nil {
		return err
	}
	if cfg.Transactions < 0 {
		return fmt.Errorf("Transactions must be positive, got %d", cfg.Transactions)
	}
	if cfg.Transactions == 0 && cfg.Duration <= 0 {
		return fmt.Errorf("Duration must be positive, got %s", cfg.Duration)
	}
	if cfg.Warmup < 0 {
		return fmt.Errorf("Warmup must not be negative, got %s", cfg.Warmup)
	}
	if cfg.MaxTries < 1 {
		cfg.MaxTries = 1
	}
	if cfg.Loops < 0 {
		return fmt.Errorf("Loops must not be negative, got %d", cfg.Loops)
	}
	if cfg.Rate < 0 || cfg.Rate > 0 && cfg.Rate < MinRate || math.IsNaN(cfg.Rate) || math.IsInf(cfg.Rate, 0) {
		return fmt.Errorf("Rate must be a number of transactions a second from %g, got %g", MinRate, cfg.Rate)
	}
	if cfg.LatencyLimit < 0 {
		return fmt.Errorf("LatencyLimit must not be negative, got %s", cfg.LatencyLimit)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Second
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"OutageTimeout", cfg.OutageTimeout}, {"TxTimeout", cfg.TxTimeout}, {"ConnectTimeout", cfg.ConnectTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("%s must not be negative, got %s", d.field, d.v)
		}
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"Warmup", cfg.Warmup}, {"Duration", cfg.Duration},
		{"OutageTimeout", cfg.OutageTimeout}, {"TxTimeout", cfg.TxTimeout}, {"ConnectTimeout", cfg.ConnectTimeout},
		{"Interval", cfg.Interval}, {"MaxBackoff", cfg.MaxBackoff},
		// Two durations of at most MaxSpan each do not overflow when added.
		{"Warmup and Duration", cfg.Warmup + cfg.Duration}} {
		if d.v > MaxSpan {
			return fmt.Errorf("%s is too long: at most %s (100 years)", d.field, MaxSpan)
		}
	}
	return nil
}

// MaxSpan is the longest warm-up and window together, and the longest timeout, a
// run takes. Its deadlines are the clock plus such durations (a window of
// Transactions ends in MaxSpan) and are kept in nanoseconds since 1970, which
// overflow in 2262: beyond, every deadline would lie in the past.
const MaxSpan = 100 * 365 * 24 * time.Hour

// connectAll opens every client's connection before the clock starts, a few at a
// time, as pgbench does before it measures.
func (r *runner) connectAll(ctx context.Context) ([]*client, error) {
	r.start = time.Now()
	r.hardStopNs.Store(time.Now().Add(24 * time.Hour).UnixNano())
	clients := make([]*client, r.cfg.Clients)
	maxVars := 0
	for _, s := range r.cfg.Scripts {
		maxVars = max(maxVars, len(s.Vars))
	}
	errs := make([]error, len(clients))
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range clients {
		id := r.cfg.FirstClient + i
		c := &client{id: id, r: r, rng: rand.NewPCG(r.cfg.Seed, uint64(id)+1), hist: r.reg.Worker(), vals: make([]int64, maxVars),
			queries: make([][phases]Queries, len(r.cfg.Scripts)), onLoop: r.loops > 0}
		clients[i] = c
		if r.waits != nil {
			c.waits = r.waits.Counter()
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = c.connectFirst(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			for _, c := range clients {
				c.close()
			}
			return nil, err
		}
	}
	return clients, nil
}

func (r *runner) hardStop() time.Time { return time.Unix(0, r.hardStopNs.Load()) }

func (r *runner) phaseOf(t time.Time) Phase {
	switch {
	case t.Before(r.windowStart):
		return Warmup
	case t.Before(r.windowEnd):
		return Measure
	}
	return After
}

// record records a transaction that ended at end, and returns the phase it counts in.
func (r *runner) record(w *histogram.Worker, si int, start, end time.Time, retried, rolledBack bool) Phase {
	p := r.phaseOf(end)
	w.Record(int(p)*len(r.cfg.Scripts)+si, end.Sub(start))
	if rolledBack {
		r.count[si][p].rolledBack.Add(1)
		r.tickRolledBack.Add(1)
	}
	if retried {
		r.count[si][p].retried.Add(1)
		r.tickRetried.Add(1)
	}
	return p
}

func (r *runner) retry(si int, pe interface{ SQLState() string }) {
	p := r.phaseOf(time.Now())
	r.count[si][p].retries.Add(1)
	r.addError(si, pe.SQLState(), "", "", true)
}

// fail counts a transaction that failed at at, and returns the phase it counts in.
func (r *runner) fail(si int, at time.Time, state, cause, msg string, retried bool) Phase {
	p := r.phaseOf(at)
	r.count[si][p].failed.Add(1)
	if retried {
		r.count[si][p].retried.Add(1)
	}
	r.tickFailed.Add(1)
	r.addError(si, state, cause, msg, false)
	return p
}

// abortClient counts a client stopped by an Abort, and its transaction as failed
// unless it completed (Abort.Done); the failure keeps the SQL error's SQLSTATE.
func (r *runner) abortClient(si int, at time.Time, ab *Abort, retried bool) {
	if !ab.Done {
		state := ""
		var pe *pgconn.PgError
		if errors.As(ab, &pe) {
			state = pe.Code
		}
		r.fail(si, at, state, CauseAborted, ab.Error(), retried)
	}
	r.clientStopped(ab.Error())
}

// clientStopped counts a client aborted, why being the first one's reason.
func (r *runner) clientStopped(why string) {
	r.mu.Lock()
	r.aborted++
	if r.abort == "" {
		r.abort = r.scrub(why)
		close(r.abortCh)
	}
	r.mu.Unlock()
}

// errorCounts are the failures and retried tries so far, the most frequent first.
func (r *runner) errorCounts() []ErrorCount {
	r.mu.Lock()
	errs := make([]ErrorCount, 0, len(r.errs))
	for _, e := range r.errs {
		errs = append(errs, *e)
	}
	r.mu.Unlock()
	sort.Slice(errs, func(i, j int) bool { return errs[i].Count > errs[j].Count })
	return errs
}

func (r *runner) addError(si int, state, cause, msg string, retried bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := errKey{si, state, cause, retried}
	e := r.errs[k]
	if e == nil {
		e = &ErrorCount{Script: r.cfg.Scripts[si].Name, SQLState: state, Cause: cause, Retried: retried, Example: r.scrub(msg)}
		r.errs[k] = e
	}
	e.Count++
}
