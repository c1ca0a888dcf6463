package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/studyrun"
)

// cancelOn is a writer that cancels the command's context once its output
// contains a marker: a Ctrl-C at a known point of a study.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.cancel != nil && strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return n, err
}

func runInterrupted(t *testing.T, marker string, args ...string) (int, string, string) {
	t.Helper()
	out := &cancelOn{marker: marker}
	var stderr bytes.Buffer
	env := &cli.Env{Stdout: out, Stderr: &stderr, Getenv: os.Getenv, Now: time.Now, Args: args,
		Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			out.mu.Lock()
			out.cancel = cancel
			out.mu.Unlock()
			return ctx, cancel
		}}
	code := cli.Main(env)
	return code, out.buf.String(), stderr.String()
}

// miniStudy has two local servers of the version the tests use, so nothing is
// downloaded.
func miniStudy(t *testing.T, duration string) string {
	major := pgtest.Server(t).Major
	return fmt.Sprintf(`name: mini
targets:
  - name: small
    local: {version: "%d", settings: {max_connections: 20}}
    labels: {memory: small}
  - name: big
    local: {version: "%d", settings: {shared_buffers: 256MB, max_connections: 20}}
    labels: {memory: big}
workloads:
  - name: rw
    kind: tpcb
    load: {scale: 2}
    dataset: clone
    vacuum: analyze
  - name: ro
    kind: tpcb
    load: {scale: 2}
    run: {script: select-only}
    dataset: clone
matrix:
  clients: [2]
  warmup: 0s
  duration: %s
  repeat: 2
`, major, major, duration)
}

