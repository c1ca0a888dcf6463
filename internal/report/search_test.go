package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
)

// searchObjective is the objective of searchReport's study.
var searchObjective = findmax.Objective{Quantile: 99, Limit: 5 * time.Millisecond, MaxErrors: 0.01}

// searchRun is a completed run of a find-max search: at rate (0 for the
// closed-loop run that measured the ceiling), tps done, with p99 as its window's
// 99th percentile.
func searchRun(id int64, target, search string, repeat, rate int, tps, p99 float64, flags ...Flag) Run {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := range 100 {
		us := int64(p99 * 500)
		if i >= 98 {
			us = int64(p99 * 1000)
		}
		_ = h.RecordValue(us)
	}
	r := Run{ID: id, Target: target, Clients: 16, Rate: rate, Repeat: repeat, Search: search, Status: "completed",
		Metric: tps, TPS: tps, Committed: int64(tps * 10), Latency: Latency{P50: p99 / 2, P95: p99 / 2, P99: p99}, latency: h,
		Flags: flags}
	for _, f := range flags {
		r.Invalid = r.Invalid || f.Invalid
	}
	return r
}

// searchReport is a study of find-max searches, two for some targets, within
// p99 < 5ms:
//
//   - pg15, the baseline, found 750 tx/s in one search and no rate in the other;
//   - pg16 found 825 and 900 tx/s;
//   - pg17's closed-loop run met the objective at 500 tx/s, a lower bound, though
//     its open-loop runs far below it failed on a busy client: unreliable;
//   - pg18 found no rate.
func searchReport() *Report {
	busy := Flag{Name: "client_cpu", Invalid: true, Reason: "the client was CPU-bound (1.98 cores busy): it, not the server, set the pace"}
	runs := []Run{
		searchRun(1, "pg15", "s1", 1, 0, 1000, 9), searchRun(2, "pg15", "s1", 1, 666, 666, 2), searchRun(3, "pg15", "s1", 1, 833, 820, 8),
		searchRun(4, "pg15", "s1", 1, 750, 750, 3), searchRun(5, "pg15", "s1", 1, 791, 788, 6), searchRun(6, "pg15", "s1", 1, 750, 749, 3.5),
		searchRun(7, "pg16", "s2", 1, 0, 1100, 10), searchRun(8, "pg16", "s2", 1, 733, 733, 2), searchRun(9, "pg16", "s2", 1, 916, 900, 9),
		searchRun(10, "pg16", "s2", 1, 825, 824, 4), searchRun(11, "pg16", "s2", 1, 870, 866, 6), searchRun(12, "pg16", "s2", 1, 825, 823, 4.5),
		searchRun(13, "pg17", "s3", 1, 0, 500, 4), searchRun(14, "pg17", "s3", 1, 333, 120, 7, busy), searchRun(15, "pg17", "s3", 1, 166, 160, 6),
		searchRun(16, "pg18", "s4", 1, 0, 400, 30), searchRun(17, "pg18", "s4", 1, 266, 260, 12), searchRun(18, "pg18", "s4", 1, 133, 133, 8),
		searchRun(19, "pg15", "s5", 2, 0, 980, 9), searchRun(20, "pg15", "s5", 2, 653, 650, 6), searchRun(21, "pg15", "s5", 2, 326, 326, 5.5),
		searchRun(22, "pg16", "s6", 2, 0, 1080, 9), searchRun(23, "pg16", "s6", 2, 720, 720, 2), searchRun(24, "pg16", "s6", 2, 900, 897, 4),
		searchRun(25, "pg16", "s6", 2, 990, 950, 9), searchRun(26, "pg16", "s6", 2, 945, 930, 7), searchRun(27, "pg16", "s6", 2, 900, 899, 4.2),
	}
	obj := searchObjective
	return &Report{Title: "find-max searches", Generated: generated, Source: "study searches (searches.yaml)", Baseline: "pg15",
		Noise: 0.05, Aggregate: "median", Objective: &obj,
		Targets:   []Target{{Name: "pg15"}, {Name: "pg16"}, {Name: "pg17"}, {Name: "pg18"}},
		Workloads: []Workload{{Name: "tpcb-s10", Kind: "tpcb", Metric: "tps", Clients: []int{16}, Search: true, Runs: runs}}}
}

// objectiveRow is the cells of the objective's table at 16 clients, as every
// renderer shows them.
func objectiveRow(t *testing.T, r *Report) []string {
	t.Helper()
	a := newAnalysis(r)
	for _, row := range a.objectiveTable(a.workloads[0]).Rows {
		if row[0].Text == "16" {
			texts := make([]string, len(row))
			for i, c := range row {
				texts[i] = c.Text
			}
			return texts
		}
	}
	t.Fatal("no row of 16 clients in the objective's table")
	return nil
}

