package engine

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// latencies records n transactions spread evenly from lo to hi microseconds.
func latencies(t *testing.T, n int, lo, hi int64) *hdrhistogram.Histogram {
	t.Helper()
	h := histogram.New()
	for i := range n {
		if err := h.RecordValue(lo + (hi-lo)*int64(i)/int64(max(n-1, 1))); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// GoldenSummaries are runs of every kind the summary prints differently, built
// by summarize from fixed driver results, so the text and JSON that `run` and
// `show` print are pinned whatever the code under them becomes. The workloads'
// figures are the caller's to add, from their packages.
func GoldenSummaries(t *testing.T) map[string]*Summary {
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.Local)
	info := &target.Info{Address: "127.0.0.1:5432", Version: "16.4", VersionNum: 160004, SSL: true, TLSVersion: "TLSv1.3", TLSCipher: "TLS_AES_256_GCM_SHA384"}
	run := &store.Run{ID: 7, Workload: "tpcb", Script: "tpcb-like@9,select-only@1", Target: "host=db.example user=bench dbname=bench",
		Started: at, Labels: map[string]string{"target": "a"}}
	res := &driver.Result{Start: at, WindowStart: at.Add(10 * time.Second), WindowEnd: at.Add(70 * time.Second), End: at.Add(71 * time.Second),
		Scripts: []driver.ScriptResult{
			{Name: "tpcb-like", Committed: 5400, Failed: 3, Retried: 2, Retries: 4, Latency: latencies(t, 5400, 800, 25000)},
			{Name: "select-only", Committed: 600, Latency: latencies(t, 600, 100, 2000)},
		},
		Errors: []driver.ErrorCount{{Script: "tpcb-like", SQLState: "40001", Retried: true, Count: 4, Example: "could not serialize access"},
			{Script: "tpcb-like", SQLState: "08006", Count: 3, Example: "connection lost"}},
		Outages: []driver.Outage{{Client: 2, Start: at.Add(30 * time.Second), End: at.Add(32 * time.Second), Cause: "57P01", Attempts: 4, FailedTx: 1, Recovered: true},
			{Client: 3, Start: at.Add(65 * time.Second), End: at.Add(70 * time.Second), Cause: "connection refused", Attempts: 9, FailedTx: 2}},
		ConnectErrors: []driver.ConnectErrorCount{{Cause: "connection refused", Count: 12, Example: "dial tcp 127.0.0.1:5432: connect: connection refused"}},
		Committed:     6000, Failed: 3, CommitsTotal: 7020, Address: "127.0.0.1:5432"}
	stats := serverStats{values: map[string]map[string]int64{
		store.PointBeforeConnect:   {"xact_commit": 1000},
		store.PointWindowStart:     {"xact_commit": 2000, "xact_rollback": 5, "blks_read": 10, "blks_hit": 900},
		store.PointWindowEnd:       {"xact_commit": 8000, "xact_rollback": 9, "blks_read": 40, "blks_hit": 90000},
		store.PointAfterDisconnect: {"xact_commit": 8020},
	}, unread: map[string]string{}}
	f := Spec{Settings: Settings{Clients: 4, Jobs: 1, Warmup: 10 * time.Second}}
	cpu0, cpu1 := cpuSample{user: 1, sys: 0.5, machineBusy: 100, machineTotal: 1000}, cpuSample{user: 4, sys: 2, machineBusy: 9000, machineTotal: 15000}
	tpcb := summarize(run, res, info, &Setup{Scale: 10}, f, stats, cpu0, cpu1)
	tpcb.Dataset = fit{Bytes: 160 << 20, SharedBuffers: 128 << 20, Class: fitBeyondBuffers}
	tpcb.ClientMachine = &machine.Machine{CPU: "Example CPU @ 3.00GHz", LogicalCPUs: 2, MemoryBytes: 24 << 30, OS: "linux/amd64, Debian GNU/Linux 12 (bookworm)",
		Kernel: "6.1.0", Go: "go1.26.0", Pgbakeoff: "v0.9.0", Hostname: "bench1"}
	tpcb.Flags = judge(evidence{committed: res.Committed, failed: res.Failed, clientCommits: tpcb.CommitsTotal, serverCommits: tpcb.Server.Commits,
		commitsRead: true, checkpoints: 1, autovacuums: 2, others: 0.02, seen: []string{"psql (pid 42)"}})

	tpccRun := *run
	tpccRun.Workload, tpccRun.Script = "tpcc", "new_order@45,payment@43,order_status@4,delivery@4,stock_level@4"
	tpccRes := *res
	tpccRes.Scripts = []driver.ScriptResult{{Name: "new_order", Committed: 2700, RolledBack: 27, Latency: latencies(t, 2727, 2000, 40000)},
		{Name: "payment", Committed: 2580, Latency: latencies(t, 2580, 1000, 20000)}}
	tpccRes.Errors, tpccRes.Outages, tpccRes.ConnectErrors, tpccRes.Committed, tpccRes.Failed = nil, nil, nil, 5280, 0
	tpcc := summarize(&tpccRun, &tpccRes, info, &Setup{Scale: 10}, f, stats, cpu0, cpu1)
	tpcc.Flags = judge(evidence{committed: 5280, clientCommits: tpcc.CommitsTotal, serverCommits: tpcc.CommitsTotal + 500, commitsRead: true})

	sbRun := *run
	sbRun.Workload, sbRun.Script = "sysbench", "oltp_read_write"
	sbRes := *res
	sbRes.Scripts = []driver.ScriptResult{{Name: "oltp_read_write", Committed: 3000, Latency: latencies(t, 3000, 3000, 9000)}}
	sbRes.Errors, sbRes.Outages, sbRes.ConnectErrors, sbRes.Committed, sbRes.Failed = nil, nil, nil, 3000, 0
	sbRes.Incomplete, sbRes.IncompleteReason = true, "no client had a connection for 2m0s (the outage timeout)"
	sbf := f
	sbf.ThreadPerClient, sbf.Clients = On, 8
	unread := serverStats{values: map[string]map[string]int64{store.PointBeforeConnect: {"xact_commit": 1}}, unread: map[string]string{store.PointAfterDisconnect: "read pg_stat_database: connection refused"}}
	sb := summarize(&sbRun, &sbRes, &target.Info{Address: "/tmp/.s.PGSQL.5432", Version: "18.1"}, &Setup{Scale: 4}, sbf, unread, cpu0, cpu1)
	sb.Flags = judge(evidence{incomplete: sbRes.IncompleteReason, committed: 3000, rates: []rate{{5 * time.Second, 100, 0}, {10 * time.Second, 100, 0}, {15 * time.Second, 10, 0}, {20 * time.Second, 100, 0}, {25 * time.Second, 100, 0}}})

	// An open-loop pgbench run with a latency limit, whose clients all stopped on
	// a script error before its end.
	pgRun := *run
	pgRun.Workload, pgRun.Script = "pgbench", "slow.sql"
	pgRes := *res
	pgRes.Scripts = []driver.ScriptResult{{Name: "slow.sql", Committed: 50000, Failed: 4, Latency: latencies(t, 50000, 900, 60000)}}
	pgRes.Errors = []driver.ErrorCount{{Script: "slow.sql", Count: 4, Example: "client 0 script 0 aborted in command 1 query 0: ERROR:  division by zero"}}
	pgRes.Outages, pgRes.ConnectErrors, pgRes.Committed, pgRes.Failed, pgRes.Aborted = nil, nil, 50000, 4, 4
	pgRes.Rate = driver.RateFigures{Scheduled: 50400, Untaken: 12, Skipped: 380, Late: 981, LagAvg: 1500 * time.Microsecond, LagMax: 48 * time.Millisecond}
	pgf := f
	pgf.Rate, pgf.LatencyLimit = 500, 50*time.Millisecond
	pg := summarize(&pgRun, &pgRes, info, &Setup{Scale: 1}, pgf, stats, cpu0, cpu1)
	pg.Flags = judge(evidence{committed: 50000, failed: 4, aborted: 4, clients: 4, abort: pgRes.Errors[0].Example})
	return map[string]*Summary{"tpcb": tpcb, "tpcc": tpcc, "sysbench": sb, "pgbench": pg}
}
