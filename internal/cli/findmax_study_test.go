package cli_test

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// A study whose search on one target finds no rate: every transaction of target
// b waits 600 ms, beyond the objective's p99 < 500ms at any rate, while target a
// carries every rate up to the ceiling (a transaction takes about 1 ms). study run,
// study status and compare say "no rate met" in the same words, and the rate
// target a found is compared with nothing: no 0 in a median, no ratio to 0.
func TestStudyFindMaxNone(t *testing.T) {
	pgtest.Long(t)
	t.Parallel() // waits on a throttle, using little CPU
	dsn := pgtest.NewDatabase(t)
	db := pgtest.Query(t, dsn, "select current_database()")
	dir := t.TempDir()
	// The delay comes from each target's connection: a setting of the session.
	clitest.WriteFile(t, filepath.Join(dir, "delay.sql"),
		"BEGIN;\nSELECT pg_advisory_xact_lock(4);\nSELECT pg_sleep(current_setting('bench.delay')::float);\nEND;\n")
	file := filepath.Join(dir, "none.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: none
targets:
  - {name: a, dsn: %q}
  - {name: b, dsn: %q}
workloads:
  - {name: locked, kind: pgbench, database: %s, dataset: keep, run: {file: [delay.sql]}}
objective: {slo: "p99<500ms", errors: "<1%%"}
matrix: {clients: [4], repeat: 1, warmup: 0s, duration: 1s, find_max: {ceiling: 200, resolution: 15%%, confirm: 1, budget: 8s}}
`, withDelay(t, pgtest.DSN(t), "0.001"), withDelay(t, pgtest.DSN(t), "0.6"), db))
	results := filepath.Join(dir, "r.db")
	code, out, errOut := run(t, "study", "run", file, "--results", results, "--progress", "0")
	if code != 0 {
		t.Fatalf("study run: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("study run:\n%s", out)
	none := "no rate met p99 < 500ms, errors <= 1%"
	if !strings.Contains(out, "max rate within the objective: none: "+none) {
		t.Errorf("study run does not say b's search found no rate:\n%s", out)
	}

	code, out, errOut = run(t, "study", "status", file, "--results", results)
	if code != 0 {
		t.Fatalf("study status: exit %d\n%s%s", code, out, errOut)
	}
	row := regexp.MustCompile(`(?m)^\s+locked\s+4\s+max tx/s within p99<500ms\s+(\d+)\s+\d+-\d+ \(n=1\)\s+` +
		regexp.QuoteMeta(none) + `\s+\(n=0, 1 found no rate\)\s+(.+)$`).FindStringSubmatch(out)
	if row == nil {
		t.Fatalf("study status has no row of a's rate beside b's %q:\n%s", none, out)
	}
	t.Logf("study status:\n%s", out)
	verdict := strings.TrimSpace(row[2])
	if verdict != "not compared: no rate found" {
		t.Errorf("b against a: %q, want it not compared", verdict)
	}
	// compare says the same, in its table of the searches.
	code, out, errOut = run(t, "compare", "--study", "none", "--results", results)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("compare:\n%s", out)
	_, table, _ := strings.Cut(out, "a find-max search found within the objective")
	cells := regexp.MustCompile(`(?m)^\s+4\s+([\d.,]+)\s+` + regexp.QuoteMeta(none) + `\s+` + regexp.QuoteMeta(verdict) + `$`).FindStringSubmatch(table)
	if cells == nil || cells[1] != row[1] && cells[1] != row[1]+".0" {
		t.Errorf("compare's searches differ from study status's (a %s, b %q, %q):\n%s", row[1], none, verdict, out)
	}
}

// withDelay adds to dsn a session setting, bench.delay, that delay.sql sleeps for.
func withDelay(t *testing.T, dsn, seconds string) string {
	t.Helper()
	option := "-c bench.delay=" + seconds
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("options", option)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return fmt.Sprintf("%s options='%s'", dsn, option)
}
