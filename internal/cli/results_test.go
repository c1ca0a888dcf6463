package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
)

// storedRun is a finished run written straight into a results store, for tests of
// the commands that only read.
type storedRun struct {
	target, version, script string
	tps, p99                float64
	labels                  map[string]string
	process                 store.Process // zero: this process
	unfinished              bool
}

// seedStore writes the runs into a new results store at path and returns their ids.
func seedStore(t *testing.T, path string, runs ...storedRun) []int64 {
	t.Helper()
	st, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var ids []int64
	for i, r := range runs {
		run := &store.Run{Target: r.target, Workload: "tpcb", Script: r.script, Clients: 8, ServerVersion: r.version,
			Labels: r.labels, Started: start.Add(time.Duration(i) * time.Minute), Process: r.process}
		if run.Script == "" {
			run.Script = "tpcb-like@1"
		}
		if _, err := st.CreateRun(t.Context(), run); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
		if r.unfinished {
			continue
		}
		sum, err := json.Marshal(map[string]any{"run_id": run.ID, "workload": "tpcb", "script": run.Script, "clients": 8,
			"status": store.StatusCompleted, "tps": r.tps, "latency_ms": map[string]float64{"p99": r.p99}})
		if err != nil {
			t.Fatal(err)
		}
		run.Ended, run.Status, run.Summary = run.Started.Add(time.Minute), store.StatusCompleted, sum
		if err := st.FinishRun(t.Context(), run); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// fileState is a file's bytes, mode and companions, which reading must not change.
func fileState(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return "missing"
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("%d bytes %x mode %v", len(data), data[:min(len(data), 64)], fi.Mode().Perm())
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			s += " " + suffix
		}
	}
	return s
}

// TestReadersLeaveNonStores: the commands that only read refuse a file that is not
// a results store, with one line naming it, and leave it as it was; none of them
// makes a store where there is none.
func TestReadersLeaveNonStores(t *testing.T) {
	dir := t.TempDir()
	studyFile := filepath.Join(dir, "s.yaml")
	clitest.WriteFile(t, studyFile, `name: s
targets: [{name: a, dsn: "host=127.0.0.1 port=1 user=x dbname=x"}]
workloads: [{kind: tpcb}]
matrix: {clients: [1], duration: 1s}
`)
	readers := [][]string{
		{"runs"}, {"show", "1"}, {"show", "1", "--json"}, {"compare", "--run", "1"}, {"export", "--run", "1", "--format", "json"},
		{"report", "--run", "1"}, {"report", "--run", "1", "-o", filepath.Join(dir, "r.html")}, {"study", "status", studyFile},
	}
	files := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "is not a pgbakeoff results store (the file is empty)"},
		{"text", []byte(strings.Repeat("some notes\n", 40)), "is not a pgbakeoff results store (not a SQLite database)"},
	}
	for _, f := range files {
		for _, args := range readers {
			t.Run(f.name+"/"+strings.Join(args[:1], " "), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "results.db")
				if err := os.WriteFile(path, f.data, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, 0o644); err != nil {
					t.Fatal(err)
				}
				before := fileState(t, path)
				code, _, errOut := run(t, append(args, "--results", path)...)
				lines := strings.Split(strings.TrimSpace(errOut), "\n")
				if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], path+" "+f.want) || strings.Contains(errOut, "goroutine") {
					t.Errorf("%v: exit %d, stderr %q; want exit 1 and one line with %q", args, code, errOut, path+" "+f.want)
				}
				if after := fileState(t, path); after != before {
					t.Errorf("%v changed the file: %s -> %s", args, before, after)
				}
			})
		}
	}
	for _, args := range append(readers, []string{"study", "plan", studyFile}) {
		t.Run("missing/"+strings.Join(args[:1], " "), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.db")
			run(t, append(args, "--results", path)...)
			if _, err := os.Stat(path); err == nil {
				t.Errorf("%v made a results store", args)
			}
		})
	}
}

