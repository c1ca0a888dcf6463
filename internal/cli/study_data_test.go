package cli_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// A script workload whose dataset: names a TPC-B workload runs on the tables
// that workload loaded, in the database the study made for them.
func TestStudyScriptOnAnotherWorkloadsData(t *testing.T) {
	pgtest.Long(t)
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "balance.sql"),
		"\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
	file := filepath.Join(dir, "shared.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: shared-data
targets: [{name: here, dsn: %q}]
workloads:
  - {name: read-write, kind: tpcb, load: {scale: 1}, run: {script: select-only}}
  - {name: balance, kind: pgbench, dataset: read-write, run: {file: [balance.sql]}}
matrix: {clients: [1], warmup: 0s, duration: 1s, repeat: 1}
`, pgtest.DSN(t)))
	results := filepath.Join(dir, "results.db")
	code, out, errOut := run(t, "study", "run", file, "--results", results, "--progress", "0")
	if code != 0 {
		t.Fatalf("study run: exit %d\n%s%s", code, out, errOut)
	}
	if n := strings.Count(out, "loading TPC-B scale 1"); n != 1 {
		t.Errorf("the TPC-B data was loaded %d times, want once:\n%s", n, out)
	}
	for _, want := range []string{"here/read-write/c1/r1", "here/balance/c1/r1"} {
		if !regexp.MustCompile(regexp.QuoteMeta(want) + `\n +run \d+: [\d.]+ tps`).MatchString(out) {
			t.Errorf("run %s did not complete:\n%s%s", want, out, errOut)
		}
	}
	if strings.Contains(errOut, "failed") {
		t.Errorf("a run failed:\n%s", errOut)
	}
}

// A workload that fails the same way on every target stops the study with one
// message, not one per planned run, and the runs after it are not attempted.
func TestStudyStopsOnTheSameFailureEverywhere(t *testing.T) {
	dsn := pgtest.NewDatabase(t) // no pgbench tables
	db := pgtest.Query(t, dsn, "select current_database()")
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "balance.sql"), "SELECT abalance FROM pgbench_accounts WHERE aid = 1;\n")
	file := filepath.Join(dir, "broken.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: broken
targets: [{name: a, dsn: %q}, {name: b, dsn: %q}]
workloads:
  - {name: balance, kind: pgbench, database: %s, dataset: keep, run: {file: [balance.sql]}}
matrix: {clients: [1, 2], warmup: 0s, duration: 1s, repeat: 2}
`, dsn, dsn, db))
	code, out, errOut := run(t, "study", "run", file, "--results", filepath.Join(dir, "results.db"), "--progress", "0")
	if code == 0 {
		t.Fatalf("study run of a workload without its tables: exit 0\n%s%s", out, errOut)
	}
	want := `workload balance failed the same way in all 2 of its runs, on every target`
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, `relation "pgbench_accounts" does not exist`) {
		t.Errorf("stderr does not say %q with the cause:\n%s", want, errOut)
	}
	if strings.Contains(out, "[3/8]") {
		t.Errorf("the study went on after the same failure on both targets:\n%s", out)
	}
}
