package engine_test

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestAbortedRun: every client of a pgbench drop-in run stops on its first
// transaction's error. The summary's first line says the run aborted, not that
// it completed, and the CPU time of setting up, over a run of milliseconds, is
// not taken for a client that saturated its cores.
func TestAbortedRun(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "fails.sql")
	clitest.WriteFile(t, script, "select 1/0;\n")
	headline := regexp.MustCompile(`(?m)^run \d+: pgbench, (\w+)$`)
	for range 3 {
		_, out, errOut := run(t, "pgbench", "-n", "-f", script, "-c", "16", "-T", "2", "--results", filepath.Join(dir, "r.db"), dsn)
		if !strings.Contains(errOut, "INVALID (aborted)") {
			t.Fatalf("the clients did not abort:\n%s%s", out, errOut)
		}
		if m := headline.FindStringSubmatch(errOut); m == nil || m[1] != "aborted" {
			t.Errorf("headline %q, want the run aborted:\n%s", m, errOut)
		}
		if strings.Contains(errOut, "(client_cpu)") || strings.Contains(errOut, "CPU-bound") {
			t.Errorf("a run that aborted at once is said to be CPU-bound:\n%s", errOut)
		}
	}
}

// TestLateShare: with -R and -L, transactions that each take longer than the
// limit are all late, and those the clients cannot begin in time are skipped.
// The late share is pgbench's, of the transactions done, on stderr as on
// stdout: all of them, whatever was skipped.
func TestLateShare(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	script := filepath.Join(t.TempDir(), "slow.sql")
	clitest.WriteFile(t, script, "select pg_sleep(0.06);\n")
	_, out, errOut := run(t, "pgbench", "-n", "-f", script, "-c", "2", "-R", "100", "-L", "50", "-T", "3",
		"--results", filepath.Join(t.TempDir(), "r.db"), dsn)
	m := regexp.MustCompile(`latency limit 50 ms: (\d+) later than it \(([0-9.]+)% of the transactions done\), (\d+) skipped`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no latency limit line on stderr:\n%s%s", out, errOut)
	}
	if skipped, _ := strconv.Atoi(m[3]); skipped == 0 || m[2] != "100.000" {
		t.Errorf("%s late (%s%%), %s skipped; want some skipped and every transaction done late (100.000%%)", m[1], m[2], m[3])
	}
	// stdout is pgbench's report: the same share, when it prints one.
	if s := regexp.MustCompile(`latency limit: \d+/\d+ \(([0-9.]+)%\)`).FindStringSubmatch(out); s != nil && s[1] != m[2] {
		t.Errorf("late share %s%% on stdout, %s%% on stderr", s[1], m[2])
	}
}
