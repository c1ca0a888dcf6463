package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRecoverySection: runs with faults get a recovery table, one row a fault,
// with its figures; the lost commits are marked with their recovery point; a
// fault command's output is shown, its end only and its passwords replaced;
// the HA table compares each target's runs at one client count, never a
// median over all; a report without faults has no such section; the fault is
// shaded on the time series from where it was done to where commits resumed.
func TestRecoverySection(t *testing.T) {
	r := faultReport()
	var md bytes.Buffer
	if err := Markdown(&md, r, &memCharts{}); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	for _, want := range []string{"## Recovery",
		"| pg11 | 8 | ", "failover at 20.0 s | 1520 ms | 1710 ms | 2100 ms | 4012.5 | not read | 6 |",
		"command at 40.0 s | 310 ms | 420 ms | 900 ms | 3990.0 | 0 | 2 |",
		"failover at 20.0 s | 9800 ms | 1710 ms | 2100 ms | 4012.5 | 12, RPO 240 ms | 6 |",
		"| target | clients | p50 ms | p99 ms | price a month | faults | no commits, median | longest | lost commits |",
		`- pg11, 8 clients, run `, `: command at 40.0 s, psql "postgres://admin:xxxxx@db.example.com/app" -f kill.sql: exit 0, output "…`,
		` ⏎ (8 rows) ⏎  ⏎ COMMIT"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the Markdown report lacks %q", want)
		}
	}
	if strings.Contains(text, "s3cret") || strings.Contains(text, "password=") {
		t.Errorf("the Markdown report shows a fault command's password, or its output's first lines")
	}
	// A row per target and client count, with the medians of that client
	// count's runs without faults.
	wl := r.Workloads[1]
	for _, tg := range r.Targets {
		for _, clients := range []int{8, 16, 32} {
			var p50 []float64
			faults := 0
			for _, run := range wl.Runs {
				if run.Target != tg.Name || run.Clients != clients {
					continue
				}
				if len(run.Faults) == 0 {
					p50 = append(p50, run.Latency.P50)
				}
				faults += len(run.Faults)
			}
			want := fmt.Sprintf("| %s | %d | %s | ", tg.Name, clients, medianText(p50, "%.3f"))
			i := strings.Index(text, want)
			if i < 0 {
				t.Errorf("the HA table lacks %q", want)
				continue
			}
			row, _, _ := strings.Cut(text[i:], "\n")
			if cells := strings.Split(row, " | "); len(cells) < 6 || cells[5] != strconv.Itoa(faults) {
				t.Errorf("HA row %q: want %d faults", row, faults)
			}
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

// TestShownOutput: a fault command's output as reports show it: its last lines,
// cut to a length, passwords replaced.
func TestShownOutput(t *testing.T) {
	long := strings.Repeat("x", 400)
	for _, c := range []struct{ in, want string }{
		{"", "no output"},
		{"\n\n", "no output"},
		{"done\n", `output "done"`},
		{"a\nb\nc\nd\ne\nf\n", `output "…b ⏎ c ⏎ d ⏎ e ⏎ f"`},
		{"psql postgres://u:pw@h/db --password hunter2\n", `output "psql postgres://u:xxxxx@h/db --password xxxxx"`},
		{long, `output "…` + long[:maxShownOutput] + `"`},
	} {
		if got := shownOutput(c.in); got != c.want {
			t.Errorf("shownOutput(%q) = %s, want %s", c.in, got, c.want)
		}
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
			run.Faults = []Fault{f}
			continue
		}
		// The baseline's run ends with a command of the user's own, whose
		// output, from a store written before outputs were redacted, holds a
		// password.
		f.Lost = -1
		cmd := Fault{Kind: "command", AtS: 40, T: 40, Done: true, NoCommitsMs: 310, ResumedMs: 310, ClientMaxMs: 420, RecoveredMs: 900,
			BeforeTPS: 3990, InDoubt: 2, Command: `psql "postgres://admin:xxxxx@db.example.com/app" -f kill.sql`, ExitCode: 0,
			Output: "connecting as admin with password=s3cret\nBEGIN\nSET\n pg_terminate_backend\n----------------------\n t\n(8 rows)\n\nCOMMIT\n"}
		run.Faults = []Fault{f, cmd}
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