// TestReadOnlyStore: a store that cannot be written, by its mode or because its
// file system is read-only, is listed and reported on, and left as it was.
func TestReadOnlyStore(t *testing.T) {
	for _, how := range []string{"mode 0400", "read-only file system"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			if how == "read-only file system" {
				// Root ignores permission bits; a read-only mount stops everyone.
				if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
					t.Skipf("cannot mount a file system here (%v: %s)", err, strings.TrimSpace(string(out)))
				}
				t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
			}
			path := filepath.Join(dir, "results.db")
			ids := seedStore(t, path,
				storedRun{target: "host=db1 dbname=bench", version: "16.4", tps: 1000, p99: 2},
				storedRun{target: "host=db2 dbname=bench", version: "17.2", tps: 1100, p99: 1.8})
			if how == "mode 0400" {
				if err := os.Chmod(path, 0o400); err != nil {
					t.Fatal(err)
				}
			} else if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
				t.Fatalf("remount read-only: %v: %s", err, out)
			}
			before := fileState(t, path)
			code, out, errOut := run(t, "runs", "--results", path)
			if code != 0 || !strings.Contains(out, "db2") {
				t.Errorf("runs: exit %d\n%s%s", code, out, errOut)
			}
			code, out, errOut = run(t, "report", "--run", fmt.Sprintf("%d,%d", ids[0], ids[1]), "--results", path)
			if code != 0 || !strings.Contains(out, "<html") {
				t.Errorf("report: exit %d, stderr %s", code, errOut)
			}
			if after := fileState(t, path); after != before {
				t.Errorf("reading changed the store: %s -> %s", before, after)
			}
		})
	}
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestAbandonedRunShown: a run left running by a process that is gone is shown as
// interrupted by the reading commands, with a warning, and the store is not changed.
func TestAbandonedRunShown(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	pid := deadPID(t)
	results := filepath.Join(t.TempDir(), "results.db")
	ids := seedStore(t, results,
		storedRun{target: "host=db1 dbname=bench", version: "16.4", tps: 1000, p99: 2},
		storedRun{target: "host=db1 dbname=bench", version: "16.4", unfinished: true, process: store.Process{PID: pid, Host: host}})
	before := fileState(t, results)
	warning := fmt.Sprintf("warning: run %d was left running by a process that is gone (pid %d on host %s)", ids[1], pid, host)

	code, out, errOut := run(t, "runs", "--results", results)
	row := regexp.MustCompile(fmt.Sprintf(`(?m)^\s*%d\s.*\sinterrupted\s`, ids[1]))
	if code != 0 || !row.MatchString(out) || !strings.Contains(errOut, warning) {
		t.Errorf("runs: exit %d, want run %d interrupted and %q\n%s%s", code, ids[1], warning, out, errOut)
	}
	code, out, errOut = run(t, "show", fmt.Sprint(ids[1]), "--json", "--results", results)
	var shown map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown["status"] != store.StatusInterrupted {
		t.Errorf("show --json: exit %d, want status interrupted\n%s%s", code, out, errOut)
	}
	if after := fileState(t, results); after != before {
		t.Errorf("reading changed the store: %s -> %s", before, after)
	}
}

// TestRunsTable: `runs` fits 100 columns, shows the server version and names the
// target by its label or a short form without secrets or connection options.
func TestRunsTable(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results.db")
	seedStore(t, results,
		storedRun{target: "host=/var/run/postgresql/sockets-of-a-long-directory-name port=5432 user=benchmark dbname=bench_long_name password=xxxxx sslmode=disable application_name=x",
			version: "16.4 (Debian 16.4-1.pgdg120+2)", script: "tpcb-like@3,select-only@1,simple-update@1", tps: 123456.7, p99: 1234.567},
		storedRun{target: "postgres://bench:xxxxx@db2.example.com:6432/bench?sslmode=require", version: "17.2", tps: 1000, p99: 2},
		storedRun{target: "host=db3 port=5432 user=bench dbname=bench sslmode=disable", version: "15.8", tps: 900, p99: 2.5,
			labels: map[string]string{"target": "pg15-tuned"}},
		storedRun{target: "host=db4 dbname=bench", version: "18beta1", unfinished: true, process: store.Process{PID: 1, Host: "elsewhere"}},
		storedRun{target: "postgres://bench:xxxxx@h1.example.com:5432,h2.example.com:5432/multi", version: "17.2", tps: 1000, p99: 2},
	)
	code, out, errOut := run(t, "runs", "--results", results)
	if code != 0 {
		t.Fatalf("runs: exit %d\n%s", code, errOut)
	}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	for _, want := range []string{"VERSION", "16.4", "17.2", "15.8", "18beta1", "pg15-tuned", "db2.example.com", "bench_long_name", "db4/bench", "h1.exam"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"xxxxx", "password", "sslmode", "application_name", "host=", "Debian", ":5432,"} {
		if strings.Contains(out, bad) {
			t.Errorf("runs output shows %q:\n%s", bad, out)
		}
	}
}

