package faults_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestInterruptedLoad: data left by a load stopped halfway is never taken for a
// dataset; init again resumes it where it stopped and makes it whole, the same data
// a load that never stopped makes.
func TestInterruptedLoad(t *testing.T) {
	pgtest.Long(t)
	tests := []struct {
		kind string
		init []string
		// marked is the table that carries the mark of an unfinished load.
		marked string
		// whole is a query over the loaded data and what it must give.
		whole, want string
	}{
		{"tpcb", []string{"--scale", "15"}, "pgbench_branches",
			"select (select count(*) from pgbench_accounts) || ' ' || (select count(distinct aid) from pgbench_accounts) || ' ' || (select count(*) from pgbench_tellers) || ' ' || (select count(*) from pgbench_branches) || ' ' || (select count(*) from pg_indexes where tablename like 'pgbench%')",
			"1500000 1500000 150 15 3"},
		{"tpcc", []string{"--warehouses", "2"}, "warehouse",
			// Order lines are random in number: compared with a load never stopped.
			"select (select count(*) from stock) || ' ' || (select count(*) from customer) || ' ' || (select count(*) || ' ' || sum(ol_amount) || ' ' || sum(ol_i_id) from order_line) || ' ' || (select count(*) from item)",
			""},
		{"sysbench", []string{"--tables", "2", "--table-size", "400000"}, "sbtest1",
			"select (select count(*) || ' ' || count(distinct id) from sbtest1) || ' ' || (select count(*) || ' ' || count(distinct id) from sbtest2) || ' ' || (select count(*) from pg_indexes where tablename like 'sbtest%')",
			"400000 400000 400000 400000 4"},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			// Each kind loads a database of its own, and its stops follow the
			// load's journal, not the clock; no case judges a run.
			t.Parallel()
			dsn := pgtest.NewDatabase(t)
			args := append([]string{"init", tc.kind, "--dsn", dsn}, tc.init...)
			// interrupt runs init and stops it as Ctrl-C would, once the load has
			// marked its table and its journal satisfies far: a stop at a fixed time
			// could land before the load began on a slow machine, or after it
			// finished on a fast one.
			interrupt := func(far func(load.JournalState) bool) {
				t.Helper()
				var stdout, stderr bytes.Buffer
				env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv, Now: time.Now, Args: args,
					Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
						ctx, cancel := context.WithCancel(ctx)
						go func() {
							waitLoading(ctx, dsn, tc.marked, tc.kind, far)
							cancel()
						}()
						return ctx, cancel
					}}
				if code := cli.Main(env); code != cli.ExitInterrupted {
					t.Fatalf("interrupted init: exit %d, want %d\n%s%s", code, cli.ExitInterrupted, stdout.String(), stderr.String())
				}
			}
			copied := func(st load.JournalState) bool { return st.Copied >= 1 }
			interrupt(copied)
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
			// Interrupted twice, the second time after one more step: init resumes,
			// keeping what both attempts finished.
			interrupt(copied)
			before := journalled(t, dsn, tc.kind)
			interrupt(func(st load.JournalState) bool { return st.Copied+st.Steps > before })
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
			interrupt(func(load.JournalState) bool { return true })
			if code, out, errOut := run(t, append(slices.Clone(args), "--reload")...); code != 0 || !strings.Contains(errOut, "as --reload asks") {
				t.Errorf("init --reload: exit %d, want a note that it loads from the start\n%s%s", code, out, errOut)
			}
		})
	}
}

// journalled is how many finished steps the journal of workload's load in the
// database at dsn holds.
func journalled(t *testing.T, dsn, workload string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	st, err := load.ReadJournal(ctx, conn, workload)
	if err != nil || st == nil {
		t.Fatalf("read the load journal: %v (none: %v)", err, st == nil)
	}
	return st.Copied + st.Steps
}

// waitLoading returns once the database at dsn holds an unfinished load whose mark
// is on table and whose journal (of workload) satisfies far, or when ctx ends (or
// after a minute, so that a load that never gets there is still stopped and fails
// the test's checks).
func waitLoading(ctx context.Context, dsn, table, workload string, far func(load.JournalState) bool) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// One connection for all the polls, so that they cost the server little.
	var conn *pgconn.PgConn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	reached := func() bool {
		if conn == nil {
			var err error
			if conn, err = pgconn.Connect(ctx, dsn); err != nil {
				conn = nil
				return false
			}
		}
		unfinished, err := load.Unfinished(ctx, conn, table)
		if err != nil {
			conn.Close(context.Background())
			conn = nil
			return false
		}
		if !unfinished {
			return false
		}
		st, err := load.ReadJournal(ctx, conn, workload)
		return err == nil && st != nil && far(*st)
	}
	for !reached() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
