package studyrun_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/studyrun"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// runner is a Runner on a results store in dir, its output in out.
func runner(dir string, out *bytes.Buffer) *studyrun.Runner {
	results := filepath.Join(dir, "results.db")
	return &studyrun.Runner{Results: results,
		OpenStore:   func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, results) },
		OpenReading: func(ctx context.Context) (*store.Store, error) { return store.OpenReadOnly(ctx, results) },
		Out:         out, Log: out, Now: time.Now}
}

// TestRunner makes a study of two workloads on one existing server through the
// library, as the command line does: the plan, the runs in the store with the
// study's labels, the status, and a second Run that finds everything made.
func TestRunner(t *testing.T) {
	pgtest.Long(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "lib.yaml")
	spec := fmt.Sprintf(`name: lib
targets:
  - name: here
    dsn: %q
    labels: {disk: ssd}
workloads:
  - name: rw
    kind: tpcb
    load: {scale: 1}
    dataset: clone
  - name: points
    kind: sysbench
    load: {tables: 1, table-size: 1000}
    run: {script: oltp_point_select}
matrix:
  clients: [2]
  warmup: 0s
  duration: 1s
  repeat: 1
`, pgtest.DSN(t))
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sr := runner(dir, &out)
	if err := sr.Plan(t.Context(), file); err != nil {
		t.Fatalf("plan: %v\n%s", err, out.String())
	}
	if got := out.String(); !strings.Contains(got, "study lib: 1 targets x 2 workloads, 2 runs") || !strings.Contains(got, "TPC-B scale 1") {
		t.Errorf("plan:\n%s", got)
	}
	out.Reset()
	if err := sr.Run(t.Context(), file); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"preflight:", "loading TPC-B scale 1 into database pgbakeoff_lib_", "loading sysbench 1 table of 1000 rows",
		"[1/2] here/rw/c2/r1", "[2/2] here/points/c2/r1", " tps, p99 ", " qps, p95 "} {
		if !strings.Contains(got, want) {
			t.Errorf("study run output lacks %q:\n%s", want, got)
		}
	}
	st, err := store.OpenReadOnly(t.Context(), sr.Results)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(t.Context(), store.Filter{})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs stored, want 2", len(runs))
	}
	for _, r := range runs {
		if r.Status != store.StatusCompleted || r.Labels["study"] != "lib" || r.Labels["target"] != "here" || r.Labels["disk"] != "ssd" || r.Clients != 2 {
			t.Errorf("run %d: %s, labels %v, %d clients", r.ID, r.Status, r.Labels, r.Clients)
		}
	}

	out.Reset()
	if err := sr.Status(t.Context(), file); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "2 runs, 2 made") {
		t.Errorf("status:\n%s", got)
	}
	out.Reset()
	if err := sr.Run(t.Context(), file); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "all 2 runs were made before") || strings.Contains(got, "preflight:") {
		t.Errorf("second run:\n%s", got)
	}
}

// TestRunnerRefusesBadFile: every problem of the file is found before anything
// connects, as a usage error naming each.
func TestRunnerRefusesBadFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	spec := `name: bad
targets: [{name: nowhere, dsn: "host=127.0.0.1 port=1"}]
workloads:
  - {kind: tpcb, load: {scale: 0}, run: {script: nope, max_tries: many}}
  - {kind: sysbench, load: {tables: 1}, run: {dist: pareto:7, max_tries: 0, clients: 3}}
matrix: {clients: [1], duration: 1s}
`
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := runner(dir, &out).Run(t.Context(), file)
	if err == nil {
		t.Fatal("a bad study ran")
	}
	// Each at its key, named as the file names it: a common setting that is not
	// a number, one out of range, one the matrix sets, and the workloads' own.
	for _, want := range []string{":4:25: workload tpcb: load: scale must be at least 1", `unknown script "nope"`,
		`:4:56: run: max_tries: "many" is not a whole number`, ":5:47: workload sysbench: run: dist:",
		":5:63: workload sysbench: run: max_tries must be at least 1, got 0", ":5:77: run: clients is set by the study"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if out.Len() != 0 || fileExists(filepath.Join(dir, "results.db")) {
		t.Errorf("a bad study wrote output or a store: %q", out.String())
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestStudyScriptFiles runs a pgbench script file named in a study from the study
// file's directory, with its -D variables, on a database that is kept.
func TestStudyScriptFiles(t *testing.T) {
	dir := t.TempDir()
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table hits (v int)")
	db := pgtest.Query(t, dsn, "select current_database()")
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "\\set v random(1, :top)\nINSERT INTO hits VALUES (:v);\n"
	if err := os.WriteFile(filepath.Join(dir, "scripts", "hit.sql"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.yaml")
	spec := fmt.Sprintf(`name: files
targets:
  - name: here
    dsn: %q
workloads:
  - name: hits
    kind: pgbench
    database: %s
    dataset: keep
    run: {file: [scripts/hit.sql@2], define: [top=7]}
matrix: {clients: [2], warmup: 0s, duration: 1s, repeat: 1}
`, pgtest.DSN(t), db)
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// Run from elsewhere: the script is found from the study file's directory.
	if err := runner(dir, &out).Run(t.Context(), file); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got := pgtest.Query(t, dsn, "select count(*) > 0 and bool_and(v between 1 and 7) from hits"); got != "t" {
		t.Errorf("rows of the script: %s\n%s", got, out.String())
	}
}

// TestStudyFaultsChecked: a study's faults are checked at their place in the
// file before anything connects: an unknown kind, a time outside the runs, a
// command not on the PATH, and a crash of a target the study does not run.
func TestStudyFaultsChecked(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "faults.yaml")
	spec := `name: faults
targets: [{name: remote, dsn: "host=127.0.0.1 port=1"}]
workloads:
  - {kind: tpcb, load: {scale: 1}, fault: [{at: 5s, kind: meltdown}, {at: 2m, kind: command, command: "true"}]}
  - {kind: sysbench, name: sb, load: {tables: 1}, fault: {at: 5s, kind: crash}}
  - {kind: tpcc, load: {warehouses: 1}, fault: {at: 5s, kind: command, command: "no-such-command --now"}}
matrix: {clients: [1], duration: 10s}
`
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runner(dir, &bytes.Buffer{}).Run(t.Context(), file)
	if err == nil {
		t.Fatal("a study with bad faults ran")
	}
	for _, want := range []string{`:4:44: workload tpcb: fault kind "meltdown" is unknown`,
		":4:70: workload tpcb: fault command at 2m0s (true) is outside the run, which lasts 10s",
		":5:58: workload sb: fault crash needs a local: target, and remote is not one",
		`:6:48: workload tpcc: fault command "no-such-command" cannot be run`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