// TestRunsTableLocalServers: runs on different local servers, all on their
// database postgres over a socket, are told apart by server name and port, and
// targets whose short names would be alike by more of their DSN.
func TestRunsTableLocalServers(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results.db")
	var runs []storedRun
	for i, name := range []string{"pg11", "pg15", "pg16", "pg18"} {
		runs = append(runs, storedRun{target: fmt.Sprintf("host=/var/lib/pgbakeoff/servers/%s/sock port=%d user=postgres dbname=postgres sslmode=disable", name, 56100+i),
			version: "16.4", tps: 1000, p99: 2})
	}
	for _, dir := range []string{"/tmp/pgbk-123", "/tmp/pgbk-456"} {
		runs = append(runs, storedRun{target: "host=" + dir + " port=5432 user=postgres dbname=postgres", version: "16.4", tps: 1000, p99: 2})
	}
	seedStore(t, results, runs...)
	code, out, errOut := run(t, "runs", "--results", results)
	if code != 0 {
		t.Fatalf("runs: exit %d\n%s", code, errOut)
	}
	targets := map[string]bool{}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n")[1:] {
		f := strings.Fields(l)
		targets[f[len(f)-1]] = true
	}
	if len(targets) != len(runs) {
		t.Errorf("runs names %d targets for %d different ones:\n%s", len(targets), len(runs), out)
	}
	for i, name := range []string{"pg11", "pg15", "pg16", "pg18"} {
		if want := fmt.Sprintf("%s:%d/postgres", name, 56100+i); !targets[want] {
			t.Errorf("runs does not name the server %s as %q:\n%s", name, want, out)
		}
	}
}

// TestReportOutputFormat: report writes HTML or Markdown; an output file named
// for another format is refused, naming the ones it can write, and not made.
func TestReportOutputFormat(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results.db")
	ids := seedStore(t, results, storedRun{target: "host=db1 dbname=bench", version: "16.4", tps: 1000, p99: 2})
	id := fmt.Sprint(ids[0])
	for _, name := range []string{"report.pdf", "report.docx", "report.txt"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, name)
			code, _, errOut := run(t, "report", "--run", id, "--results", results, "-o", out)
			ext := filepath.Ext(name)
			if code != 2 || !strings.Contains(errOut, ext) || !strings.Contains(errOut, ".html") || !strings.Contains(errOut, ".md") {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %s and the formats report writes", code, errOut, ext)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was written (stat error %v)", name, err)
			}
		})
	}
	for _, tc := range []struct{ name, format, want string }{
		{"report.html", "", "<html"}, {"report.htm", "", "<html"}, {"report.md", "", "# "}, {"report.markdown", "", "# "}, {"report", "", "<html"},
		{"report.out", "markdown", "# "},
	} {
		t.Run(tc.name+"/"+tc.format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tc.name)
			args := []string{"report", "--run", id, "--results", results, "-o", out}
			if tc.format != "" {
				args = append(args, "--format", tc.format)
			}
			if code, _, errOut := run(t, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if data, err := os.ReadFile(out); err != nil || !bytes.Contains(data, []byte(tc.want)) {
				t.Errorf("%s does not hold %q (read error %v)", tc.name, tc.want, err)
			}
		})
	}
}

