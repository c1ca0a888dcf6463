package cli_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// The package's parallel tests are the four find-max searches, which wait on a
// throttle: all four run at once.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m, 4)) }

// run executes the command line as a user would and returns exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, args...)
}

func TestRunStoreRoundTrip(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	results := filepath.Join(t.TempDir(), "results.db")
	code, out, errOut := run(t, "run", "tpcb", "--script", "tpcb-like@3", "--script", "select-only@1", "--clients", "2",
		"--warmup", "1s", "--duration", "2s", "--json", "--results", results, "--dsn", dsn)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("run --json is not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"run_id", "workload", "script", "clients", "duration_s", "transactions", "tps", "latency_ms",
		"failed", "retried", "commits_total", "server", "client_cpu_s"} {
		if _, ok := got[k]; !ok {
			t.Errorf("run --json lacks %q", k)
		}
	}
	lat := got["latency_ms"].(map[string]any)
	for _, k := range []string{"avg", "p50", "p90", "p95", "p99", "p999", "max"} {
		if v, _ := lat[k].(float64); v <= 0 {
			t.Errorf("latency_ms.%s = %v, want > 0", k, lat[k])
		}
	}
	if tps, _ := got["tps"].(float64); tps <= 0 {
		t.Errorf("tps = %v", got["tps"])
	}
	// The server's commit count over the whole span agrees with the client's.
	client := got["commits_total"].(float64)
	server := got["server"].(map[string]any)["commits"].(float64)
	if client <= got["transactions"].(float64) || math.Abs(server-client) > 0.01*client+5 {
		t.Errorf("commits: client %v (measured %v), server %v; want agreement within 1%%", client, got["transactions"], server)
	}
	if fi, err := os.Stat(results); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("results store mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}

	id := strconv.Itoa(int(got["run_id"].(float64)))
	code, shown, errOut := run(t, "show", id, "--json", "--results", results)
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	var again map[string]any
	if err := json.Unmarshal([]byte(shown), &again); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run_id", "tps", "transactions", "commits_total", "script"} {
		if again[k] != got[k] {
			t.Errorf("show --json %s = %v, run printed %v", k, again[k], got[k])
		}
	}
	code, list, _ := run(t, "runs", "--results", results)
	if code != 0 || !regexp.MustCompile(`(?m)^\s*`+id+`\s.*tpcb tpcb-like@3,.*\scompleted\s`).MatchString(list) {
		t.Errorf("runs: exit %d, output lacks the run:\n%s", code, list)
	}
}

// TestBadInput: each mistake gets one line on stderr, a non-zero exit, no stack
// trace, and never the password.
func TestBadInput(t *testing.T) {
	const password = "Sekrit-pw-4711"
	dsn := pgtest.NewDatabase(t)
	loaded := clitest.Loaded(t, "tpcb", "--scale", "1")
	srv := pgtest.Server(t)
	// A role that must authenticate with a password, for the failed-login case.
	pgtest.Query(t, dsn, "drop role if exists pwuser; create role pwuser login password '"+password+"'")
	hba := filepath.Join(srv.DataDir, "pg_hba.conf")
	orig, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, append([]byte("local all pwuser scram-sha-256\nhost all pwuser 127.0.0.1/32 scram-sha-256\n"), orig...), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(hba, orig, 0o600); pgtest.Query(t, dsn, "select pg_reload_conf()") })
	pgtest.Query(t, dsn, "select pg_reload_conf()")
	results := filepath.Join(t.TempDir(), "r.db")
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	wrongPw := strings.Replace(srv.DSN(), "user=postgres", "user=pwuser password=wrong-"+password, 1)

	cases := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"unknown flag", []string{"run", "tpcb", "--bogus"}, "unknown flag: --bogus", 2},
		{"unknown workload", []string{"run", "tpcx"}, `unknown run "tpcx"`, 2},
		{"no workload", []string{"run"}, "run needs one of: tpcb, tpcc, sysbench", 2},
		{"no workload to check", []string{"check"}, "check needs one of: tpcc", 2},
		{"workload without a check", []string{"check", "sysbench", "--dsn", dsn}, "sysbench has no check: pgbakeoff check takes tpcc", 2},
		{"unknown command", []string{"frobnicate"}, "unknown command", 2},
		{"malformed DSN", []string{"run", "tpcb", "--dsn", "host=localhost port=notaport password=" + password}, "invalid DSN", 2},
		{"malformed URI", []string{"run", "tpcb", "--dsn", "postgres://u:" + password + "@host:99999999/db"}, "invalid DSN", 2},
		{"unreachable host", []string{"run", "tpcb", "--dsn", "host=127.0.0.1 port=1 user=postgres connect_timeout=3"}, "cannot connect to 127.0.0.1:1", 1},
		{"unknown host", []string{"run", "tpcb", "--dsn", "host=no-such-host.invalid user=postgres connect_timeout=3"}, "no-such-host.invalid", 1},
		{"failed authentication", []string{"run", "tpcb", "--dsn", wrongPw}, "authentication failed", 1},
		{"no such database", []string{"run", "tpcb", "--dsn", strings.Replace(dsn, "dbname=", "dbname=nosuchdb_", 1) + " dbname=nosuchdb"}, `database "nosuchdb" does not exist`, 1},
		{"unknown DSN parameter", []string{"run", "tpcb", "--dsn", dsn + " frobnicate=1"}, "frobnicate", 1},
		{"missing tables", []string{"run", "tpcb", "--dsn", dsn, "--results", results}, "init tpcb", 1},
		{"too many clients", []string{"run", "tpcb", "--clients", "5000", "--dsn", loaded, "--results", results}, "connection slots", 1},
		{"scale mismatch", []string{"run", "tpcb", "--scale", "3", "--dsn", loaded, "--results", results}, "--scale 3 does not match the data: the database was loaded with scale 1", 1},
		{"zero clients", []string{"run", "tpcb", "--clients", "0", "--dsn", loaded}, "--clients must be at least 1", 2},
		{"too many jobs", []string{"run", "tpcb", "--jobs", "100000", "--dsn", loaded, "--results", results}, "--jobs 100000 is more client threads than this machine's", 2},
		{"negative duration", []string{"run", "tpcb", "--duration", "-5s", "--dsn", loaded}, "--duration must be positive", 2},
		{"unknown script", []string{"run", "tpcb", "--script", "nope", "--dsn", loaded, "--results", results}, `unknown script "nope"`, 2},
		{"unknown protocol", []string{"run", "tpcb", "--protocol", "fast", "--dsn", loaded}, `unknown protocol "fast"`, 2},
		{"bad scale for init", []string{"init", "tpcb", "--scale", "0", "--dsn", dsn}, "--scale must be at least 1", 2},
		{"load larger than the disk", []string{"init", "tpcb", "--scale", "2000000000", "--dsn", dsn}, "TB on disk and the server's data directory", 1},
		{"warehouses beyond the disk", []string{"init", "tpcc", "--warehouses", "1000000000", "--dsn", dsn}, "on disk and the server's data directory", 1},
		{"unknown PostgreSQL version", []string{"server", "start", "--name", "nope", "--version", "99"}, "PostgreSQL 99", 1},
		{"unknown run id", []string{"show", "999", "--results", results}, "no run 999", 1},
		{"no results store", []string{"runs", "--results", filepath.Join(t.TempDir(), "none.db")}, "no results store", 1},
		{"bad run id", []string{"show", "abc", "--results", results}, `run id "abc" is not a positive number`, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, tc.want) {
				t.Errorf("error %q does not say %q", last, tc.want)
			}
			if !strings.HasPrefix(last, "pgbakeoff: ") {
				t.Errorf("error line %q lacks the pgbakeoff: prefix", last)
			}
			for _, bad := range []string{"goroutine ", "panic:", password} {
				if strings.Contains(out+errOut, bad) {
					t.Errorf("output contains %q:\n%s%s", bad, out, errOut)
				}
			}
			// An error that several attempts met (with and without TLS) is said once.
			if n := strings.Count(last, "connection refused"); n > 1 {
				t.Errorf("error says %d times why the connection failed: %q", n, last)
			}
		})
	}
}

