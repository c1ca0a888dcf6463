package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
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
func Run(ctx context.Context, spec Spec) (*Summary, error) {
	if spec.Target == nil || spec.Workload == nil || spec.OpenStore == nil {
		return nil, errors.New("run: the spec lacks a target, a workload or a results store")
	}
	if err := spec.Validate(); err != nil {
		return nil, UsageError{err}
	}
	if spec.Out == nil {
		spec.Out = io.Discard
	}
	if spec.Log == nil {
		spec.Log = io.Discard
	}
	t, proto, labels := spec.Target, spec.Protocol, spec.Labels
	// Before anything is sent: reachability, version, settings, slots, data.
	info, err := inspectWaiting(ctx, spec.Log, t, spec.OutageTimeout)
	if err != nil {
		return nil, err
	}
	if err := info.CheckSlots(spec.Clients); err != nil {
		return nil, err
	}
	ctl, err := sampler.NewControl(ctx, t.Connect)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	conn, err := ctl.Conn(ctx)
	if err != nil {
		return nil, err
	}
	setup, err := spec.Workload.Setup(ctx, &spec, conn)
	if err != nil {
		return nil, err
	}
	scripts, scale := setup.Scripts, setup.Scale
	st, err := spec.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()

	seed := spec.Seed
	if seed == 0 {
		seed = uint64(spec.Now().UnixNano())
	}
	run := &store.Run{
		Target: t.String(), Workload: spec.Workload.Name(), Script: driver.Mix(scripts), Clients: spec.Clients,
		ServerVersion: info.Version, Settings: info.Settings, Labels: labels, Started: spec.Now(),
		Params: map[string]any{"protocol": proto.String(), "warmup_s": spec.Warmup.Seconds(),
			"duration_s": spec.Duration.Seconds(), "transactions": spec.Transactions, "max_tries": spec.MaxTries,
			"seed": seed, "jobs": spec.Jobs, "thread_per_client": spec.ThreadPerClient, "address": info.Address, "tls_version": info.TLSVersion, "tls_cipher": info.TLSCipher},
	}
	for k, v := range setup.Params {
		run.Params[k] = v
	}
	if _, err := st.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	fmt.Fprintf(spec.Log, "run %d: %s %s on %s, PostgreSQL %s, %s, %d clients\n",
		run.ID, spec.Workload.Name(), run.Script, info.Address, info.Version, setup.Size, spec.Clients)

	// The clients identify themselves so their backends can be found and awaited.
	appName := fmt.Sprintf("pgbakeoff-run-%d", run.ID)
	clientTarget := t.WithDatabase(t.Config.Database)
	clientTarget.Config.RuntimeParams["application_name"] = appName

	fit := datasetFit(ctx, conn, spec.Local)
	naptime := autovacuumNaptime(ctx, conn)
	for k, v := range fit.params() {
		run.Params[k] = v
	}
	// The server's counters around the run: read from a fresh snapshot, each
	// without the transactions of pgbakeoff's own sessions.
	stats := serverStats{values: map[string]map[string]int64{}, unread: map[string]string{}}
	var smp *sampler.Sampler
	ownCommits := func() int64 {
		if smp == nil {
			return 0
		}
		return smp.Commits()
	}
	readStats := func(point string, settle bool) {
		// Its own deadline: the window's end is still read after Ctrl-C.
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var r sampler.Reading
		var err error
		if settle {
			r, err = ctl.Settled(rctx, settleTimeout(ctl.Version()))
		} else {
			r, err = ctl.Database(rctx)
		}
		if err != nil {
			stats.unread[point] = err.Error()
			fmt.Fprintf(spec.Log, "warning: %v\n", err)
			return
		}
		if settle && !r.Settled {
			stats.unsettled = append(stats.unsettled, point)
		}
		// Stored as the server reports them; compared without pgbakeoff's own commits.
		adjusted := maps.Clone(r.Values)
		adjusted["xact_commit"] = r.Commits(ownCommits())
		stats.values[point] = adjusted
		if err := st.AddServerStats(rctx, run.ID, store.ServerStats{Point: point, At: spec.Now(), Values: r.Values}); err != nil {
			fmt.Fprintf(spec.Log, "warning: %v\n", err)
		}
	}
	readStats(store.PointBeforeConnect, true)
	spanStart := time.Now()
	addrs0, _ := t.Resolve(ctx)

	// A results store that cannot be written stops the run: measuring what cannot be
	// kept would waste the time of everyone waiting for the results.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	// The server is sampled from its own statistics while the run goes on.
	mon := &runMonitor{}
	smp, err = sampler.Start(ctx, sampler.Config{
		Connect: t.Connect, AppName: appName, Local: spec.Local, NodeExporter: spec.NodeExporter,
		Exclude: func() []uint32 { return []uint32{ctl.PID()} },
		OnSample: func(sm sampler.Sample) {
			mon.sample(sm)
			if err := st.AddSample(context.Background(), run.ID, storeSample(sm)); err != nil {
				mon.storeErr(err)
				stopRun()
			}
		},
	})
	if err != nil {
		fmt.Fprintf(spec.Log, "warning: the server will not be sampled: %v\n", err)
	}

	prevProcs := runtime.GOMAXPROCS(max(1, spec.Jobs))
	defer runtime.GOMAXPROCS(prevProcs)
	cpu0 := readCPU()
	prog := newProgressPrinter(spec.Out, spec.Progress)
	var storeErr error
	cfg := driver.Config{
		Target: clientTarget, Scripts: scripts, Clients: spec.Clients, Protocol: proto,
		Warmup: spec.Warmup, Duration: spec.Duration, Transactions: spec.Transactions, MaxTries: spec.MaxTries,
		Seed: seed, Deck: setup.Deck, ThreadPerClient: spec.ThreadPerClient,
		OutageTimeout: spec.OutageTimeout, TxTimeout: spec.TxTimeout, ConnectTimeout: spec.ConnectTimeout, ResolveOnce: spec.ResolveOnce,
		OnInterval: func(iv driver.Interval) {
			prog.add(iv)
			mon.interval(iv)
			s := histogram.Summarize(iv.Latency)
			secs := iv.End.Sub(iv.Start).Seconds()
			// Not ctx: the intervals measured before a Ctrl-C are kept.
			err := st.AddInterval(context.Background(), run.ID, store.Interval{Seq: iv.Seq, Phase: storePhase(iv.Phase), Start: iv.Start, End: iv.End,
				Txns: iv.Committed, Failed: iv.Failed, Retried: iv.Retried, TPS: float64(iv.Committed) / secs,
				LatencyMs: store.Latency{Avg: s.Avg, P50: s.P50, P90: s.P90, P95: s.P95, P99: s.P99, P999: s.P999, Max: s.Max},
				Errors:    iv.Failed, Down: iv.Down, ConnectErrors: iv.ConnectErrors})
			if err != nil && storeErr == nil {
				storeErr = err
				stopRun()
			}
		},
		OnWindow: func(open bool) {
			if open {
				readStats(store.PointWindowStart, false)
			} else {
				readStats(store.PointWindowEnd, false)
			}
			if setup.Window != nil {
				wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				conn, err := ctl.Conn(wctx)
				if err == nil {
					// One statement; one that failed rolled back and committed nothing.
					if err = setup.Window(wctx, conn, open, ownCommits()+ctl.Own()); err == nil {
						ctl.Ran(1)
					}
				}
				if err != nil {
					fmt.Fprintf(spec.Log, "warning: %v\n", err)
				}
			}
		},
	}
	res, err := driver.Run(runCtx, cfg)
	prog.flush()
	if err != nil {
		if smp != nil {
			smp.Stop()
		}
		run.Status, run.Ended = store.StatusFailed, spec.Now()
		_ = st.FinishRun(context.Background(), run)
		return nil, err
	}
	cpu1 := readCPU()
	var sres sampler.Result
	if smp != nil {
		sres = smp.Stop()
	}
	// Sessions report their last counts as they exit: only once the benchmark's
	// and the sampler's are gone do the server's counters hold all their work.
	sctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := ctl.WaitGone(sctx, appName, sres.PIDs, 30*time.Second); err != nil {
		fmt.Fprintf(spec.Log, "warning: waiting for the benchmark's sessions to end: %v\n", err)
	}
	readStats(store.PointAfterDisconnect, true)
	span := time.Since(spanStart)
	// What was measured is written with its own deadline: a server that kept the
	// wait above busy must not cost the results.
	ctx, cancelWrite := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelWrite()

	sum := summarize(run, res, info, scale, spec, stats, cpu0, cpu1)
	if setup.Finish != nil {
		setup.Finish(sum, res)
	}
	sum.Dataset = fit
	m := machine.Describe(spec.Anonymize)
	sum.ClientMachine = &m
	for _, e := range sres.Errors {
		sum.Warnings = append(sum.Warnings, "sampling the server: "+e)
	}
	ev := mon.evidence(res)
	ev.committed, ev.failed = res.Committed, res.Failed
	if res.Incomplete {
		ev.incomplete = res.IncompleteReason
	}
	ev.clientSaturated, ev.clientCores = sum.ClientCPU.Saturated, sum.ClientCPU.Cores
	ev.clientCommits, ev.serverCommits = sum.CommitsTotal, sum.Server.Commits
	ev.span, ev.naptime = span, naptime
	ev.commitsRead, ev.unsettled = sum.Server.CommitsUnread == "", sum.Server.CommitsUnsettled
	ev.seen = sres.Others
	ev.restarted = sres.Restarted
	ev.statsReset = sres.Reset
	if sres.AddressChanged {
		ev.addressChanged = "the server's address or its recovery state changed"
	}
	if addrs1, err := t.Resolve(ctx); err == nil && len(addrs0) > 0 && !sameAddrs(addrs0, addrs1) {
		ev.addressChanged = fmt.Sprintf("%s resolved to %s at the start and to %s at the end",
			t.Config.Host, strings.Join(addrs0, ", "), strings.Join(addrs1, ", "))
	}
	sum.Flags = judge(ev)
	if err := st.SetFlags(ctx, run.ID, storeFlags(sum.Flags)); err != nil {
		sum.Warnings = append(sum.Warnings, "results store: "+err.Error())
	}
	if err := mon.err(); err != nil && storeErr == nil {
		storeErr = err
	}
	if storeErr != nil {
		// What was stored stays; the rest is in the summary printed now.
		sum.Status = store.StatusFailed
		sum.Warnings = append(sum.Warnings, "results store: "+storeErr.Error())
		run.Status, run.Ended = store.StatusFailed, spec.Now()
		_ = st.FinishRun(context.Background(), run)
		return sum, fmt.Errorf("results store %s could not be written (%v): run %d was stopped; free disk space or check the file's permissions", st.Path(), storeErr, run.ID)
	}
	run.Ended = spec.Now()
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
// with pgbakeoff's own commits left out, and why a point could not be read.
type serverStats struct {
	values    map[string]map[string]int64
	unread    map[string]string
	unsettled []string // points read before the counters stopped moving
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
// wait (0: driver.StartingUpWait), as the run's clients then do, and saying so.
func inspectWaiting(ctx context.Context, log io.Writer, t *target.Target, wait time.Duration) (*target.Info, error) {
	var info *target.Info
	noted := false
	err := driver.WaitStartingUp(ctx, wait, 2*time.Second, func() (err error) {
		info, err = t.Inspect(ctx)
		return err
	}, func(err error) {
		if !noted {
			noted = true
			fmt.Fprintf(log, "the server does not accept connections yet (%s); waiting up to %s\n",
				driver.CauseName(driver.Cause(err)), cmp.Or(wait, driver.StartingUpWait))
		}
	})
	return info, err
}
