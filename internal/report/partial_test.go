package report

import (
	"regexp"
	"testing"
)

// TestPartialIntervals: intervals much shorter than the others, such as the few
// milliseconds between the last tick and the window's end, are not drawn: their
// throughput would plunge to near zero and their p99 jump at the chart's edge.
func TestPartialIntervals(t *testing.T) {
	run := Run{ID: 1, Target: "pg", Clients: 4, Status: "completed", Metric: 1000, TPS: 1000}
	whole := 0
	add := func(t, secs, tps, p99 float64) {
		run.Series = append(run.Series, Point{T: t, Secs: secs, TPS: tps, P99: p99})
		if secs >= 0.5 {
			whole++
		}
	}
	for s := -2; s <= 0; s++ {
		add(float64(s), 1, 1000, 5) // warm-up, the last one ending as the window opens
	}
	add(0.003, 0.003, 333, 40) // the first measured interval, cut short
	for s := 1; s <= 10; s++ {
		add(float64(s)+0.003, 1, 1000, 5)
	}
	add(10.007, 0.004, 250, 900) // the last one, ending with the window
	r := &Report{Targets: []Target{{Name: "pg"}}, Baseline: "pg",
		Workloads: []Workload{{Name: "w", Kind: "tpcb", Metric: "tps", Clients: []int{4}, Runs: []Run{run}}}}

	a := newAnalysis(r)
	var figs [][]figure
	for _, g := range a.workloads[0].groups {
		figs = append(figs, a.seriesCharts(a.workloads[0], g))
	}
	if len(figs) != 1 || len(figs[0]) != 2 {
		t.Fatalf("got %d groups of series charts, want one of two", len(figs))
	}
	line := regexp.MustCompile(`<path class="line" d="([^"]*)"`)
	vertex := regexp.MustCompile(`[ML]([-0-9.]+) ([-0-9.]+)`)
	for _, fig := range figs[0] {
		m := line.FindSubmatch(fig.svg)
		if m == nil {
			t.Fatalf("%s: no line drawn", fig.name)
		}
		vs := vertex.FindAllSubmatch(m[1], -1)
		if len(vs) != whole {
			t.Errorf("%s: %d points drawn, want the %d whole intervals", fig.name, len(vs), whole)
		}
		// Every whole interval has the same figures: the line is flat.
		for _, v := range vs {
			if string(v[2]) != string(vs[0][2]) {
				t.Errorf("%s: the line leaves its level at x=%s (y %s, not %s)", fig.name, v[1], v[2], vs[0][2])
				break
			}
		}
	}
}
