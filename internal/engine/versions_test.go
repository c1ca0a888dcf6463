package engine_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// run executes the command line as a user would and returns exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, args...)
}

// TestCommitsAgreeOnEveryVersion runs, through the command line, the same short workloads on servers of every
// supported major and checks that the server's commit count, read once its
// statistics have settled, agrees with the clients' within 1%: before 15 the
// counts travel to a statistics collector whose readings may be half a second old,
// from 15 sessions report at most once a second and as they exit. The subtests
// run in parallel, so the servers are under full load.
func TestCommitsAgreeOnEveryVersion(t *testing.T) {
	for _, v := range []string{"11", "12", "13", "14", "15", "16", "17", "18"} {
		t.Run("pg"+v, func(t *testing.T) {
			t.Parallel()
			dsn := pgtest.OfVersion(t, v)
			if code, out, errOut := run(t, "init", "tpcb", "--scale", "2", "--dsn", dsn); code != 0 {
				t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
			}
			results := filepath.Join(t.TempDir(), "r.db")
			for _, c := range []struct {
				script  string
				clients int
			}{{"select-only", 8}, {"tpcb-like", 4}, {"select-only", 2}} {
				code, out, errOut := run(t, "run", "tpcb", "--script", c.script, "--clients", fmt.Sprint(c.clients),
					"--duration", "1s", "--json", "--results", results, "--dsn", dsn)
				if code != 0 {
					t.Fatalf("%s: exit %d\n%s%s", c.script, code, out, errOut)
				}
				var sum struct {
					CommitsTotal int64 `json:"commits_total"`
					Server       struct {
						Version   string  `json:"version"`
						Commits   int64   `json:"commits"`
						DiffPct   float64 `json:"commits_diff_pct"`
						Unread    string  `json:"commits_unread"`
						Unsettled bool    `json:"commits_unsettled"`
					} `json:"server"`
					Flags []struct {
						Name    string `json:"name"`
						Invalid bool   `json:"invalid"`
						Reason  string `json:"reason"`
					} `json:"flags"`
				}
				if err := json.Unmarshal([]byte(out), &sum); err != nil {
					t.Fatalf("%s: %v\n%s", c.script, err, out)
				}
				t.Logf("PostgreSQL %s, %s at %d clients: client %d, server %d (%+.2f%%), unsettled %v",
					sum.Server.Version, c.script, c.clients, sum.CommitsTotal, sum.Server.Commits, sum.Server.DiffPct, sum.Server.Unsettled)
				if sum.Server.Unread != "" || sum.CommitsTotal == 0 {
					t.Errorf("%s: server commits unread (%s), client %d", c.script, sum.Server.Unread, sum.CommitsTotal)
				}
				// Exact but for a visit of autovacuum's (two commits) now and then: a
				// session start or a statement miscounted per client would show.
				if d := sum.Server.Commits - sum.CommitsTotal; d > 4 || d < -4 || sum.Server.Unsettled {
					t.Errorf("%s: server %d commits, clients %d (%+.2f%%), unsettled %v; want them equal but for autovacuum's",
						c.script, sum.Server.Commits, sum.CommitsTotal, sum.Server.DiffPct, sum.Server.Unsettled)
				}
				for _, f := range sum.Flags {
					if f.Name == "contaminated" || f.Name == "commits" {
						t.Errorf("%s: flag %s: %s", c.script, f.Name, f.Reason)
					}
				}
			}
		})
	}
}