func TestStudy(t *testing.T) {
	pgtest.Long(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "mini.yaml")
	results := filepath.Join(dir, "results.db")
	servers := filepath.Join(dir, "servers")
	// The servers run as an unprivileged user when the tests run as root.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	clitest.WriteFile(t, file, miniStudy(t, "1s"))
	common := []string{"--results", results}

	code, out, errOut := run(t, append([]string{"study", "plan", file}, common...)...)
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"8 runs", "  1  small/rw/c2/r1\n", "  2  big/rw/c2/r1\n", "  3  big/rw/c2/r2\n", "  8  small/ro/c2/r2\n",
		"about 64.0 MB on disk on each target, 64.0 MB loaded in all"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}

	// Ctrl-C as the third run begins: two runs are made, the third is not.
	runArgs := append([]string{"study", "run", file, "--servers-dir", servers, "--progress", "0"}, common...)
	code, out, errOut = runInterrupted(t, "[3/8]", runArgs...)
	if code != cli.ExitInterrupted || !strings.Contains(errOut, "`study run` again") {
		t.Fatalf("interrupted study: exit %d, want %d\n%s%s", code, cli.ExitInterrupted, out, errOut)
	}
	for _, want := range []string{"preflight:", " * shared_buffers", " * label memory", "in-memory", "loading TPC-B scale 2 into database pgbakeoff_mini_tpcb_"} {
		if !strings.Contains(out, want) {
			t.Errorf("study run output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "loading TPC-B"); n != 2 {
		t.Errorf("loaded %d times, want once per target: rw and ro share their data\n%s", n, out)
	}
	// The interrupted study keeps its servers' data for the next `study run`.
	if !strings.Contains(errOut, "stays for `study run` to continue; `pgbakeoff server prune --servers-dir "+servers+"` removes it") {
		t.Errorf("the interrupted study does not say where its servers' data stays:\n%s", errOut)
	}
	for _, name := range []string{"study-mini-small", "study-mini-big"} {
		if _, err := os.Stat(filepath.Join(servers, name, "data", "PG_VERSION")); err != nil {
			t.Errorf("after the interruption: %v, want the data kept", err)
		}
	}
	first := clitest.StudyRuns(t, results, "mini")
	if first["small/rw/c2/r1"].Status != store.StatusCompleted || first["big/rw/c2/r1"].Status != store.StatusCompleted ||
		first["big/rw/c2/r2"].Status == store.StatusCompleted || len(first) > 3 {
		t.Fatalf("after the interruption the study has %+v; want the first two runs completed and the third not", first)
	}

	code, out, errOut = run(t, append([]string{"study", "status", file}, common...)...)
	if code != 0 || !strings.Contains(out, "8 runs, 2 made, ") {
		t.Errorf("status: exit %d\n%s%s", code, out, errOut)
	}
	checkStatusJSON(t, file, results, first)

	// Running again makes the other six runs, and loads nothing again.
	code, out, errOut = run(t, runArgs...)
	if code != 0 {
		t.Fatalf("resumed study: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "2 of 8 runs were made before") || strings.Contains(out, "loading TPC-B") || strings.Count(out, "] small/") != 3 {
		t.Errorf("resumed study did not continue where it stopped:\n%s", out)
	}
	again := clitest.StudyRuns(t, results, "mini")
	for _, key := range []string{"small/rw/c2/r1", "big/rw/c2/r1"} {
		if again[key].RunID != first[key].RunID {
			t.Errorf("%s was made again: run %d, before %d", key, again[key].RunID, first[key].RunID)
		}
	}
	if len(again) != 8 {
		t.Errorf("the study has %d runs, want 8", len(again))
	}
	if left, _ := filepath.Glob(filepath.Join(servers, "*")); len(left) != 0 {
		t.Errorf("the finished study left %q", left)
	}
	for key, r := range again {
		if r.Status != store.StatusCompleted {
			t.Errorf("%s: %s", key, r.Status)
		}
	}
	table := regexp.MustCompile(`(?m)^\s+rw\s+2\s+tps\s+\d+\s+\d+-\d+ \(n=2\)\s+\d+\s+\d+-\d+ \(n=2\)\s+\d\.\d\dx (faster|slower|within noise( \(~?\d+\+? more runs?\))?)$`)
	if !table.MatchString(out) {
		t.Errorf("no comparison row for rw at 2 clients:\n%s", out)
	}

	// Every run was sampled and judged.
	st, err := store.Open(t.Context(), results)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Run(t.Context(), again["big/ro/c2/r2"].RunID)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Samples) == 0 {
		t.Error("the run has no server samples")
	}
	if d.Labels["study"] != "mini" || d.Labels["target"] != "big" || d.Labels["memory"] != "big" {
		t.Errorf("run labels %v", d.Labels)
	}
	if !strings.Contains(d.Target, "dbname=pgbakeoff_mini_tpcb_") {
		t.Errorf("run target %q does not name the dataset's database", d.Target)
	}

	checkReports(t, dir, results)

	// A finished study does nothing more, not even start its servers or load; an edit
	// that changes finished runs is refused.
	code, out, errOut = run(t, runArgs...)
	if code != 0 || !strings.Contains(out, "all 8 runs were made before") || strings.Contains(out, "] small/") ||
		strings.Contains(out, "preflight") || strings.Contains(out, "loading") {
		t.Errorf("finished study ran again: exit %d\n%s%s", code, out, errOut)
	}
	clitest.WriteFile(t, file, miniStudy(t, "2s"))
	code, _, errOut = run(t, runArgs...)
	if code != cli.ExitUsage || !strings.Contains(errOut, "changed what finished runs measured") || !strings.Contains(errOut, "--restart") {
		t.Errorf("edited study: exit %d, stderr %s", code, errOut)
	}
}

// checkStatusJSON checks `study status --json` of the interrupted mini study
// against what the store holds of it (first): each cell's state and run, and
// the datasets both targets loaded.
func checkStatusJSON(t *testing.T, file, results string, first map[string]store.StudyRun) {
	t.Helper()
	code, out, errOut := run(t, "study", "status", file, "--json", "--results", results)
	status := readStatus(t, code, out, errOut)
	if status.Study != "mini" || status.Planned != 8 || status.Made != 2 || len(status.Cells) != 8 ||
		!slices.Equal(status.Targets, []string{"small", "big"}) || !slices.Equal(status.Workloads, []string{"rw", "ro"}) {
		t.Errorf("status --json: %+v; want mini's 8 cells, 2 made", status)
	}
	for _, c := range status.Cells {
		d, ok := first[c.Key]
		state := studyrun.StateToRun
		if ok {
			state = d.Status
		}
		if c.State != state || ok && d.RunID != 0 && (c.RunID == nil || *c.RunID != d.RunID) {
			t.Errorf("cell %s: %+v; the store holds %+v", c.Key, c, d)
		}
	}
	targets := map[string]bool{}
	for _, d := range status.Datasets {
		targets[d.Target] = true
	}
	if !targets["small"] || !targets["big"] || len(targets) != 2 {
		t.Errorf("datasets %+v: want those of small and big", status.Datasets)
	}
}

