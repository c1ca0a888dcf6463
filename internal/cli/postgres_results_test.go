package cli_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// Two studies write to one PostgreSQL results store at once, each from its own
// process: every run of both is there, and the commands that read results read it.
func TestPostgresResultsStore(t *testing.T) {
	pgtest.Long(t)
	results := pgtest.NewDatabase(t)
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "one.sql"), "select 1;\n")
	var cmds []interface{ Wait() error }
	var files []string
	for _, name := range []string{"left", "right"} {
		dsn := pgtest.NewDatabase(t)
		db := pgtest.Query(t, dsn, "select current_database()")
		file := filepath.Join(dir, name+".yaml")
		clitest.WriteFile(t, file, fmt.Sprintf(`name: %s
targets: [{name: here, dsn: %q}]
workloads: [{name: one, kind: pgbench, database: %s, dataset: keep, run: {file: [one.sql]}}]
matrix: {clients: [1, 2], warmup: 0s, duration: 1s, repeat: 2}
`, name, pgtest.DSN(t), db))
		files = append(files, file)
		cmd, _ := clitest.Start(t, []string{"study", "run", file, "--results", results, "--progress", "0"})
		cmds = append(cmds, cmd)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("study %s: %v", files[i], err)
		}
	}
	code, out, errOut := run(t, "runs", "--results", results)
	if code != 0 || strings.Count(out, "pgbench") != 8 {
		t.Fatalf("runs: exit %d, want 8 runs\n%s%s", code, out, errOut)
	}
	for _, f := range files {
		code, out, errOut = run(t, "study", "status", f, "--results", results)
		if code != 0 || !strings.Contains(out, "4 runs, 4 made") {
			t.Errorf("study status %s: exit %d\n%s%s", f, code, out, errOut)
		}
	}
	code, out, errOut = run(t, "compare", "--study", "left", "--results", results)
	if code != 0 || !strings.Contains(out, "one (pgbench)") {
		t.Errorf("compare: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "show", "1", "--results", results)
	if code != 0 || !strings.Contains(out, "run 1") {
		t.Errorf("show: exit %d\n%s%s", code, out, errOut)
	}
	// PGBAKEOFF_RESULTS names the store when --results does not, and help does not
	// print it: a DSN may carry a password.
	t.Setenv("PGBAKEOFF_RESULTS", results+" password=hunter2")
	code, out, errOut = run(t, "runs")
	if code != 0 || strings.Count(out, "pgbench") != 8 {
		t.Errorf("runs from PGBAKEOFF_RESULTS: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ = run(t, "runs", "--help"); code != 0 || strings.Contains(out, "hunter2") || !strings.Contains(out, "PGBAKEOFF_RESULTS") {
		t.Errorf("runs --help:\n%s", out)
	}
}
