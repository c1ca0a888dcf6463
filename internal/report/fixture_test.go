package report

import (
	"fmt"
	"math"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
)

// The reports the tests render, built here rather than read from a store: three
// priced targets, two workloads (tpcc with NOPM, tpcb with tps) at three client
// counts, three repetitions each. Among them:
//
//   - pg16-tuned is faster than pg11 on tpcc at every client count;
//   - pg16 is within noise of pg11 (its runs overlap the baseline's);
//   - pg16's second tpcc run at 16 clients is invalid (the server restarted) and
//     has an outage in its time series;
//   - pg16-tuned's tpcb runs at 32 clients vary by ±20% (high variance);
//   - every run has a checkpoint in its series, and ends with a partial interval
//     of a few milliseconds.

var generated = time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)

type shape struct {
	name   string
	kind   string
	metric string
	base   map[int]float64 // headline figure of the baseline by clients
}

var shapes = []shape{
	{"tpcc-10w", "tpcc", "NOPM", map[int]float64{8: 10000, 16: 18000, 32: 25000}},
	{"tpcb-s100", "tpcb", "tps", map[int]float64{8: 4000, 16: 7000, 32: 9000}},
}

// jitter is each target's factor and per-repetition spread, by workload kind.
func jitter(target, kind string, clients, repeat int) float64 {
	switch target {
	case "pg11":
		return []float64{0.99, 1.0, 1.01}[repeat-1]
	case "pg16":
		if kind == "tpcc" {
			return 1.03 * []float64{0.97, 1.03, 1.05}[repeat-1]
		}
		return 1.01 * []float64{0.98, 1.0, 1.02}[repeat-1]
	case "pg16-tuned":
		if kind == "tpcb" && clients == 32 {
			return 1.2 * []float64{0.8, 1.0, 1.2}[repeat-1]
		}
		if kind == "tpcb" {
			return 1.1 * []float64{0.99, 1.0, 1.01}[repeat-1]
		}
		return 1.25 * []float64{0.99, 1.0, 1.01}[repeat-1]
	}
	// The baseline, and the other targets of the many-target reports near it.
	return []float64{0.99, 1.0, 1.01}[repeat-1] * (1 + 0.01*float64(len(target)%5))
}

func testTargets() []Target {
	return []Target{
		{Name: "pg11", Version: "11.22", Address: "127.0.0.1:5411",
			Labels:   map[string]string{"role": "baseline", "host": "bench-1"},
			Settings: map[string]string{"shared_buffers": "128MB", "max_connections": "100"},
			Price: &Price{Monthly: 1000, Currency: "USD", Detail: "compute 1.20/h x 730 + storage 500 GB x 0.248",
				Source: "list prices, Jan 2024"}},
		{Name: "pg16", Version: "16.1", Address: "127.0.0.1:5416",
			Settings: map[string]string{"shared_buffers": "128MB", "max_connections": "100"},
			Price:    &Price{Monthly: 1000, Currency: "USD", Detail: "same machine as pg11", Source: "list prices, Jan 2024"}},
		{Name: "pg16-tuned", Version: "16.1", Address: "127.0.0.1:5417",
			Labels:   map[string]string{"tuning": "pgtune"},
			Settings: map[string]string{"shared_buffers": "2GB", "max_connections": "100", "wal_buffers": "16MB"},
			// Looked up in a price list, broken down by the hour.
			Price: reportPrice(&cost.Price{ComputePerHour: 1.232, StorageGB: 1000, StoragePerGBMonth: 0.115,
				IOPS: 3000, PerIOPSMonth: 0.02, HAMonthly: 1074.36, Currency: "USD",
				Source: "AWS Price List (Amazon RDS), us-east-1 (version 20261101000000), db.m6g.4xlarge Single-AZ and Multi-AZ, gp3",
				Date:   "2026-11-01", Fetched: "2026-11-20T08:00:00Z"})},
	}
}

// testReport is the three-target report of the golden files.
func testReport() *Report {
	return buildReport(testTargets())
}

// buildReport makes the runs of every shape for the given targets.
func buildReport(targets []Target) *Report {
	r := &Report{
		Title:     "pg11 vs pg16",
		Generated: generated,
		Source:    "study pg11-vs-pg16 (examples/pg11-vs-pg16.yaml)",
		Baseline:  targets[0].Name,
		Noise:     0.05,
		Aggregate: "median",
		Targets:   targets,
		Env: Environment{
			Client: "linux/amd64, 2 CPUs, 7.8 GiB, pgbakeoff v0.3.0",
			Differences: []string{
				"shared_buffers: pg11 128MB, pg16 128MB, pg16-tuned 2GB",
				"wal_buffers: pg16-tuned 16MB, others default",
			},
			Warnings: []string{"pg11 and pg16 run on the same host as the client"},
		},
	}
	id := int64(1)
	started := generated.Add(-24 * time.Hour)
	for _, sh := range shapes {
		w := Workload{Name: sh.name, Kind: sh.kind, Metric: sh.metric, Clients: []int{8, 16, 32}}
		for _, c := range w.Clients {
			for _, t := range targets {
				for rep := 1; rep <= 3; rep++ {
					w.Runs = append(w.Runs, makeRun(id, t.Name, sh, c, rep, started))
					id++
					started = started.Add(7 * time.Minute)
				}
			}
		}
		r.Workloads = append(r.Workloads, w)
	}
	return r
}

