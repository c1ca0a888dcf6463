package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// sparseReports are reports with figures missing, which every renderer must take
// without failing.
var sparseReports = []struct {
	name   string
	report func() *Report
}{
	{"empty", func() *Report { return &Report{} }},
	{"workload-without-runs", func() *Report {
		return &Report{Targets: testTargets(), Workloads: []Workload{{Name: "w", Kind: "tpcb", Metric: "tps", Clients: []int{1, 4}}}}
	}},
	{"bare-runs", func() *Report {
		// Runs with only a headline figure: no latency, series, waits or samples.
		w := Workload{Name: "bare", Kind: "sysbench", Metric: "tps", Clients: []int{4}}
		for i, t := range []string{"a", "b"} {
			for rep := 1; rep <= 2; rep++ {
				w.Runs = append(w.Runs, Run{ID: int64(10*i + rep), Target: t, Clients: 4, Repeat: rep,
					Status: "completed", Metric: float64(100 + 10*i + rep), TPS: float64(100 + 10*i + rep)})
			}
		}
		return &Report{Baseline: "a", Workloads: []Workload{w}}
	}},
	{"baseline-without-valid-runs", func() *Report {
		r := testReport()
		for i := range r.Workloads[0].Runs {
			if run := &r.Workloads[0].Runs[i]; run.Target == "pg11" && run.Clients == 8 {
				run.Status = "failed"
			}
		}
		return r
	}},
	{"mixed-currencies-and-a-target-without-price", func() *Report {
		r := testReport()
		r.Targets[1].Price = &Price{Monthly: 900, Currency: "EUR"}
		r.Targets[2].Price = nil
		return r
	}},
	{"one-run-per-cell", func() *Report {
		r := testReport()
		for i := range r.Workloads {
			var keep []Run
			for _, run := range r.Workloads[i].Runs {
				if run.Repeat == 1 {
					keep = append(keep, run)
				}
			}
			r.Workloads[i].Runs = keep
		}
		return r
	}},
	{"unknown-baseline-and-targets-only-in-runs", func() *Report {
		r := testReport()
		r.Baseline = "nonesuch"
		r.Targets = r.Targets[:1]
		return r
	}},
}

func TestSparse(t *testing.T) {
	for _, rc := range sparseReports {
		t.Run("report="+rc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Terminal(&b, rc.report()); err != nil {
				t.Fatalf("Terminal: %v", err)
			}
			for _, line := range strings.Split(b.String(), "\n") {
				if utf8.RuneCountInString(line) > termWidth {
					t.Errorf("Terminal line wider than %d columns: %q", termWidth, line)
				}
			}
			if strings.Contains(b.String(), "NaN") {
				t.Errorf("Terminal prints NaN:\n%s", b.String())
			}
			b.Reset()
			if err := Markdown(&b, rc.report(), &memCharts{}); err != nil {
				t.Fatalf("Markdown: %v", err)
			}
			if strings.Contains(b.String(), "NaN") {
				t.Error("Markdown prints NaN")
			}
			b.Reset()
			if err := HTML(&b, rc.report()); err != nil {
				t.Fatalf("HTML: %v", err)
			}
			if strings.Contains(b.String(), "NaN") {
				t.Error("HTML prints NaN")
			}
			p := parsePage(t, b.Bytes())
			if want := chartCount(rc.report()); len(p.charts) != want {
				t.Errorf("%d charts, want %d", len(p.charts), want)
			}
			b.Reset()
			if err := CSV(&b, rc.report()); err != nil {
				t.Fatalf("CSV: %v", err)
			}
		})
	}
}

// chartCount is how many charts a report has: per workload two against clients,
// per client count two time series and a latency distribution, and the server and
// price charts when there are figures for them.
func chartCount(r *Report) int {
	a := newAnalysis(r)
	n := 0
	for _, wl := range a.workloads {
		n += 2 + 3*len(wl.groups)
		for _, k := range []string{"cpu", "iops", "wal"} {
			if wl.metricIndex(k) >= 0 {
				n++
			}
		}
		if len(waitClasses(wl)) > 0 {
			n += len(wl.groups)
		}
		if a.priced && a.currency != "" {
			n++
		}
	}
	return n
}

// TestSparseServerSamples has the server sampled at one client count only.
func TestSparseServerSamples(t *testing.T) {
	r := testReport()
	for i := range r.Workloads[0].Runs {
		if run := &r.Workloads[0].Runs[i]; run.Clients != 16 {
			run.Sampled = Sampled{}
		}
	}
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-chart-name="cpu-tpcc-10w"`) {
		t.Error("no CPU chart for the one client count that has samples")
	}
}
