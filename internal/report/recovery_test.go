package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecoverySection: runs with faults get a recovery table, one row a fault,
// with its figures; the lost commits are marked; a report without faults has no
// such section; the fault is shaded on the time series from where it was done
// to where commits resumed.
func TestRecoverySection(t *testing.T) {
	r := faultReport()
	var md bytes.Buffer
	if err := Markdown(&md, r, &memCharts{}); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	for _, want := range []string{"## Recovery",
		"| target | p50 ms | p99 ms | price a month | faults | no commits, median | longest | lost commits |",
		" | 1 | 1520 ms | 1520 ms | 0 |", " | 1 | 9800 ms | 9800 ms | 12 |",
		"| pg11 | 8 | ", "failover at 20.0 s | 1520 ms | 1710 ms | 2100 ms | 4012.5 | 0 | 6 |",
		"failover at 20.0 s | 9800 ms | 1710 ms | 2100 ms | 4012.5 | 12 over 240 ms | 6 |"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Markdown report lacks %q", want)
		}
	}
	var page bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if html := page.String(); !strings.Contains(html, `class="num left-out"`) || !strings.Contains(html, "failover at 20.0 s, no commits until 21.5 s") {
		t.Errorf("the HTML report does not mark the lost commits or shade the fault on its series")
	}
	md.Reset()
	if err := Markdown(&md, testReport(), &memCharts{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Recovery") {
		t.Error("a report without faults has a recovery section")
	}
}

// faultReport is the two-target report with a failover in the second
// repetition of each target's tpcb runs at 8 clients: the baseline's lost
// nothing, the other's lost 12 acknowledged commits.
func faultReport() *Report {
	r := buildReport(testTargets()[:2])
	wl := &r.Workloads[1]
	for i := range wl.Runs {
		run := &wl.Runs[i]
		if run.Clients != 8 || run.Repeat != 2 {
			continue
		}
		run.Invalid = true
		run.Flags = append(run.Flags, Flag{Name: "fault", Invalid: true, Reason: "faults were done during the run (failover at 20s)"})
		f := Fault{Kind: "failover", AtS: 20, T: 20, Done: true, NoCommitsMs: 1520, ResumedMs: 1520, ClientMaxMs: 1710, RecoveredMs: 2100, BeforeTPS: 4012.5, InDoubt: 6, Lost: 0}
		if run.Target != r.Baseline {
			f.Lost, f.RPOMs, f.NoCommitsMs, f.ResumedMs = 12, 240, 9800, 9800
		}
		run.Faults = []Fault{f}
	}
	return r
}

// TestRecoveryInChromium: the report with faults opens in Chromium without a
// problem, its charts drawn, its recovery tables within the page on a laptop's
// screen and a phone's.
func TestRecoveryInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (go test without -short)")
	}
	bin := browser(t)
	var b bytes.Buffer
	if err := HTML(&b, faultReport()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	v := open(t, bin, path, laptop)
	for _, p := range v.problems {
		t.Errorf("the browser reported %s", p)
	}
	for _, c := range v.charts {
		if c.Drawn == 0 {
			t.Errorf("chart %s draws nothing", c.Name)
		}
	}
	for _, o := range v.over {
		t.Errorf("%s reaches past the page, to %.0f px", o.What, o.Right)
	}
	// On a phone the recovery tables' rows wrap as the others' do.
	for _, o := range open(t, bin, path, 400).over {
		t.Errorf("at 400 px, %s reaches past the page, to %.0f px", o.What, o.Right)
	}
}
