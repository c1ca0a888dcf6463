package cli_test

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/report"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/pgbakeoff/pgbakeoff/internal/studyrun"
)

// TestCompareJSON: `compare --json` prints the figures the tables show, with
// the verdicts of the test they use; with --fail-if-slower the gate's
// judgement too, the exit code as without --json and the gate's lines on
// stderr. clitest.Run validates each document against `schema compare`.
func TestCompareJSON(t *testing.T) {
	results := filepath.Join(t.TempDir(), "r.db")
	const bench = "host=/tmp/pgbakeoff-sockets port=5432 user=postgres sslmode=disable dbname=bench"
	tps := map[string][]float64{"before": {1000, 1010, 990}, "after": {800, 810, 790}, "again": {1005, 995, 1012}}
	ids := map[string][]int64{}
	for _, build := range []string{"before", "after", "again"} {
		for _, x := range tps[build] {
			got := seedStore(t, results, storedRun{target: bench, version: "16.4", tps: x, p99: 2, labels: map[string]string{"build": build}})
			ids[build] = append(ids[build], got[0])
		}
	}
	// A run that did not finish is listed, not counted.
	unfinished := seedStore(t, results, storedRun{target: bench, version: "16.4", labels: map[string]string{"build": "after"}, unfinished: true})[0]

	tests := []struct {
		name     string
		other    string
		gate     string
		code     int
		ratio    float64
		outcome  string
		passed   bool
		excluded []int64
	}{
		{name: "slower", other: "after", code: cli.ExitOK, ratio: 0.8, outcome: "slower", excluded: []int64{unfinished}},
		{name: "slower/fail-if-slower=5%", other: "after", gate: "5%", code: cli.ExitGate, ratio: 0.8, outcome: "slower", excluded: []int64{unfinished}},
		{name: "same/fail-if-slower=5%", other: "again", gate: "5%", code: cli.ExitOK, ratio: 1.005, outcome: "within noise", passed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"compare", "--label", "build=before", "--label", "build=" + tc.other, "--baseline", "before", "--json", "--results", results}
			if tc.gate != "" {
				args = append(args, "--fail-if-slower", tc.gate)
			}
			code, out, errOut := run(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			var c report.Comparison
			if err := json.Unmarshal([]byte(out), &c); err != nil {
				t.Fatalf("stdout is not the JSON object alone: %v\n%s", err, out)
			}
			checkComparison(t, &c, tc.other, ids, tc.ratio, tc.outcome, tc.excluded)
			switch {
			case tc.gate == "" && (c.Gate != nil || errOut != ""):
				t.Errorf("no --fail-if-slower, yet a gate: %+v\n%s", c.Gate, errOut)
			case tc.gate != "" && c.Gate == nil:
				t.Errorf("--fail-if-slower %s: no gate in the JSON", tc.gate)
			case tc.gate != "":
				checkGate(t, c.Gate, tc.other, tc.passed, errOut)
			}
		})
	}
}

