package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestRecoverySection: runs with faults get a recovery table, one row a fault,
// with its figures; the lost commits are marked; a report without faults has no
// such section; the fault is shaded on the time series from where it was done
// to where commits resumed.
func TestRecoverySection(t *testing.T) {
	r := buildReport(testTargets()[:2])
	wl := &r.Workloads[1]
	for i := range wl.Runs {
		run := &wl.Runs[i]
		if run.Clients != 8 || run.Repeat != 2 {
			continue
		}
		run.Invalid = true
		run.Flags = append(run.Flags, Flag{Name: "fault", Invalid: true, Reason: "faults were done during the run (failover at 20s)"})
		f := Fault{Kind: "failover", T: 20, Done: true, NoCommitsMs: 1520, ClientMaxMs: 1710, RecoveredMs: 2100, BeforeTPS: 4012.5, InDoubt: 6, Lost: 0}
		if run.Target != r.Baseline {
			f.Lost, f.RPOMs, f.NoCommitsMs = 12, 240, 9800
		}
		run.Faults = []Fault{f}
	}
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
