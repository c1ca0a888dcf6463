package report_test

import (
	"os"

	"github.com/pgbakeoff/pgbakeoff/internal/report"
)

func ExampleTerminal() {
	runs := func(target string, tps ...float64) []report.Run {
		var out []report.Run
		for i, x := range tps {
			out = append(out, report.Run{ID: int64(len(target)*10 + i), Target: target, Clients: 8, Repeat: i + 1,
				Status: "completed", Metric: x, TPS: x, Latency: report.Latency{P50: 8000 / x, P95: 16000 / x, P99: 24000 / x}})
		}
		return out
	}
	w := report.Workload{Name: "select-only", Kind: "tpcb", Metric: "tps", Clients: []int{8}}
	w.Runs = append(runs("old", 1510, 1492, 1530), runs("new", 1705, 1688, 1731)...)
	w.Runs[4].Invalid = true
	w.Runs[4].Flags = []report.Flag{{Name: "server_restarted", Invalid: true, Reason: "the server restarted"}}
	r := &report.Report{Title: "old vs new", Baseline: "old", Noise: 0.05,
		Targets: []report.Target{{Name: "old"}, {Name: "new"}}, Workloads: []report.Workload{w}}
	if err := report.Terminal(os.Stdout, r); err != nil {
		panic(err)
	}
	// Output:
	// old vs new
	// baseline old; 2 targets
	//
	// Cells: the median of a target's valid runs ± their coefficient of variation; ! marks variation above
	// the 5% noise threshold. "vs old" is the ratio to the baseline. On the headline metric a target is
	// faster or slower only when every run beats every run of the other and the medians differ by more
	// than the threshold; otherwise it is within noise, with an estimate of the runs that might settle it.
	//
	// select-only (tpcb), 8 clients
	//                     old          new  vs old
	// tps         1,510 ±1.3%  1,718 ±1.1%  1.14x faster
	// p50 ms       5.30 ±1.3%   4.66 ±1.1%  0.88x
	// p95 ms       10.6 ±1.3%   9.31 ±1.1%  0.88x
	// p99 ms       15.9 ±1.3%   14.0 ±1.1%  0.88x
	// valid runs          3/3          2/3
	//   x run 31 (new, repeat 2) left out: server_restarted: the server restarted
}