// --version names the build, and exits 0.
func TestVersion(t *testing.T) {
	code, out, errOut := run(t, "--version")
	if code != 0 || !regexp.MustCompile(`^pgbakeoff \S+.* \(go1\.\d+.*, \w+/\w+\)\n$`).MatchString(out) {
		t.Errorf("--version: exit %d, stdout %q, stderr %q; want one line naming the build and its Go", code, out, errOut)
	}
}

// badInput is a command line that must fail with one line naming want, and exit code.
type badInput struct {
	name string
	args []string
	want string
	code int
}

// checkBadInput runs each case: its exit code, the error as the last line of stderr,
// and no stack trace.
func checkBadInput(t *testing.T, cases []badInput) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := run(t, c.args...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != c.code || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "goroutine") {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, c.code, c.want)
			}
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "pgbakeoff: ") {
				t.Errorf("last line %q is not the error", last)
			}
		})
	}
}

// TestClientMachine: each run records the machine its clients ran on, without the
// hostname when asked, and a comparison names the machine of each run.
func TestClientMachine(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	results := filepath.Join(t.TempDir(), "r.db")
	host, _ := os.Hostname()
	for i, extra := range [][]string{nil, {"--anonymize"}} {
		args := append([]string{"run", "tpcb", "--script", "select-only", "--duration", "1s", "--label", "target=t" + strconv.Itoa(i+1),
			"--results", results, "--dsn", dsn}, extra...)
		code, out, errOut := run(t, args...)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
		}
		if want := "host " + host; strings.Contains(out, want) != (extra == nil) {
			t.Errorf("run %v: the summary's machine line names the host: %v, want %v\n%s", extra, !(extra == nil), extra == nil, out)
		}
	}
	code, shown, errOut := run(t, "show", "2", "--json", "--results", results)
	var sum struct {
		Machine map[string]any `json:"client_machine"`
	}
	if code != 0 || json.Unmarshal([]byte(shown), &sum) != nil {
		t.Fatalf("show: exit %d\n%s%s", code, shown, errOut)
	}
	if sum.Machine["logical_cpus"] == nil || sum.Machine["go"] == nil || sum.Machine["hostname"] != nil {
		t.Errorf("stored machine of the anonymized run: %v", sum.Machine)
	}
	code, out, errOut := run(t, "compare", "--run", "1,2", "--results", results)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "host "+host+" (run 1)") || !strings.Contains(out, "(run 2)") {
		t.Errorf("compare does not name the machine of each run:\n%s", out)
	}
}