func makeRun(id int64, target string, sh shape, clients, rep int, started time.Time) Run {
	m := sh.base[clients] * jitter(target, sh.kind, clients, rep)
	run := Run{ID: id, Target: target, Clients: clients, Repeat: rep, Started: started, Status: "completed", Metric: m}
	switch sh.kind {
	case "tpcc":
		run.TPM = math.Round(m * 2.3)
		run.TPS = run.TPM / 60
	default:
		run.TPS = m
	}
	p50 := 1000 * float64(clients) / run.TPS * 0.8
	run.Latency = Latency{Avg: p50 * 1.1, P50: p50, P90: p50 * 1.7, P95: p50 * 2, P99: p50 * 3, P999: p50 * 5, Max: p50 * 12}
	run.Percentiles = []Percentile{
		{50, p50}, {90, p50 * 1.7}, {99, p50 * 3}, {99.9, p50 * 5}, {99.99, p50 * 8}, {100, p50 * 12},
	}
	run.ServerCPU = 0.8 + 0.05*float64(clients)*jitter(target, sh.kind, clients, rep)
	run.IOPS = math.Round(run.TPS * 0.8)
	run.WALMBps = run.TPS * 0.004
	run.Sampled = Sampled{CPU: true, IOPS: true, WAL: true}
	run.Waits = []Wait{
		{"CPU", 0.46}, {"LWLock:WALWrite", 0.21}, {"IO:DataFileRead", 0.14},
		{"Lock:transactionid", 0.1}, {"Client:ClientRead", 0.06}, {"IO:WALSync", 0.03},
	}
	if target == "pg16-tuned" {
		run.Waits = []Wait{
			{"CPU", 0.62}, {"LWLock:WALWrite", 0.12}, {"Lock:transactionid", 0.11},
			{"Client:ClientRead", 0.09}, {"IO:DataFileRead", 0.04}, {"IO:WALSync", 0.02},
		}
	}
	for t := -5; t < 25; t++ {
		x := float64(t)
		run.Series = append(run.Series, Point{T: x, Secs: 1,
			TPS:       round2(run.TPS * (1 + 0.03*math.Sin(x+float64(rep)))),
			P99:       round2(run.Latency.P99 * (1 + 0.1*math.Cos(x/2))),
			ServerCPU: run.ServerCPU, IOPS: run.IOPS, WALMBps: run.WALMBps})
	}
	// The few milliseconds from the last tick to the window's end, as runs store them.
	run.Series = append(run.Series, Point{T: 24.004, Secs: 0.004, TPS: round2(run.TPS / 40), P99: round2(run.Latency.P99 * 20)})
	run.Checkpoints = []float64{float64(10 + rep)}
	if sh.kind == "tpcc" && target == "pg16" && clients == 16 && rep == 2 {
		run.Invalid = true
		run.Flags = []Flag{
			{Name: "server_restarted", Invalid: true, Reason: "the postmaster start time changed during the window"},
		}
		run.Outages = []Span{{Start: 15, End: 18, Cause: "connection refused"}}
		for i := range run.Series {
			if p := &run.Series[i]; p.T >= 15 && p.T < 18 {
				p.TPS, p.P99 = 0, 0
			}
		}
	}
	if sh.kind == "tpcb" && target == "pg11" && clients == 32 && rep == 1 {
		run.Warnings = []string{"the client's CPU was 93% busy: the client may have been the limit"}
		run.Flags = []Flag{{Name: "checkpoint_in_window", Reason: "a checkpoint ran during the measured window"}}
	}
	return run
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// singleReport is one target without a price: nothing to compare, nothing to
// price.
func singleReport() *Report {
	t := testTargets()[0]
	t.Price = nil
	r := buildReport([]Target{t})
	r.Title = "pg11 alone"
	r.Source = "runs 1-18"
	r.Env.Differences = nil
	return r
}

// manyReport has n targets with long names, for the width of terminal tables.
func manyReport(n int) *Report {
	ts := testTargets()
	for i := len(ts); i < n; i++ {
		ts = append(ts, Target{Name: fmt.Sprintf("pg17-candidate-build-%d-with-a-long-name", i),
			Price: &Price{Monthly: 1200 + 100*float64(i), Currency: "USD"}})
	}
	return buildReport(ts[:n])
}
