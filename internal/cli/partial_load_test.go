package cli_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestInterruptedLoad: data left by a load stopped halfway is never taken for a
// dataset; init again resumes it where it stopped and makes it whole, the same data
// a load that never stopped makes.
func TestInterruptedLoad(t *testing.T) {
	tests := []struct {
		kind string
		init []string
		// whole is a query over the loaded data and what it must give.
		whole, want string
	}{
		{"tpcb", []string{"--scale", "40"},
			"select (select count(*) from pgbench_accounts) || ' ' || (select count(distinct aid) from pgbench_accounts) || ' ' || (select count(*) from pgbench_tellers) || ' ' || (select count(*) from pgbench_branches) || ' ' || (select count(*) from pg_indexes where tablename like 'pgbench%')",
			"4000000 4000000 400 40 3"},
		{"tpcc", []string{"--warehouses", "5"},
			// Order lines are random in number: compared with a load never stopped.
			"select (select count(*) from stock) || ' ' || (select count(*) from customer) || ' ' || (select count(*) || ' ' || sum(ol_amount) || ' ' || sum(ol_i_id) from order_line) || ' ' || (select count(*) from item)",
			""},
		{"sysbench", []string{"--tables", "2", "--table-size", "1000000"},
			"select (select count(*) || ' ' || count(distinct id) from sbtest1) || ' ' || (select count(*) || ' ' || count(distinct id) from sbtest2) || ' ' || (select count(*) from pg_indexes where tablename like 'sbtest%')",
			"1000000 1000000 1000000 1000000 4"},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			dsn := pgtest.NewDatabase(t)
			args := append([]string{"init", tc.kind, "--dsn", dsn}, tc.init...)
			interrupt := func(after time.Duration) {
				t.Helper()
				var stdout, stderr bytes.Buffer
				env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv, Now: time.Now, Args: args,
					Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
						return context.WithTimeout(ctx, after) // Ctrl-C during the load
					}}
				if code := cli.Main(env); code != cli.ExitInterrupted {
					t.Fatalf("interrupted init: exit %d, want %d\n%s%s", code, cli.ExitInterrupted, stdout.String(), stderr.String())
				}
			}
			interrupt(600 * time.Millisecond)
			code, out, errOut := run(t, "run", tc.kind, "--duration", "1s", "--results", t.TempDir()+"/r.db", "--dsn", dsn)
			if code == 0 || !strings.Contains(errOut, "did not finish") {
				t.Errorf("run on an interrupted load: exit %d, want an error saying the load did not finish\n%s%s", code, out, errOut)
			}
			// Other options: the unfinished load cannot be resumed; start over.
			other := append(slices.Clone(args), "--jobs", "3")
			if tc.kind == "tpcc" {
				other = append(slices.Clone(args), "--seed", "7")
			}
			if code, out, errOut := run(t, other...); code != 0 || !strings.Contains(errOut, "had other options") {
				t.Fatalf("init with other options: exit %d, want a note that the unfinished load had other options\n%s%s", code, out, errOut)
			}
			// Interrupted twice, later the second time: init resumes, keeping what
			// both attempts finished.
			interrupt(600 * time.Millisecond)
			interrupt(1500 * time.Millisecond)
			code, out, errOut = run(t, args...)
			if code != 0 || !strings.Contains(errOut, "did not finish (done: ") || !strings.Contains(errOut, "resuming it") {
				t.Fatalf("init again: exit %d, want a note that the unfinished load resumes\n%s%s", code, out, errOut)
			}
			t.Logf("%s", strings.TrimSpace(errOut))
			want := tc.want
			if want == "" {
				fresh := pgtest.NewDatabase(t)
				if code, out, errOut := run(t, append([]string{"init", tc.kind, "--dsn", fresh}, tc.init...)...); code != 0 {
					t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
				}
				want = pgtest.Query(t, fresh, tc.whole)
			}
			if got := pgtest.Query(t, dsn, tc.whole); got != want {
				t.Errorf("resumed data: %s, want %s", got, want)
			}
			if got := pgtest.Query(t, dsn, "select to_regclass('pgbakeoff_load_journal') is null"); got != "t" {
				t.Error("the load journal is still in the database after the load finished")
			}
			if tc.kind == "tpcc" {
				if code, out, errOut := run(t, "check", "tpcc", "--dsn", dsn); code != 0 {
					t.Errorf("check tpcc after resuming: exit %d\n%s%s", code, out, errOut)
				}
			}
			if code, out, errOut := run(t, "run", tc.kind, "--duration", "1s", "--results", t.TempDir()+"/r.db", "--dsn", dsn); code != 0 {
				t.Errorf("run after resuming: exit %d\n%s%s", code, out, errOut)
			}
			// --reload starts over even where the load could resume.
			interrupt(600 * time.Millisecond)
			if code, out, errOut := run(t, append(slices.Clone(args), "--reload")...); code != 0 || !strings.Contains(errOut, "as --reload asks") {
				t.Errorf("init --reload: exit %d, want a note that it loads from the start\n%s%s", code, out, errOut)
			}
		})
	}
}
