package cli_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestHostileNames: names from user input reach SQL only quoted. A database whose
// name is an attempt at SQL injection is loaded, run and used by a study, and the
// table the name tries to drop is still there.
func TestHostileNames(t *testing.T) {
	pgtest.Long(t)
	base := pgtest.NewDatabase(t)
	pgtest.Query(t, base, "create table canary(x int)")
	hostile := `we"ird'; drop table canary; --`
	pgtest.Query(t, base, "create database "+pgx.Identifier{hostile}.Sanitize())
	t.Cleanup(func() {
		pgtest.Query(t, base, "drop database if exists "+pgx.Identifier{hostile}.Sanitize()+" with (force)")
	})
	quoted := `'` + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(hostile) + `'`
	dsn := base + " dbname=" + quoted // the last dbname wins
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	for _, args := range [][]string{
		{"init", "tpcb", "--scale", "1", "--dsn", dsn},
		{"run", "tpcb", "--clients", "2", "--duration", "1s", "--results", results, "--dsn", dsn},
	} {
		if code, out, errOut := run(t, args...); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args[:2], " "), code, out, errOut)
		}
	}
	file := filepath.Join(dir, "hostile.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: hostile
targets: [{name: here, dsn: %q}]
workloads: [{kind: tpcb, dataset: keep, database: %q, vacuum: analyze}]
matrix: {clients: [1], duration: 1s, repeat: 1}
`, base, hostile))
	if code, out, errOut := run(t, "study", "run", file, "--results", results, "--progress", "0"); code != 0 {
		t.Fatalf("study: exit %d\n%s%s", code, out, errOut)
	}
	if got := pgtest.Query(t, base, "select count(*) from pg_tables where tablename = 'canary'"); got != "1" {
		t.Errorf("the canary table is gone")
	}
}
