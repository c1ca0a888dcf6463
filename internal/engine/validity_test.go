package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

func steady(n int, tps float64) []rate {
	out := make([]rate, n)
	for i := range out {
		out[i] = rate{at: time.Duration(i+1) * time.Second, tps: tps}
	}
	return out
}

func TestJudge(t *testing.T) {
	dipped := steady(20, 1000)
	for i := 5; i < 10; i++ {
		dipped[i].tps = 400
	}
	stall := steady(20, 1000)
	stall[7].tps = 2 // one second of a checkpoint's sync
	lagging := steady(10, 800)
	for i := range lagging {
		lagging[i].lag = time.Duration(i+1) * 100 * time.Millisecond
	}
	tests := []struct {
		name string
		e    evidence
		want []Flag
	}{
		{"clean", evidence{committed: 10000, failed: 100, rates: steady(10, 1000)}, nil},
		{"an open-loop run that kept up", evidence{committed: 10000, rate: 1000, doneTPS: 1000, rates: steady(10, 1000),
			rateFigures: driver.RateFigures{Scheduled: 10000, Untaken: 30, Skipped: 60}}, nil},
		{"a steady queue near capacity as the window closes", evidence{committed: 10000, rate: 1000, doneTPS: 990, rates: steady(10, 990),
			rateFigures: driver.RateFigures{Scheduled: 10000, Untaken: 300}}, nil},
		{"a short queue that grew in the window's last second", evidence{committed: 10000, rate: 1000, doneTPS: 990, rates: lagging,
			rateFigures: driver.RateFigures{Scheduled: 10000, Untaken: 200}}, nil},
		{"an open-loop run that fell behind", evidence{committed: 8000, rate: 1000, doneTPS: 800, rates: lagging,
			rateFigures: driver.RateFigures{Scheduled: 10000, Untaken: 2000}}, []Flag{
			{flagRate, true, "the target did not keep up with 1000 tx/s: 800 tx/s done; of 10000 transactions due in the window, 2000 had not begun when it closed and 0 were skipped past the latency limit; the schedule lag grew from 100.00 ms to 1s"}}},
		{"a short window that left a fifth of its arrivals waiting", evidence{committed: 188, rate: 116, doneTPS: 94, rates: steady(2, 94),
			rateFigures: driver.RateFigures{Scheduled: 232, Untaken: 44}}, []Flag{
			{flagRate, true, "the target did not keep up with 116 tx/s: 94 tx/s done; of 232 transactions due in the window, 44 had not begun when it closed and 0 were skipped past the latency limit"}}},
		{"a short window's queue of a few arrivals", evidence{committed: 190, rate: 95, doneTPS: 94, rates: steady(2, 94),
			rateFigures: driver.RateFigures{Scheduled: 190, Untaken: 17}}, nil},
		{"skipped past the latency limit", evidence{committed: 9000, rate: 1000, doneTPS: 900, rates: steady(10, 900),
			rateFigures: driver.RateFigures{Scheduled: 10000, Untaken: 5, Skipped: 995}}, []Flag{
			{flagRate, true, "the target did not keep up with 1000 tx/s: 900 tx/s done; of 10000 transactions due in the window, 5 had not begun when it closed and 995 were skipped past the latency limit"}}},
		{"errors above 1%", evidence{committed: 9800, failed: 200}, []Flag{
			{flagErrors, true, "2.0% of transactions failed (200 of 10000), more than 1%"}}},
		{"dip below half the median", evidence{committed: 1, rates: dipped}, []Flag{
			{flagDip, true, "throughput fell to 400 tps in the interval ending at 10 s, below half the run's median of 1000 tps"}}},
		{"a dip as a checkpoint completes is a note", evidence{committed: 1, rates: dipped, checkpoints: 1, checkpointsAt: []time.Duration{12 * time.Second}}, []Flag{
			{flagDip, false, "throughput fell to 400 tps in the interval ending at 10 s, below half the run's median of 1000 tps, as a checkpoint completed"},
			{flagCheckpoint, false, "1 checkpoint(s) during the measured window"}}},
		{"a checkpoint far from the dip does not excuse it", evidence{committed: 1, rates: dipped, checkpoints: 1, checkpointsAt: []time.Duration{19 * time.Second}}, []Flag{
			{flagDip, true, "throughput fell to 400 tps in the interval ending at 10 s, below half the run's median of 1000 tps"},
			{flagCheckpoint, false, "1 checkpoint(s) during the measured window"}}},
		{"a one-second stall is no dip", evidence{committed: 1, rates: stall}, nil},
		{"too few intervals to judge a dip", evidence{committed: 1, rates: append(steady(10, 1000), steady(4, 10)...)}, nil},
		{"restart, failover, client, checkpoint", evidence{committed: 1, restarts: []string{"pg_postmaster_start_time changed"}, addressChanged: "10.0.0.1:5432 became 10.0.0.2:5432",
			clientSaturated: true, clientCores: 0.97, checkpoints: 2}, []Flag{
			{flagRestarted, true, "the server restarted or crashed and recovered during the run: pg_postmaster_start_time changed"},
			{flagFailover, true, "the server behind the target changed during the run: 10.0.0.1:5432 became 10.0.0.2:5432"},
			{flagClientCPU, true, "the client was CPU-bound (0.97 cores busy): it, not the server, set the pace"},
			{flagCheckpoint, false, "2 checkpoint(s) during the measured window"}}},
		{"a stall of most of the window", evidence{committed: 1, rates: append(steady(25, 1000), steady(35, 0)...)}, []Flag{
			{flagDip, true, "no transaction completed for more than half of the measured window"}}},
		{"a slow workload's seconds are judged in groups", evidence{committed: 1, rates: slowDip()}, nil},
		{"autovacuum is a note", evidence{committed: 1, rates: steady(10, 1000), checkpoints: 1, autovacuums: 3, autoanalyzes: 1}, []Flag{
			{flagCheckpoint, false, "1 checkpoint(s) during the measured window"},
			{flagAutovacuum, false, "autovacuum finished 3 vacuum(s) and 1 analyze(s) of the database's tables during the measured window"}}},
		{"an analyze alone", evidence{committed: 1, autoanalyzes: 2}, []Flag{
			{flagAutovacuum, false, "autovacuum finished 0 vacuum(s) and 2 analyze(s) of the database's tables during the measured window"}}},
		// A slow run of five minutes: autovacuum's visits (about 2 commits each a
		// minute) and its two vacuums are not another session's work.
		{"autovacuum's commits in a slow run", evidence{committed: 300, clientCommits: 300, serverCommits: 335, commitsRead: true,
			span: 5 * time.Minute, naptime: time.Minute, autovacuumWork: 2}, nil},
		{"more than autovacuum would commit", evidence{committed: 300, clientCommits: 300, serverCommits: 360, commitsRead: true,
			span: 5 * time.Minute, naptime: time.Minute, autovacuumWork: 2}, []Flag{
			{flagContaminated, true, "the server counted 360 commits in the benchmark's database from the first connect to the last disconnect, 60 (+20.0%) more than the clients made: other sessions worked in the database during the run"}}},
		{"fewer on the server is a note", evidence{committed: 5000, clientCommits: 5000, serverCommits: 4800, commitsRead: true}, []Flag{
			{flagCommits, false, "the server's statistics counted 4800 commits, 200 (4.0%) fewer than the clients saw acknowledged: its counters missed some reports; the clients' count stands"}}},
		{"other sessions at work and beyond the commits", evidence{committed: 5000, clientCommits: 5000, serverCommits: 9000, commitsRead: true,
			others: 0.3, seen: []string{"psql (pid 7)"}}, []Flag{
			{flagContaminated, true, "the server counted 9000 commits in the benchmark's database from the first connect to the last disconnect, 4000 (+80.0%) more than the clients made: other sessions worked in the database during the run; " +
				"other sessions were active in the benchmark's database during the window (0.30 on average: psql (pid 7)): their work competed with the benchmark's"}}},
		// pg_stat_reset() loses the check of the commits, not the clients' figures.
		{"statistics reset", evidence{committed: 1, statsReset: true, resetAt: time.Date(2026, 3, 4, 10, 0, 34, 123e6, time.UTC)}, []Flag{
			{flagCommits, false, "the database's statistics were reset at 10:00:34.123 (pg_stat_reset()): the server's commits are not known, and the clients' are not checked against them"}}},
		{"statistics reset by a crash", evidence{committed: 1, statsReset: true, restarts: []string{"connections were refused"}}, []Flag{
			{flagRestarted, true, "the server restarted or crashed and recovered during the run: connections were refused"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := judge(tc.e); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("judge:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// slowDip is 5 tps with one empty second: chance at that rate, not a dip, once
// seconds are grouped to hold 20 transactions each.
func slowDip() []rate {
	r := steady(24, 5)
	r[5].tps = 0
	r[6].tps = 10
	return r
}

func TestBuckets(t *testing.T) {
	if got := buckets(steady(20, 1000)); len(got) != 4 || got[3].at != 20*time.Second {
		t.Errorf("fast rates over 20 s grouped into %+v, want 4 buckets of 5 s", got)
	}
	got := buckets(steady(24, 2))
	if len(got) != 2 || got[0].tps != 2 || got[1].at != 20*time.Second {
		t.Errorf("2 tps over 24 s: %+v, want 2 buckets of 10 s at 2 tps", got)
	}
}

// TestEvidenceFromSamples checks that checkpoints and autovacuum's work count
// only from the samples whose middle lies inside the measured window.
func TestEvidenceFromSamples(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &driver.Result{WindowStart: start, WindowEnd: start.Add(10 * time.Second)}
	s := time.Second
	var m runMonitor
	for i, sm := range []struct {
		from, to time.Duration
		values   map[string]float64
	}{
		{-2 * s, -s, map[string]float64{"autovacuums": 5, "checkpoints": 1}},                     // before the window
		{-1200 * time.Millisecond, 800 * time.Millisecond, map[string]float64{"autovacuums": 1}}, // middle at -0.2 s: before
		{4 * s, 5 * s, map[string]float64{"autovacuums": 2, "checkpoints": 1}},
		{9200 * time.Millisecond, 10400 * time.Millisecond, map[string]float64{"autoanalyzes": 1}},  // middle at 9.8 s: inside
		{10 * s, 11 * s, map[string]float64{"autovacuums": 7, "autoanalyzes": 7, "checkpoints": 2}}, // after
	} {
		m.sample(sampler.Sample{Seq: i, Start: start.Add(sm.from), End: start.Add(sm.to), Values: sm.values})
	}
	e := m.evidence(res)
	if e.autovacuums != 2 || e.autoanalyzes != 1 || e.checkpoints != 1 {
		t.Errorf("evidence: %d autovacuums, %d autoanalyzes, %d checkpoints; want 2, 1 and 1 (the samples inside the window)",
			e.autovacuums, e.autoanalyzes, e.checkpoints)
	}
	if want := []time.Duration{5 * time.Second}; !reflect.DeepEqual(e.checkpointsAt, want) {
		t.Errorf("checkpointsAt = %v, want %v", e.checkpointsAt, want)
	}
}

// TestRestartEvidence: each source that saw a restart or a crash says so, and a
// pg_stat_reset() alone is a reset of the statistics, not a restart.
func TestRestartEvidence(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	epoch := func(started, shared, db int) sampler.Epoch {
		e := sampler.Epoch{Started: t0.Add(time.Duration(started) * time.Second), SharedReset: t0.Add(time.Duration(shared) * time.Second)}
		if db > 0 {
			e.DBReset = t0.Add(time.Duration(db) * time.Second)
		}
		return e
	}
	read := func(before, after sampler.Epoch, commits0, commits1 int64) serverStats {
		st := newServerStats()
		st.values[store.PointBeforeConnect], st.values[store.PointAfterDisconnect] = map[string]int64{"xact_commit": commits0}, map[string]int64{"xact_commit": commits1}
		st.raw[store.PointBeforeConnect], st.raw[store.PointAfterDisconnect] = commits0, commits1
		st.epochs[store.PointBeforeConnect], st.epochs[store.PointAfterDisconnect] = before, after
		return st
	}
	shared := "its shared statistics were reset at 10:00:34.000 under the same postmaster, as a crash and recovery resets them"
	refused := "connections were refused as it was starting up, recovering or shutting down (57P03 cannot_connect_now)"
	tests := []struct {
		name  string
		res   driver.Result
		sres  sampler.Result
		st    serverStats
		want  []string
		reset bool
	}{
		{"nothing happened", driver.Result{}, sampler.Result{}, read(epoch(0, 0, 0), epoch(0, 0, 0), 10, 5000), nil, false},
		{"a crash the control readings saw", driver.Result{}, sampler.Result{}, read(epoch(0, 0, 0), epoch(0, 34, 0), 10, 5000), []string{shared}, true},
		{"a crash only the sampler saw", driver.Result{}, sampler.Result{Reset: true, Crashed: true, ResetAt: t0.Add(34 * time.Second)},
			func() serverStats {
				st := newServerStats()
				st.unread[store.PointAfterDisconnect] = "connection refused"
				return st
			}(), []string{shared}, true},
		{"a clean restart keeps the statistics", driver.Result{}, sampler.Result{}, read(epoch(0, 0, 0), epoch(20, 0, 0), 10, 5000),
			[]string{"pg_postmaster_start_time changed"}, false},
		{"connections refused", driver.Result{ConnectErrors: []driver.ConnectErrorCount{{Cause: "57P03", Count: 3}}}, sampler.Result{},
			read(epoch(0, 0, 0), epoch(0, 0, 0), 10, 5000), []string{refused}, false},
		{"sessions ended by a crash, the sampler refused", driver.Result{Outages: []driver.Outage{{Cause: "57P02"}}},
			sampler.Result{Down: &pgconn.PgError{Code: "57P03", Message: "the database system is in recovery mode"}}, newServerStats(),
			[]string{"sessions were ended as another server process had crashed (57P02 crash_shutdown)",
				"connections were refused as it was starting up, recovering or shutting down (57P03 cannot_connect_now: the database system is in recovery mode)"}, false},
		{"pg_stat_reset()", driver.Result{}, sampler.Result{}, read(epoch(0, 0, 0), epoch(0, 0, 34), 9000, 4000), nil, true},
		{"commits backwards with no reset said", driver.Result{}, sampler.Result{Reset: true}, read(epoch(0, 0, 0), epoch(0, 0, 0), 9000, 4000),
			[]string{"the database's commit counter went backwards with no reset of the statistics"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := restartEvidence(&tc.res, tc.sres, tc.st); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("restartEvidence:\n got %q\nwant %q", got, tc.want)
			}
			if reset, _ := statsReset(tc.sres, tc.st); reset != tc.reset {
				t.Errorf("statsReset = %v, want %v", reset, tc.reset)
			}
		})
	}
}