// A search that found no rate is no rate of 0: it stays out of the median and the
// ratios, and the tables say so in the words study status uses.
func TestObjectiveSearches(t *testing.T) {
	r := searchReport()
	row := objectiveRow(t, r)
	a := newAnalysis(r)
	found := map[string][]findmax.Found{}
	for _, tg := range a.targets {
		for _, s := range a.searches(a.workloads[0], tg.Name, 16) {
			found[tg.Name] = append(found[tg.Name], s.found)
		}
	}
	none := searchObjective.NoRate()
	want := []string{"16",
		"750 (1 of 2 found none)",
		"862 ±6.1% !", SearchVersus(found["pg15"], found["pg16"], "median", 0.05),
		"≥500", SearchVersus(found["pg15"], found["pg17"], "median", 0.05),
		none, "not compared: no rate found"}
	if strings.Join(row, " | ") != strings.Join(want, " | ") {
		t.Errorf("objective row\n%s\nwant\n%s", strings.Join(row, " | "), strings.Join(want, " | "))
	}
	for i, w := range []string{"1.15x not enough runs", "≥0.67x"} {
		if row[3+2*i] != w {
			t.Errorf("verdict %q, want %q", row[3+2*i], w)
		}
	}
	for _, f := range row {
		if strings.Contains(f, "375") || f == "0" || strings.Contains(f, "0.00x") {
			t.Errorf("a search that found no rate counted as 0: %q in %q", f, row)
		}
	}
	// compare prints the same cells, in tables no wider than a terminal's.
	var b bytes.Buffer
	if err := Terminal(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, c := range row {
		if !strings.Contains(b.String(), c) {
			t.Errorf("compare lacks %q:\n%s", c, b.String())
		}
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if width(l) > termWidth {
			t.Errorf("a line of %d columns: %q", width(l), l)
		}
	}
}

// What a search's table cannot say is said under it: a lower bound, a rate no
// confirmation confirmed, and runs that contradict each other, with the flag
// that says why.
func TestObjectiveNotes(t *testing.T) {
	var b bytes.Buffer
	if err := Terminal(&b, searchReport()); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{
		"pg17, 16 clients, runs 13-15: at least 500 tx/s, the closed-loop run 13's throughput, which met the objective",
		"pg17, 16 clients, runs 13-15: unreliable: the closed-loop run met the objective at 500 tx/s in run 13, yet 166 tx/s did not in run 15",
		"yet 166 tx/s did not in run 15: p99 was 6.0",
		"flagged: run 14 client_cpu: the client was CPU-bound (1.98 cores busy)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(out, "pg16, 16 clients, runs 7-12: unreliable") || strings.Contains(out, "pg15, 16 clients, runs 1-6: 750 tx/s met the objective in run 4, and no other") {
		t.Errorf("a search without doubt, or a confirmed one, has a note:\n%s", b.String())
	}
}

// The latency-throughput curve is drawn as one is read: a line through each
// rate in the order of the rates, its repetitions (here a confirmation that
// carried less) aggregated, and every run a point of its own. Joining the runs in
// the order made, or by throughput, zigzags.
func TestCurveByRate(t *testing.T) {
	obj := searchObjective
	runs := []Run{searchRun(1, "pg16", "s1", 1, 0, 1000, 9), searchRun(2, "pg16", "s1", 1, 600, 600, 2), searchRun(3, "pg16", "s1", 1, 900, 850, 9),
		searchRun(4, "pg16", "s1", 1, 750, 745, 3), searchRun(5, "pg16", "s1", 1, 825, 700, 4), searchRun(6, "pg16", "s1", 1, 825, 720, 6)}
	r := &Report{Title: "curve", Baseline: "pg16", Aggregate: "median", Objective: &obj, Targets: []Target{{Name: "pg16"}},
		Workloads: []Workload{{Name: "w", Kind: "tpcb", Metric: "tps", Clients: []int{16}, Search: true, Runs: runs}}}
	a := newAnalysis(r)
	f, ok := a.curveChart(a.workloads[0])
	if !ok {
		t.Fatal("no curve")
	}
	svg := string(f.svg)
	paths := regexp.MustCompile(`<path class="line" d="([^"]+)"`).FindAllStringSubmatch(svg, -1)
	if len(paths) != 1 {
		t.Fatalf("%d lines, want one for the one target:\n%s", len(paths), svg)
	}
	var xs []float64
	for _, m := range regexp.MustCompile(`[ML]([0-9.]+) `).FindAllStringSubmatch(paths[0][1], -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		xs = append(xs, x)
	}
	// 600, 750, 825 (700 and 720 tps, median 710) and 900 tx/s: the line bends
	// back at 825, where the target carried less than at 750.
	if len(xs) != 4 || !(xs[0] < xs[1] && xs[2] < xs[1] && xs[3] > xs[1]) {
		t.Errorf("the line's x %v, want 4 rates in order, bending back at the third", xs)
	}
	if n := strings.Count(svg, "<circle"); n != 5 {
		t.Errorf("%d points, want the 5 open-loop runs", n)
	}
	for _, want := range []string{"pg16, run 5 at 825 tx/s: 700 tps, p99 4.00 ms", "pg16, run 6 at 825 tx/s: 720 tps, p99 6.00 ms"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
}