// checkComparison checks the comparison of before (the baseline) with other:
// the targets' runs, the headline figures, their ratio and verdict, and the
// runs that do not count.
func checkComparison(t *testing.T, c *report.Comparison, other string, ids map[string][]int64, ratio float64, outcome string, excluded []int64) {
	t.Helper()
	// b and o are the baseline's and the other's places among the targets, and
	// in every row's figures.
	b := slices.IndexFunc(c.Targets, func(t report.ComparedTarget) bool { return t.Name == "before" })
	o := slices.IndexFunc(c.Targets, func(t report.ComparedTarget) bool { return t.Name == other })
	if c.Baseline != "before" || len(c.Targets) != 2 || b < 0 || o < 0 {
		t.Fatalf("baseline %q, targets %+v: want before and %s", c.Baseline, c.Targets, other)
	}
	if !slices.Equal(c.Targets[b].Runs, ids["before"]) || !slices.Equal(c.Targets[o].Runs, slices.Sorted(slices.Values(append(slices.Clone(ids[other]), excluded...)))) {
		t.Errorf("targets' runs %v and %v, want %v and %v with %v", c.Targets[b].Runs, c.Targets[o].Runs, ids["before"], ids[other], excluded)
	}
	if len(c.Workloads) != 1 || len(c.Workloads[0].Groups) != 1 {
		t.Fatalf("workloads %+v: want one, at one client count", c.Workloads)
	}
	g := c.Workloads[0].Groups[0]
	if g.Clients != 8 || g.Rate != 0 || c.Workloads[0].Metric != "tps" {
		t.Errorf("group %q at %d clients, rate %d, metric %q: want 8 clients closed loop, tps", g.Label, g.Clients, g.Rate, c.Workloads[0].Metric)
	}
	head := g.Metrics[0]
	if !head.Headline || head.Label != "tps" || len(head.Figures) != 2 {
		t.Fatalf("first metric %+v: want the headline tps for both targets", head)
	}
	base, f := head.Figures[b], head.Figures[o]
	if base.Value == nil || *base.Value != 1000 || base.Ratio != nil || base.Verdict != nil || !slices.Equal(base.Runs, ids["before"]) {
		t.Errorf("baseline's figure %+v: want the median 1000 of runs %v, no ratio nor verdict", base, ids["before"])
	}
	if f.Ratio == nil || math.Abs(*f.Ratio-ratio) > 1e-9 || f.Difference == nil || math.Abs(*f.Difference-(ratio-1)) > 1e-9 {
		t.Errorf("%s's ratio %v, difference %v: want %g and %g", other, f.Ratio, f.Difference, ratio, ratio-1)
	}
	if f.Verdict == nil || f.Verdict.Outcome != outcome || f.Verdict.Reason == "" {
		t.Errorf("%s's verdict %+v: want %s, with its reason", other, f.Verdict, outcome)
	}
	if !slices.Equal(f.Runs, ids[other]) || f.Min == nil || f.Max == nil || *f.Min != slices.Min(f.Values) || *f.Max != slices.Max(f.Values) {
		t.Errorf("%s's figure %+v: want the runs %v, with their spread", other, f, ids[other])
	}
	var gone []int64
	for _, r := range g.Runs[o].Excluded {
		gone = append(gone, r.ID)
		if !strings.Contains(r.Reason, "running") {
			t.Errorf("run %d is excluded because %q: want its status", r.ID, r.Reason)
		}
	}
	if !slices.Equal(gone, excluded) || !slices.Equal(g.Runs[o].Valid, ids[other]) || g.Runs[o].Target != other {
		t.Errorf("%s's runs: valid %v, excluded %v; want %v and %v", other, g.Runs[o].Valid, gone, ids[other], excluded)
	}
}

// checkGate checks --fail-if-slower's judgement of other against before, and
// that its lines went to stderr.
func checkGate(t *testing.T, g *report.Gate, other string, passed bool, errOut string) {
	t.Helper()
	if g.Limit != 0.05 || g.Passed != passed || len(g.Verdicts) != 1 {
		t.Fatalf("gate %+v: want limit 0.05, passed %v, one verdict", g, passed)
	}
	v := g.Verdicts[0]
	if v.Target != other || v.Baseline != "before" || v.Failed == passed || v.Ratio == nil {
		t.Errorf("verdict %+v: want %s against before, failed %v", v, other, !passed)
	}
	want := "gate slower<5%: passed, " + other + " against before"
	if !passed {
		want = "gate slower<5%: FAILED, " + other + " against before"
	}
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
}

