//go:build unix

package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// ownServer starts a server of the test's own, loaded with TPC-B at scale 1, for
// faults the shared one must not suffer; it is stopped and removed after the test.
func ownServer(t *testing.T) *localpg.Server {
	t.Helper()
	srv := pgtest.OwnServer(t).Server()
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", srv.TCPDSN()); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	return srv
}

// runSummary is what these tests read of a run's JSON summary.
type runSummary struct {
	Status       string `json:"status"`
	CommitsTotal int64  `json:"commits_total"`
	Server       struct {
		Commits       int64  `json:"commits"`
		CommitsUnread string `json:"commits_unread"`
		StatsReset    bool   `json:"stats_reset"`
		WindowCommits int64  `json:"window_commits"`
	} `json:"server"`
	Flags []struct {
		Name    string `json:"name"`
		Invalid bool   `json:"invalid"`
		Reason  string `json:"reason"`
	} `json:"flags"`
}

// flag is the reason of the run's flag of that name, and whether it is invalid.
func (s runSummary) flag(name string) (reason string, invalid, ok bool) {
	for _, f := range s.Flags {
		if f.Name == name {
			return f.Reason, f.Invalid, true
		}
	}
	return "", false, false
}

// runWithFault runs `run tpcb` with args on dsn, stored in results, and once its
// clients have worked for a second does fault. It returns the run's text
// summary and, read back from the store, its JSON summary.
func runWithFault(t *testing.T, dsn, results string, fault func(), args ...string) (string, runSummary) {
	t.Helper()
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := run(t, append([]string{"run", "tpcb", "--results", results, "--dsn", dsn}, args...)...)
		done <- result{code, out, errOut}
	}()
	waitClients(t, dsn, done)
	time.Sleep(time.Second) // into the run's window: the fault's place, not a wait for something
	fault()
	r := <-done
	t.Logf("exit %d\n%s%s", r.code, r.out, r.errOut)
	m := regexp.MustCompile(`(?m)^run (\d+): `).FindStringSubmatch(r.out)
	if m == nil {
		t.Fatalf("no summary: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	code, js, errOut := run(t, "show", m[1], "--json", "--results", results)
	var sum runSummary
	if err := json.Unmarshal([]byte(js), &sum); code != 0 || err != nil {
		t.Fatalf("show %s: exit %d, %v\n%s%s", m[1], code, err, js, errOut)
	}
	return r.out, sum
}

// waitClients waits until a run's clients are connected to the server at dsn,
// or the run has ended (done holds its result then, put back).
func waitClients[T any](t *testing.T, dsn string, done chan T) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		select {
		case r := <-done:
			done <- r
			return
		case <-time.After(50 * time.Millisecond):
		}
		if pgtest.Query(t, dsn, "select count(*) > 0 from pg_stat_activity where application_name like 'pgbakeoff-run-%' and state is not null") == "t" {
			return
		}
	}
	t.Fatal("the run's clients did not connect within a minute")
}

// crashBackend kills one of the run's client backends on the server at dsn with
// SIGKILL: the postmaster ends every other session and recovers, keeping its
// start time. With hold, another backend is stopped (SIGSTOP) for that long
// first, which the postmaster waits for before it recovers: the server refuses
// connections all that time.
func crashBackend(t *testing.T, dsn string, hold time.Duration) {
	t.Helper()
	victim, err := strconv.Atoi(pgtest.Query(t, dsn, "select pid from pg_stat_activity where application_name like 'pgbakeoff-run-%' limit 1"))
	if err != nil {
		t.Fatal(err)
	}
	var held *pgconn.PgConn
	if hold > 0 {
		if held, err = pgconn.Connect(t.Context(), dsn); err != nil {
			t.Fatal(err)
		}
		defer held.Close(context.Background())
		if err := syscall.Kill(int(held.PID()), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if held != nil {
		time.Sleep(hold) // the outage's length
		if err := syscall.Kill(int(held.PID()), syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashFlagged: a benchmark backend killed in the middle of a run makes the
// server end every session and recover, keeping its postmaster. The run must be
// flagged every time, whether the recovery is quick or holds the server down for
// longer than the sampler's interval (its readings fail meanwhile), and its
// server commits are not known: never a count from either side of the reset.
func TestCrashFlagged(t *testing.T) {
	pgtest.Long(t)
	srv := ownServer(t)
	dsn := srv.TCPDSN()
	results := filepath.Join(t.TempDir(), "r.db")
	for i, hold := range []time.Duration{1500 * time.Millisecond, 0, 1500 * time.Millisecond} {
		t.Run(fmt.Sprintf("%d/hold=%s", i, hold), func(t *testing.T) {
			text, sum := runWithFault(t, dsn, results, func() { crashBackend(t, dsn, hold) },
				"--script", "select-only", "--clients", "4", "--warmup", "0s", "--duration", "5s")
			reason, invalid, ok := sum.flag("restarted")
			if !ok || !invalid || !strings.Contains(reason, "crash") {
				t.Errorf("the crash is not flagged: restarted %v, invalid %v: %q", ok, invalid, reason)
			}
			if !sum.Server.StatsReset || sum.Server.Commits != 0 || !strings.HasPrefix(sum.Server.CommitsUnread, "the server's statistics were reset at ") {
				t.Errorf("server commits %d, unread %q, reset %v; want not known, reset at a time", sum.Server.Commits, sum.Server.CommitsUnread, sum.Server.StatsReset)
			}
			if !strings.Contains(text, ", server not known (the server's statistics were reset at ") {
				t.Errorf("the summary does not say the server's commits are not known")
			}
			if reason, _, ok := sum.flag("commits"); ok {
				t.Errorf("a count across a crash judged: %s", reason)
			}
		})
	}
}

// TestStatsResetNotKnown: pg_stat_reset() in the middle of a run resets the
// database's counters. The server's commits are then not known, said so with the
// time of the reset, and never a number from either side of it nor a shortfall
// of the statistics; the run is not taken for a crash.
func TestStatsResetNotKnown(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", dsn); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	// Commits before the run that the reset takes away.
	pgtest.Query(t, dsn, "select count(*) from generate_series(1, 10)")
	text, sum := runWithFault(t, dsn, filepath.Join(t.TempDir(), "r.db"), func() { pgtest.Query(t, dsn, "select pg_stat_reset()") },
		"--script", "select-only", "--clients", "2", "--warmup", "0s", "--duration", "3s")
	if !sum.Server.StatsReset || sum.Server.Commits != 0 || !strings.HasPrefix(sum.Server.CommitsUnread, "the server's statistics were reset at ") {
		t.Errorf("server commits %d, unread %q, reset %v; want not known, reset at a time", sum.Server.Commits, sum.Server.CommitsUnread, sum.Server.StatsReset)
	}
	if sum.Server.WindowCommits < 0 {
		t.Errorf("window commits %d", sum.Server.WindowCommits)
	}
	if !strings.Contains(text, ", server not known (the server's statistics were reset at ") || strings.Contains(text, "missed some reports") {
		t.Errorf("the summary does not say the server's commits are not known, or explains them as missed reports")
	}
	if reason, invalid, ok := sum.flag("commits"); !ok || invalid || !strings.Contains(reason, "pg_stat_reset()") {
		t.Errorf("flag commits %v, invalid %v: %q; want a note of the reset", ok, invalid, reason)
	}
	if _, _, ok := sum.flag("restarted"); ok || sum.Status != "completed" {
		t.Errorf("a pg_stat_reset() taken for a restart, or the run not completed: %+v", sum)
	}
}
