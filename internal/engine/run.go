package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
	"github.com/pgbakeoff/pgbakeoff/internal/metrics"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Run makes the run the spec describes: preflight (reachability, version,
// connection slots, the data), the server's counters around it and its
// sampling during it, the clients' measured window, the validity rules, and
// every figure written to the results store as it comes. It returns the
// summary, also with an error when the run ended early: what was measured is
// kept.
func Run(ctx context.Context, spec Spec, env Env) (*Summary, error) {
	if spec.Target == nil || spec.Workload == nil || env.OpenStore == nil {
		return nil, errors.New("run: the spec lacks a target or a workload, or its environment a results store")
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := checkFaults(&spec, &env); err != nil {
		return nil, err
	}
	if env.Out == nil {
		env.Out = io.Discard
	}
	if env.Log == nil {
		env.Log = io.Discard
	}
	// Faults, the clients' supervisor and the sampler write notices at once.
	env.Log = &lockedWriter{w: env.Log}
	r, err := prepare(ctx, &spec, &env)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.measure(ctx)
}

// running is one run under way: what preflight found, the control session, the
// store and the run's record in it, and what is gathered as it goes.
type running struct {
	spec    *Spec
	env     *Env
	info    *target.Info
	ctl     *sampler.Control
	setup   *Setup
	st      *store.Store
	rec     *store.Run
	seed    uint64
	appName string // the clients' application_name, to find their sessions
	fit     fit
	naptime time.Duration
	stats   serverStats
	smp     *sampler.Sampler // nil when the server cannot be sampled
	// clockOffset is how far the server's clock is ahead of this machine's, for a
	// shard, whose windows line up with the others' only as well as their clocks.
	clockOffset time.Duration
	mon         runMonitor
	metrics     *metrics.Run // the run's live figures; nil when none are served
	faults      *faultRun    // a run with faults
	// stop ends the clients early: a results store that cannot be written stops
	// the run, since measuring what cannot be kept would waste everyone's time.
	stop     context.CancelFunc
	storeErr error
}

// prepare checks the target before anything is sent (reachability, version,
// settings, slots, the workload's data) and records the run in the store.
func prepare(ctx context.Context, spec *Spec, env *Env) (_ *running, err error) {
	t := spec.Target
	info, err := inspectWaiting(ctx, env.Log, t, spec.OutageTimeout)
	if err != nil {
		return nil, err
	}
	if info, err = waitSlots(ctx, env.Log, t, info, spec.Clients, spec.OwnSessions()); err != nil {
		return nil, err
	}
	r := &running{spec: spec, env: env, info: info, stats: newServerStats()}
	if r.ctl, err = sampler.NewControl(ctx, t.Connect); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	conn, err := r.ctl.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// The seed is chosen before the workload builds its scripts, which may draw
	// from it (pgbench's), so that the seed stored with the run repeats them.
	r.seed = spec.Seed.Value
	if !spec.Seed.Fixed {
		r.seed = uint64(env.Now().UnixNano())
		if spec.Shard.On() {
			r.seed = groupSeed(spec.Group()) // every shard the same, as one process's
		}
	}
	spec.Seed = Seed{r.seed, true}
	// Auto resolved once, as the run records it.
	spec.ThreadPerClient = map[bool]Switch{false: Off, true: On}[spec.Threaded()]
	if r.setup, err = spec.Workload.Setup(ctx, spec, env, conn); err != nil {
		return nil, err
	}
	if r.st, err = env.OpenStore(ctx); err != nil {
		return nil, err
	}
	_, clients, _ := spec.share()
	r.rec = &store.Run{
		Target: t.String(), Workload: spec.Workload.Name(), Script: driver.Mix(r.setup.Scripts), Clients: clients,
		ServerVersion: info.Version, Settings: info.Settings, Labels: spec.Labels, Started: env.Now(),
		Params: map[string]any{"protocol": r.setup.Protocol.String(), "warmup_s": spec.Warmup.Seconds(),
			"duration_s": spec.Duration.Seconds(), "transactions": spec.Transactions, "max_tries": spec.MaxTries,
			"seed": r.seed, "jobs": jobsParam(spec.Jobs), "thread_per_client": spec.ThreadPerClient == On, "address": info.Address, "tls_version": info.TLSVersion, "tls_cipher": info.TLSCipher},
	}
	maps.Copy(r.rec.Params, r.setup.Params)
	if spec.Shard.On() {
		if err := r.shardParams(ctx, conn); err != nil {
			return nil, err
		}
	}
	r.fit = datasetFit(ctx, conn, spec.Local)
	r.naptime = autovacuumNaptime(ctx, conn)
	maps.Copy(r.rec.Params, r.fit.params())
	if _, err := r.st.CreateRun(ctx, r.rec); err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Log, "run %d: %s %s on %s, PostgreSQL %s, %s, %d clients\n",
		r.rec.ID, spec.Workload.Name(), r.rec.Script, info.Address, info.Version, r.setup.Size, clients)
	if spec.Shard.On() {
		start := "starting when every shard has arrived in the results store"
		if !spec.StartAt.IsZero() {
			start = "starting at " + spec.StartAt.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(env.Log, "run %d is shard %s of %s (%d clients in all), %s\n", r.rec.ID, spec.Shard, spec.Group(), spec.Clients, start)
	}
	r.appName = fmt.Sprintf("pgbakeoff-run-%d", r.rec.ID)
	if spec.Shard.On() {
		// One name for every shard's sessions: shard 0's sampler counts them as the
		// benchmark's, not as other work in the database.
		r.appName = fmt.Sprintf("pgbakeoff-shards-%016x", groupSeed(spec.Group()))
	}
	return r, nil
}

func (r *running) close() {
	if r.st != nil {
		r.st.Close()
	}
	r.ctl.Close()
}

// measure runs the clients between the server's counters read before the first
// connects and after the last has gone, sampling the server meanwhile.
func (r *running) measure(ctx context.Context) (*Summary, error) {
	spec, env, t := r.spec, r.env, r.spec.Target
	r.readStats(store.PointBeforeConnect, true)
	spanStart := time.Now()
	addrs0, _ := t.Resolve(ctx)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	r.stop = stop
	r.metrics = env.Metrics.Run(r.metricLabels(), scriptNames(r.setup.Scripts))
	defer r.metrics.End()
	if err := r.startFaults(ctx); err != nil {
		r.failed()
		return nil, err
	}
	r.startSampler(ctx)

	cpu0 := readCPU()
	prog := newProgressPrinter(env.Out, env.Progress, spec.Rate > 0)
	res, err := driver.Run(runCtx, r.driverConfig(prog))
	prog.flush()
	faults := r.finishFaults(res)
	if err != nil {
		if r.smp != nil {
			r.smp.Stop()
		}
		r.failed()
		return nil, err
	}
	cpu1 := readCPU()
	var sres sampler.Result
	if r.smp != nil {
		sres = r.smp.Stop()
	}
	// Sessions report their last counts as they exit: only once the benchmark's
	// and the sampler's are gone do the server's counters hold all their work.
	sctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	// Only the process that reads the counters waits (a shard's sessions share
	// their name with the others', whose end is shard 0's to wait for).
	if spec.Shard.Index == 0 {
		if err := r.ctl.WaitGone(sctx, r.appName, sres.PIDs, 30*time.Second); err != nil {
			fmt.Fprintf(env.Log, "warning: waiting for the benchmark's sessions to end: %v\n", err)
		}
	}
	r.readStats(store.PointAfterDisconnect, true)
	span := time.Since(spanStart)
	// What was measured is written with its own deadline: a server that kept the
	// wait above busy must not cost the results.
	wctx, cancelWrite := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelWrite()
	// A shard's summary is of its own part: its clients and its share of the rate.
	own := *spec
	_, own.Clients, own.Rate = spec.share()
	sum := summarize(r.rec, res, r.info, r.setup, own, r.stats, cpu0, cpu1)
	if r.setup.Finish != nil {
		r.setup.Finish(sum, res)
	}
	sum.Dataset = r.fit
	sum.Faults = faults
	m := machine.Describe(spec.Anonymize)
	sum.ClientMachine = &m
	for _, e := range sres.Errors {
		sum.Warnings = append(sum.Warnings, "sampling the server: "+e)
	}
	ev := r.evidence(wctx, res, sres, sum, span, addrs0)
	sum.Flags = judge(ev)
	if p, ok := r.rec.Params["shard"].(map[string]any); ok {
		// What the merge's commit check needs: the commits of this shard's own
		// control sessions, and from shard 0 what its check's tolerance is made of.
		p["own_commits"] = r.ctl.Own() + r.ownCommits()
		p["span_s"], p["naptime_s"], p["autovacuum_work"] = span.Seconds(), r.naptime.Seconds(), ev.autovacuumWork
	}
	return r.finish(wctx, sum, res)
}

// finishFaults measures the run's faults, if it had any, from the commits of
// res (nil when the run failed), followed to the window's end, after which none
// is missing.
func (r *running) finishFaults(res *driver.Result) []FaultSummary {
	if r.faults == nil {
		return nil
	}
	end := time.Now()
	if res != nil && !res.WindowEnd.IsZero() {
		end = res.WindowEnd
	}
	return r.faults.finish(end, func(w string) { fmt.Fprintf(r.env.Log, "warning: %s\n", w) })
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// failed records the run as failed: it ended before its clients did.
func (r *running) failed() {
	r.rec.Status, r.rec.Ended = store.StatusFailed, r.env.Now()
	_ = r.st.FinishRun(context.Background(), r.rec)
}

// ownCommits are the transactions pgbakeoff's sampler has committed so far.
func (r *running) ownCommits() int64 {
	n := r.faults.commits() // the ledger's
	if r.smp != nil {
		n += r.smp.Commits()
	}
	return n
}

// readStats reads the server's counters at a point of the run, from a fresh
// snapshot (settled: once they stopped moving), and stores them. They are
// compared without the transactions of pgbakeoff's own sessions.
func (r *running) readStats(point string, settle bool) {
	if r.spec.Shard.Index > 0 {
		r.stats.unread[point] = shardUnread
		return
	}
	// Its own deadline: the window's end is still read after Ctrl-C.
	rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rd sampler.Reading
	var err error
	if settle {
		rd, err = r.ctl.Settled(rctx, settleTimeout(r.ctl.Version()))
	} else {
		rd, err = r.ctl.Database(rctx)
	}
	if err != nil {
		r.stats.unread[point] = err.Error()
		if pe := sampler.DownError(err); pe != nil && r.stats.down == nil {
			r.stats.down = pe
		}
		fmt.Fprintf(r.env.Log, "warning: %v\n", err)
		return
	}
	if settle && !rd.Settled {
		r.stats.unsettled = append(r.stats.unsettled, point)
	}
	// Stored as the server reports them; compared without pgbakeoff's own commits.
	adjusted := maps.Clone(rd.Values)
	adjusted["xact_commit"] = rd.Commits(r.ownCommits())
	r.stats.values[point] = adjusted
	r.stats.epochs[point], r.stats.raw[point] = rd.Epoch, rd.Values["xact_commit"]
	if err := r.st.AddServerStats(rctx, r.rec.ID, store.ServerStats{Point: point, At: r.env.Now(), Values: rd.Values}); err != nil {
		fmt.Fprintf(r.env.Log, "warning: %v\n", err)
	}
}

// startSampler samples the server from its own statistics while the run goes
// on; a server that cannot be sampled is a warning, not the end of the run.
func (r *running) startSampler(ctx context.Context) {
	if r.spec.Shard.Index > 0 {
		return // shard 0 samples the server for the whole run
	}
	t := r.spec.Target
	smp, err := sampler.Start(ctx, sampler.Config{
		Connect: t.Connect, AppName: r.appName, Local: r.spec.Local, NodeExporter: r.spec.NodeExporter,
		Exclude: func() []uint32 { return []uint32{r.ctl.PID()} },
		OnSample: func(sm sampler.Sample) {
			r.mon.sample(sm)
			r.metrics.Sample(sm)
			if err := r.st.AddSample(context.Background(), r.rec.ID, storeSample(sm)); err != nil {
				r.mon.storeErr(err)
				r.stop()
			}
		},
	})
	if err != nil {
		fmt.Fprintf(r.env.Log, "warning: the server will not be sampled: %v\n", err)
		return
	}
	r.smp = smp
}

// metricLabels tell the run's live figures apart: the target's name in a study,
// else where it is (never its DSN, which may hold a password), the workload, all
// clients and the shard.
func (r *running) metricLabels() metrics.RunLabels {
	spec := r.spec
	t := spec.Target
	l := metrics.RunLabels{Target: spec.Labels["target"], Workload: cmp.Or(spec.Labels["workload"], spec.Workload.Name()), Clients: spec.Clients}
	if l.Target == "" {
		l.Target = t.Address() + "/" + t.Config.Database
	}
	if spec.Shard.On() {
		l.Shard = spec.Shard.String()
	}
	return l
}

func scriptNames(scripts []*driver.Script) []string {
	names := make([]string, len(scripts))
	for i, s := range scripts {
		names[i] = s.Name
	}
	return names
}

// jobsParam is --jobs as a run records it: a number, or "auto".
func jobsParam(jobs int) any {
	if jobs == 0 {
		return "auto"
	}
	return jobs
}

// driverConfig is the clients' run: each interval is stored as it ends, the
// window's edges read the server's and the workload's counters, and a run with
// faults does them on schedule and follows its transactions around them.
func (r *running) driverConfig(prog *progressPrinter) driver.Config {
	spec := r.spec
	clientTarget := spec.Target.WithDatabase(spec.Target.Config.Database)
	// The clients identify themselves so their backends can be found and awaited.
	clientTarget.Config.RuntimeParams["application_name"] = r.appName
	first, clients, rate := spec.share()
	var waitStart func(context.Context) (time.Time, error)
	if spec.Shard.On() && spec.StartAt.IsZero() {
		waitStart = r.rendezvous
	}
	cfg := driver.Config{WaitStart: waitStart,
		Target: clientTarget, Scripts: r.setup.Scripts, Clients: clients, FirstClient: first, AllClients: spec.Clients, StartAt: spec.StartAt,
		Protocol: r.setup.Protocol,
		Warmup:   spec.Warmup, Duration: spec.Duration, Transactions: spec.Transactions, MaxTries: spec.MaxTries,
		Seed: r.seed, Deck: r.setup.Deck, ThreadPerClient: spec.ThreadPerClient == On, Loops: spec.Jobs, ExitOnAbort: spec.ExitOnAbort, AbortOnLost: spec.AbortOnLost, ConnectPerTx: spec.ConnectPerTx,
		OutageTimeout: spec.OutageTimeout, TxTimeout: spec.TxTimeout, ConnectTimeout: spec.ConnectTimeout, ResolveOnce: spec.ResolveOnce,
		Rate: rate, LatencyLimit: spec.LatencyLimit,
		OnInterval: func(iv driver.Interval) {
			prog.add(iv)
			r.metrics.Interval(iv)
			r.mon.interval(iv)
			r.storeInterval(iv)
		},
		OnWindow:      r.window,
		OnTransaction: r.setup.OnTransaction,
	}
	if fr := r.faults; fr != nil {
		cfg.OnStart, cfg.OnTransaction, cfg.OnConnectionLost = fr.onStart(spec), fr.onTransaction(cfg.OnTransaction), fr.onConnectionLost
	}
	return cfg
}

func (r *running) storeInterval(iv driver.Interval) {
	s := histogram.Summarize(iv.Latency)
	secs := iv.End.Sub(iv.Start).Seconds()
	// Not the run's context: the intervals measured before a Ctrl-C are kept.
	err := r.st.AddInterval(context.Background(), r.rec.ID, store.Interval{Seq: iv.Seq, Phase: storePhase(iv.Phase), Start: iv.Start, End: iv.End,
		Txns: iv.Committed, Failed: iv.Failed, Retried: iv.Retried, TPS: float64(iv.Committed) / secs,
		LatencyMs: store.Latency{Avg: s.Avg, P50: s.P50, P90: s.P90, P95: s.P95, P99: s.P99, P999: s.P999, Max: s.Max},
		Errors:    iv.Failed, Down: iv.Down, ConnectErrors: iv.ConnectErrors})
	if err != nil && r.storeErr == nil {
		r.storeErr = err
		r.stop()
	}
}

// window reads the server's counters, and the workload's own when it has any,
// as the measured window opens and closes.
func (r *running) window(open bool) {
	if open {
		r.readStats(store.PointWindowStart, false)
	} else {
		r.readStats(store.PointWindowEnd, false)
	}
	if r.setup.Window == nil {
		return
	}
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := r.ctl.Conn(wctx)
	if err == nil {
		// One statement; one that failed rolled back and committed nothing.
		if err = r.setup.Window(wctx, conn, open, r.ownCommits()+r.ctl.Own()); err == nil {
			r.ctl.Ran(1)
		}
	}
	if err != nil {
		fmt.Fprintf(r.env.Log, "warning: %v\n", err)
	}
}

// evidence is what the validity rules judge the run by.
func (r *running) evidence(ctx context.Context, res *driver.Result, sres sampler.Result, sum *Summary, span time.Duration, addrs0 []string) evidence {
	ev := r.mon.evidence(res)
	for _, f := range r.spec.Faults {
		ev.faults = append(ev.faults, f.String())
	}
	ev.committed, ev.failed = res.Committed, res.Failed
	if res.Incomplete {
		ev.incomplete = res.IncompleteReason
	}
	_, ev.clients, ev.rate = r.spec.share()
	ev.aborted, ev.abort = res.Aborted, res.Abort
	ev.rateFigures = res.Rate
	ev.doneTPS = sum.TPS
	ev.clientSaturated, ev.clientCores = sum.ClientCPU.Saturated, sum.ClientCPU.Cores
	ev.clientCommits, ev.serverCommits = sum.CommitsTotal, sum.Server.Commits
	ev.span, ev.naptime = span, r.naptime
	// A shard's commits are its share of what the server counts for all shards:
	// merging compares them.
	ev.commitsRead, ev.unsettled = sum.Server.CommitsUnread == "" && !r.spec.Shard.On(), sum.Server.CommitsUnsettled
	ev.shard, ev.shardGroup, ev.clockOffset = r.spec.Shard, r.spec.Group(), r.clockOffset
	ev.seen = sres.Others
	ev.restarts = restartEvidence(res, sres, r.stats)
	ev.statsReset, ev.resetAt = statsReset(sres, r.stats)
	if sres.AddressChanged {
		ev.addressChanged = "the server's address or its recovery state changed"
	}
	t := r.spec.Target
	if addrs1, err := t.Resolve(ctx); err == nil && len(addrs0) > 0 && !sameAddrs(addrs0, addrs1) {
		ev.addressChanged = fmt.Sprintf("%s resolved to %s at the start and to %s at the end",
			t.Config.Host, strings.Join(addrs0, ", "), strings.Join(addrs1, ", "))
	}
	return ev
}

// finish stores the summary, flags and histograms, and says how the run ended.
func (r *running) finish(ctx context.Context, sum *Summary, res *driver.Result) (*Summary, error) {
	run, st := r.rec, r.st
	if err := st.SetFlags(ctx, run.ID, storeFlags(sum.Flags)); err != nil {
		sum.Warnings = append(sum.Warnings, "results store: "+err.Error())
	}
	if err := r.mon.err(); err != nil && r.storeErr == nil {
		r.storeErr = err
	}
	if r.storeErr != nil {
		// What was stored stays; the rest is in the summary printed now.
		sum.Status = store.StatusFailed
		sum.Warnings = append(sum.Warnings, "results store: "+r.storeErr.Error())
		run.Status, run.Ended = store.StatusFailed, r.env.Now()
		_ = st.FinishRun(context.Background(), run)
		return sum, fmt.Errorf("results store %s could not be written (%v): run %d was stopped; free disk space or check the file's permissions", st.Path(), r.storeErr, run.ID)
	}
	run.Ended = r.env.Now()
	run.Status = sum.Status
	run.ClientCPUUser, run.ClientCPUSys = sum.ClientCPU.UserS, sum.ClientCPU.SysS
	if err := saveDetails(ctx, st, run.ID, res); err != nil {
		return sum, err
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return sum, err
	}
	run.Summary = b
	if err := st.FinishRun(ctx, run); err != nil {
		return sum, err
	}
	if res.Interrupted {
		return sum, fmt.Errorf("%w: run %d stopped early; what was measured is stored", ErrInterrupted, run.ID)
	}
	if res.Incomplete {
		return sum, fmt.Errorf("run %d ended early (%s); what was measured is stored", run.ID, res.IncompleteReason)
	}
	return sum, nil
}

func storePhase(p driver.Phase) string {
	if p == driver.Warmup {
		return store.PhaseWarmup
	}
	return store.PhaseMeasure
}

// serverStats are the server's counters read at each point of a run (store.Point*),
// with pgbakeoff's own commits left out, their epochs, and why a point could not
// be read.
type serverStats struct {
	values    map[string]map[string]int64
	epochs    map[string]sampler.Epoch
	raw       map[string]int64 // xact_commit as the server reported it
	unread    map[string]string
	unsettled []string // points read before the counters stopped moving
	// down is the first error by which the server told the control session it
	// was not running normally (sampler.DownError).
	down *pgconn.PgError
}

func newServerStats() serverStats {
	return serverStats{values: map[string]map[string]int64{}, epochs: map[string]sampler.Epoch{}, raw: map[string]int64{}, unread: map[string]string{}}
}

// compare tells whether the counters read at two points can be compared: both
// were read, and the statistics were not reset in between, as a crash and
// recovery or pg_stat_reset() does (their epochs differ, or the commits went
// backwards). reset says whether they were, and at when, if the server says.
func (st serverStats) compare(from, to string) (ok, reset bool, at time.Time) {
	if st.values[from] == nil || st.values[to] == nil {
		return false, false, time.Time{}
	}
	reset, at = st.epochs[to].ResetSince(st.epochs[from])
	if st.raw[to] < st.raw[from] {
		reset = true
	}
	return !reset, reset, at
}

// settleTimeout is how long the counters may take to settle once the sessions
// have ended: before PostgreSQL 15 the statistics collector, behind under load,
// may need seconds to catch up.
func settleTimeout(version int) time.Duration {
	if version >= 150000 {
		return 3 * time.Second
	}
	return 15 * time.Second
}

func saveDetails(ctx context.Context, st *store.Store, runID int64, res *driver.Result) error {
	var hs []store.Histogram
	for _, s := range res.Scripts {
		b, err := histogram.Encode(s.Latency)
		if err != nil {
			return fmt.Errorf("encode histogram: %w", err)
		}
		hs = append(hs, store.Histogram{TxType: s.Name, Kind: store.KindMeasure, Encoded: b})
	}
	if err := st.AddHistograms(ctx, runID, hs); err != nil {
		return err
	}
	var es []store.ErrorCount
	for _, e := range res.Errors {
		es = append(es, store.ErrorCount{SQLState: e.SQLState, Class: sqlClass(e.SQLState), TxType: e.Script, Count: e.Count, Retried: e.Retried, Example: e.Example})
	}
	if len(es) > 0 {
		return st.AddErrors(ctx, runID, es)
	}
	return nil
}

// sqlClass names the SQLSTATE class (its first two characters) for reports.
func sqlClass(state string) string {
	if len(state) < 2 {
		return "unknown"
	}
	switch state[:2] {
	case "08":
		return "connection"
	case "40":
		return "transaction rollback"
	case "53":
		return "insufficient resources"
	case "57":
		return "operator intervention"
	case "23":
		return "integrity constraint"
	}
	return "class " + state[:2]
}

// inspectWaiting is Inspect, waiting out a server that is starting up for up to
// wait (0: connfail.StartingUpWait), as the run's clients then do, and saying so.
func inspectWaiting(ctx context.Context, log io.Writer, t *target.Target, wait time.Duration) (*target.Info, error) {
	var info *target.Info
	noted := false
	err := connfail.WaitStartingUp(ctx, wait, 2*time.Second, func() (err error) {
		info, err = t.Inspect(ctx)
		return err
	}, func(err error) {
		if !noted {
			noted = true
			fmt.Fprintf(log, "the server does not accept connections yet (%s); waiting up to %s\n",
				connfail.Name(connfail.Cause(err)), cmp.Or(wait, connfail.StartingUpWait))
		}
	})
	return info, err
}

// slotWait is how long a run short of connection slots waits for them.
const slotWait = 3 * time.Second

// waitSlots returns info when the clients and own sessions fit in the server's
// free slots, else looks again every 200 ms for up to slotWait, saying so:
// sessions just closed, a run's before this one among them, hold their slots
// until their backends exit, which under load takes a moment.
func waitSlots(ctx context.Context, log io.Writer, t *target.Target, info *target.Info, clients, own int) (*target.Info, error) {
	wctx, cancel := context.WithTimeout(ctx, slotWait)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for noted := false; ; noted = true {
		short := info.CheckSlots(clients, own)
		if short == nil {
			return info, nil
		}
		if !noted {
			fmt.Fprintf(log, "the server has %d free connection slots, %d wanted; waiting up to %s for sessions that are closing\n",
				info.FreeSlots(), clients+own, slotWait)
		}
		select {
		case <-wctx.Done():
			return nil, short
		case <-tick.C:
		}
		var err error
		if info, err = t.Inspect(ctx); err != nil {
			return nil, err
		}
	}
}