// TestStudyStatusJSON: `study status --json` prints the plan and each cell's
// state as the store holds it, counted the way the text counts them, and a
// study not started as all to run. clitest.Run validates each document
// against `schema study-status`.
func TestStudyStatusJSON(t *testing.T) {
	dir := t.TempDir()
	file, results := filepath.Join(dir, "s.yaml"), filepath.Join(dir, "results.db")
	spec := `name: states
targets:
  - {name: base, dsn: "host=127.0.0.1 port=1 user=x dbname=a"}
  - {name: other, dsn: "host=127.0.0.1 port=1 user=x dbname=b"}
workloads: [{name: rw, kind: tpcb}]
matrix: {clients: [4], duration: 1s, repeat: 3}
`
	s := writeStudy(t, file, spec)

	code, out, errOut := run(t, "study", "status", file, "--json", "--results", results)
	status := readStatus(t, code, out, errOut)
	if status.Started || status.LastRun != nil || status.Planned != 6 || status.ToRun != 6 || status.Made != 0 || len(status.Cells) != 6 {
		t.Errorf("not started: %+v; want 6 cells to run", status)
	}

	// What each cell holds in the store: its run's status, and whether the
	// file has changed it since.
	states := map[string]struct {
		status     string
		edited     bool
		unfinished bool
	}{
		"base/rw/c4/r1":  {status: store.StatusCompleted},
		"other/rw/c4/r1": {status: store.StatusCompleted},
		"base/rw/c4/r2":  {status: store.StatusFailed, unfinished: true},
		"other/rw/c4/r2": {status: store.StatusRunning, unfinished: true},
		"base/rw/c4/r3":  {status: store.StatusCompleted, edited: true},
		// other/rw/c4/r3 is not made.
	}
	id := seedStudy(t, results, s, file, spec)
	runIDs := map[string]int64{}
	for _, c := range s.Plan() {
		want, ok := states[c.Key]
		if !ok {
			continue
		}
		runIDs[c.Key] = seedStore(t, results, storedRun{target: c.Target.DSN, version: "16.4", tps: 1000, p99: 2,
			labels: map[string]string{"target": c.Target.Name}, unfinished: want.unfinished})[0]
		fingerprint := c.Fingerprint
		if want.edited {
			fingerprint = "0000000000000000"
		}
		setStudyRun(t, results, id, store.StudyRun{Key: c.Key, Fingerprint: fingerprint, RunID: runIDs[c.Key], Status: want.status})
	}
	loaded := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	setStudyDataset(t, results, id, store.Dataset{Target: "base", Name: "tpcb-1", Fingerprint: "f", Loaded: loaded, LoadS: 12.5})

	code, out, errOut = run(t, "study", "status", file, "--json", "--results", results)
	status = readStatus(t, code, out, errOut)
	if status.Study != "states" || !status.Started || status.LastRun == nil || status.FileChanged ||
		!slices.Equal(status.Targets, []string{"base", "other"}) || !slices.Equal(status.Workloads, []string{"rw"}) {
		t.Errorf("status %+v: want study states of base and other, started, the file as last run", status)
	}
	counts := []int{status.Planned, status.Made, status.ToRun, status.Running, status.Interrupted, status.Failed, status.Incomplete, status.Edited}
	if !slices.Equal(counts, []int{6, 2, 1, 1, 0, 1, 0, 1}) {
		t.Errorf("planned, made, to run, running, interrupted, failed, incomplete, edited = %v; want 6 2 1 1 0 1 0 1", counts)
	}
	for _, c := range status.Cells {
		want, ok := states[c.Key]
		state, runID := want.status, runIDs[c.Key]
		switch {
		case !ok:
			state = studyrun.StateToRun
		case want.edited:
			state = studyrun.StateEdited
		}
		if c.State != state || (runID == 0) != (c.RunID == nil) || c.RunID != nil && *c.RunID != runID || c.Clients != 4 {
			t.Errorf("cell %s: %+v, want state %q and run %d", c.Key, c, state, runID)
		}
	}
	if len(status.Datasets) != 1 || status.Datasets[0].Target != "base" || status.Datasets[0].LoadSecs != 12.5 || !status.Datasets[0].Loaded.Equal(loaded) {
		t.Errorf("datasets %+v: want tpcb-1 on base", status.Datasets)
	}

	// The text counts the same.
	code, out, errOut = run(t, "study", "status", file, "--results", results)
	if code != cli.ExitOK || !strings.Contains(out, "6 runs, 2 made, 1 to run, 1 running, to run again, 1 failed, to run again, 1 edited since") {
		t.Errorf("study status: exit %d\n%s%s", code, out, errOut)
	}
}

// readStatus is the status a `study status --json` printed.
func readStatus(t *testing.T, code int, out, errOut string) studyrun.Status {
	t.Helper()
	if code != cli.ExitOK {
		t.Fatalf("study status --json: exit %d\n%s%s", code, out, errOut)
	}
	var s studyrun.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return s
}

// seedStudy records the study s, from file holding spec, in the results store
// and returns its id.
func seedStudy(t *testing.T, results string, s *study.Study, file, spec string) int64 {
	t.Helper()
	st, err := store.Open(t.Context(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	state := &store.Study{Name: s.Name, File: file, Spec: spec, Updated: time.Now()}
	if err := st.SaveStudy(t.Context(), state); err != nil {
		t.Fatal(err)
	}
	return state.ID
}

func setStudyRun(t *testing.T, results string, id int64, r store.StudyRun) {
	t.Helper()
	withStore(t, results, func(st *store.Store) error { return st.SetStudyRun(t.Context(), id, r) })
}

func setStudyDataset(t *testing.T, results string, id int64, d store.Dataset) {
	t.Helper()
	withStore(t, results, func(st *store.Store) error { return st.SetStudyDataset(t.Context(), id, d) })
}

// withStore calls f with the results store at results open.
func withStore(t *testing.T, results string, f func(*store.Store) error) {
	t.Helper()
	st, err := store.Open(t.Context(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := f(st); err != nil {
		t.Fatal(fmt.Errorf("results store %s: %w", results, err))
	}
}