// TestCompareNames: compared plain runs are named by their distinguishing labels,
// else by the part of their targets that differs, never by a whole DSN.
func TestCompareNames(t *testing.T) {
	const sock = "host=/tmp/pgbakeoff-sockets port=5432 user=postgres sslmode=disable dbname="
	tests := []struct {
		name string
		runs []storedRun
		want []string
	}{
		{"databases differ", []storedRun{{target: sock + "bench_a"}, {target: sock + "bench_b"}}, []string{"bench_a", "bench_b"}},
		{"hosts differ", []storedRun{{target: "host=db1.example.com port=5432 dbname=bench"}, {target: "host=db2.example.com port=5432 dbname=bench"}},
			[]string{"db1.example.com", "db2.example.com"}},
		{"labels differ", []storedRun{{target: sock + "bench", labels: map[string]string{"variant": "default"}},
			{target: sock + "bench", labels: map[string]string{"variant": "tuned"}}}, []string{"default", "tuned"}},
		{"a label on one run", []storedRun{{target: sock + "bench"}, {target: sock + "bench", labels: map[string]string{"variant": "tuned"}}},
			[]string{"no variant", "tuned"}},
		{"name labels", []storedRun{{target: sock + "bench_a", labels: map[string]string{"name": "pg16"}},
			{target: sock + "bench_b", labels: map[string]string{"name": "pg17"}}}, []string{"pg16", "pg17"}},
		{"only options differ", []storedRun{{target: sock + "bench"}, {target: strings.Replace(sock, "disable", "prefer", 1) + "bench"}},
			[]string{"bench #1", "bench #2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results.db")
			for i := range tc.runs {
				tc.runs[i].version, tc.runs[i].tps, tc.runs[i].p99 = "16.4", float64(1000+100*i), 2
			}
			ids := seedStore(t, results, tc.runs...)
			code, out, errOut := run(t, "compare", "--run", fmt.Sprintf("%d,%d", ids[0], ids[1]), "--results", results)
			if code != 0 {
				t.Fatalf("compare: exit %d\n%s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("compare does not name %q:\n%s", w, out)
				}
			}
			for _, bad := range []string{"host=", "sslmode", "user=postgres"} {
				if strings.Contains(out, bad) {
					t.Errorf("compare output shows %q:\n%s", bad, out)
				}
			}
		})
	}
}

// writeStudy writes spec to file and parses it, as study run would.
func writeStudy(t *testing.T, file, spec string) *study.Study {
	t.Helper()
	clitest.WriteFile(t, file, spec)
	s, errs := study.ParseAll(file, []byte(spec))
	if s == nil || len(errs) > 0 {
		t.Fatalf("study: %v", errs.Err())
	}
	return s
}

// TestStudyVerdict: the study's comparison table gives each ratio the verdict that
// compare gives: faster or slower only beyond the noise, else within noise.
func TestStudyVerdict(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "v.yaml")
	results := filepath.Join(dir, "results.db")
	spec := `name: verdict
targets:
  - {name: base, dsn: "host=127.0.0.1 port=1 user=x dbname=a"}
  - {name: fast, dsn: "host=127.0.0.1 port=1 user=x dbname=b"}
  - {name: same, dsn: "host=127.0.0.1 port=1 user=x dbname=c"}
workloads: [{name: rw, kind: tpcb}]
matrix: {clients: [4], duration: 1s, repeat: 3}
`
	s := writeStudy(t, file, spec)
	tps := map[string][]float64{"base": {1000, 1010, 990}, "fast": {1500, 1520, 1480}, "same": {1005, 995, 1012}}
	st, err := store.Open(t.Context(), results)
	if err != nil {
		t.Fatal(err)
	}
	state := &store.Study{Name: s.Name, File: file, Spec: spec, Updated: time.Now()}
	if err := st.SaveStudy(t.Context(), state); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, c := range s.Plan() {
		ids := seedStore(t, results, storedRun{target: c.Target.DSN, version: "16.4", tps: tps[c.Target.Name][c.Repeat-1], p99: 2,
			labels: map[string]string{"target": c.Target.Name}})
		st, err := store.Open(t.Context(), results)
		if err != nil {
			t.Fatal(err)
		}
		err = st.SetStudyRun(t.Context(), state.ID, store.StudyRun{Key: c.Key, Fingerprint: c.Fingerprint, RunID: ids[0], Status: store.StatusCompleted})
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := run(t, "study", "status", file, "--results", results)
	if code != 0 {
		t.Fatalf("study status: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`1\.50x faster`),
		regexp.MustCompile(`1\.00x within noise`),
	} {
		if !want.MatchString(out) {
			t.Errorf("study status lacks %s:\n%s", want, out)
		}
	}
}