// TestStudyBadInput: every problem of a study, from the file's options to a target
// that cannot be reached or lacks connection slots, is reported together, with its
// position, before anything is loaded.
func TestStudyBadInput(t *testing.T) {
	dir := t.TempDir()
	dsn := pgtest.NewDatabase(t)
	file := filepath.Join(dir, "bad.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: bad
targets:
  - name: here
    dsn: %q
  - name: nowhere
    dsn: "host=127.0.0.1 port=1 user=x dbname=x connect_timeout=2"
workloads:
  - kind: tpcb
    load: {scale: 1}
    run: {scirpt: select-only, clients: 4}
matrix:
  clients: [500]
  warmpu: 1s
`, dsn))
	// The file's problems come first, all at once, before any target is tried.
	checkStudyErrors(t, file, []string{
		file + `:10:11: unknown run option "scirpt" for tpcb; did you mean "script"?`,
		file + ":10:32: run: clients is set by the study: set client counts in matrix.clients",
		file + `:13:3: unknown key "warmpu" in matrix; did you mean "warmup"?`,
	}, "target here")
	// Then the targets', all at once.
	clitest.WriteFile(t, file, fmt.Sprintf(`name: bad
targets:
  - name: here
    dsn: %q
  - name: nowhere
    dsn: "host=127.0.0.1 port=1 user=x dbname=x connect_timeout=2"
workloads:
  - kind: tpcb
    load: {scale: 1}
matrix:
  clients: [500]
`, dsn))
	checkStudyErrors(t, file, []string{
		file + ":3:5: target here: 500 clients need 503 connection slots",
		file + ":5:5: target nowhere: ",
	}, "")
	if got := pgtest.Query(t, dsn, "select count(*) from pg_database where datname like 'pgbakeoff_tpcb%'"); got != "0" {
		t.Errorf("%s datasets were created", got)
	}

	checkBadInput(t, []badInput{
		{"malformed yaml", []string{"study", "plan", writeTemp(t, "targets: [\n")}, ".yaml:", cli.ExitUsage},
		{"no file", []string{"study", "plan", filepath.Join(dir, "missing.yaml")}, "read study", cli.ExitUsage},
		{"unknown key", []string{"study", "plan", writeTemp(t, "targets: [{name: a, dsn: x}]\nworkloads: [{kind: tpcb}]\nmatrix: {warmpu: 1s}\n")},
			`did you mean "warmup"?`, cli.ExitUsage},
	})
}

// checkStudyErrors runs the study and checks that it fails at once with a line
// starting with each of want, none containing notWant, and nothing loaded.
func checkStudyErrors(t *testing.T, file string, want []string, notWant string) {
	t.Helper()
	code, out, errOut := run(t, "study", "run", file, "--results", filepath.Join(t.TempDir(), "r.db"))
	if code != cli.ExitUsage {
		t.Fatalf("exit %d, want %d\n%s%s", code, cli.ExitUsage, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, "pgbakeoff: "+w)
		}
		if !found {
			t.Errorf("stderr lacks a line starting %q:\n%s", w, errOut)
		}
	}
	if notWant != "" && strings.Contains(errOut, notWant) {
		t.Errorf("stderr says %q before the file is right:\n%s", notWant, errOut)
	}
	if strings.Contains(out, "loading") || strings.Contains(errOut, "goroutine") {
		t.Errorf("a bad study loaded data or crashed:\n%s%s", out, errOut)
	}
}

// TestStudyValidatedFirst: what a study would fail on only at a run, at a server's
// start or when reading prices is found before any server starts: an unknown
// script, a setting with a line break, a prices file that cannot be read.
func TestStudyValidatedFirst(t *testing.T) {
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers")
	cases := []struct {
		name, body, want string
	}{
		{"unknown script", "workloads: [{kind: tpcb, load: {scale: 1}, run: {script: nope}}]\n", `unknown script "nope"`},
		{"unknown sysbench script", "workloads: [{kind: sysbench, load: {tables: 1, table-size: 1000}, run: {script: oltp_nope}}]\n", `unknown sysbench script "oltp_nope"`},
		{"unknown tpcc mix", "workloads: [{kind: tpcc, load: {warehouses: 1}, run: {mix: nope}}]\n", `run: mix "nope" is unknown`},
		{"unknown protocol", "workloads: [{kind: tpcb, load: {scale: 1}, run: {protocol: fast}}]\n", `unknown protocol "fast"`},
		{"setting with a line break", "workloads: [{kind: tpcb, load: {scale: 1}}]\nsettings_line: x\n", "line break"},
		{"unreadable prices", "workloads: [{kind: tpcb, load: {scale: 1}}]\nprices: missing-prices.yaml\n", "cannot read the prices file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			local := `{version: "15"}`
			body := c.body
			if rest, ok := strings.CutSuffix(body, "settings_line: x\n"); ok {
				local, body = `{settings: {work_mem: "4MB\nfsync = off"}}`, rest
			}
			file := writeTemp(t, "name: validated\ntargets: [{name: a, local: "+local+"}]\n"+body+"matrix: {clients: [1], duration: 1s}\n")
			for _, args := range [][]string{{"plan"}, {"run", "--servers-dir", servers}} {
				cmd := args[0]
				code, out, errOut := run(t, append([]string{"study", cmd, file, "--results", filepath.Join(t.TempDir(), "r.db")}, args[1:]...)...)
				if code != cli.ExitUsage || !strings.Contains(errOut, c.want) {
					t.Errorf("study %s: exit %d, want %d and %q\n%s%s", cmd, code, cli.ExitUsage, c.want, out, errOut)
				}
			}
			if entries, _ := os.ReadDir(servers); len(entries) > 0 {
				t.Errorf("a server was started for a study that cannot run: %v", entries)
			}
		})
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "study.yaml")
	clitest.WriteFile(t, path, text)
	return path
}

// checkReports reads the mini study's results back as report, compare and export do.
func checkReports(t *testing.T, dir, results string) {
	t.Helper()
	code, out, errOut := run(t, "compare", "--study", "mini", "--baseline", "small", "--results", results)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"small", "big", "rw", "ro"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if len([]rune(line)) > 100 {
			t.Errorf("compare line of %d columns: %q", len([]rune(line)), line)
		}
	}

	// Plain runs by label: values of one key are alternatives.
	code, out, errOut = run(t, "compare", "--label", "memory=small", "--label", "memory=big", "--label", "workload=rw", "--results", results)
	if code != 0 || !strings.Contains(out, "small") || !strings.Contains(out, "big") || strings.Contains(out, "ro") && strings.Contains(out, "\nro") {
		t.Errorf("compare by labels: exit %d\n%s%s", code, out, errOut)
	}

	html := filepath.Join(dir, "report.html")
	if code, out, errOut := run(t, "report", "--study", "mini", "-o", html, "--results", results); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(b), "<svg") || strings.Contains(string(b), "<script src=") {
		t.Errorf("report.html: %v, %d bytes, want self-contained SVG charts", err, len(b))
	}

	md := filepath.Join(dir, "RESULTS.md")
	if code, out, errOut := run(t, "report", "--study", "mini", "-o", md, "--results", results); code != 0 {
		t.Fatalf("report markdown: exit %d\n%s%s", code, out, errOut)
	}
	b, _ = os.ReadFile(md)
	charts, _ := filepath.Glob(filepath.Join(dir, "RESULTS-charts", "*.svg"))
	if !strings.Contains(string(b), "| ") || len(charts) == 0 || !strings.Contains(string(b), "RESULTS-charts/") {
		t.Errorf("RESULTS.md has no tables or no linked charts (%d chart files)", len(charts))
	}

	code, out, errOut = run(t, "export", "--study", "mini", "--format", "csv", "--results", results)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, out, errOut)
	}
	if rows := strings.Count(strings.TrimSpace(out), "\n"); rows != 8 {
		t.Errorf("export csv has %d data rows, want 8 (one per run):\n%s", rows, out)
	}

	checkBadInput(t, []badInput{
		{"unknown study", []string{"compare", "--study", "nope", "--results", results}, `no study "nope"`, cli.ExitUsage},
		{"unknown baseline", []string{"compare", "--study", "mini", "--baseline", "huge", "--results", results}, `--baseline "huge" is not a target`, cli.ExitUsage},
		{"nothing selected", []string{"report", "--results", results}, "no runs selected", cli.ExitUsage},
		{"bad noise", []string{"compare", "--study", "mini", "--noise", "5", "--results", results}, "--noise 5 is out of range", cli.ExitUsage},
		{"bad format", []string{"export", "--study", "mini", "--format", "xml", "--results", results}, `--format "xml"`, cli.ExitUsage},
	})
}
