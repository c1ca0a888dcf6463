package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestPgbenchCommand runs scripts with pgbench's command line: the connection
// from -h, -p, -U and a database name, the options pgbench users type, and
// pgbench's exit codes: 0 done, 1 for a script that does not parse or options that
// are wrong, 2 when clients were aborted during the run.
func TestPgbenchCommand(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table t (c int, v bigint)")
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.sql", "\\set v random(1, 10) * :mult\nINSERT INTO t VALUES (:client_id, :v);\n")
	results := filepath.Join(dir, "r.db")
	code, out, errOut := run(t, "pgbench", "-n", "-c2", "-t", "5", "-Dmult=100", "--random-seed=3", "-f", good+"@2",
		"-h", cfg.Host, "-p", strconv.Itoa(int(cfg.Port)), "-U", cfg.User, cfg.Database, "--results", results)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got := pgtest.Query(t, dsn, "select count(*) || ' ' || bool_and(v % 100 = 0) from t"); got != "10 true" {
		t.Errorf("rows: %s, want 10 rows of multiples of 100", got)
	}
	// pgbench's report on stdout, the run's own lines on stderr.
	for _, want := range []string{"number of transactions actually processed: 10/10\n", "query mode: simple\n", "tps = "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "transactions: 10 committed") || !strings.Contains(errOut, "stored in "+results) {
		t.Errorf("stderr lacks the run's summary:\n%s", errOut)
	}

	// -f - reads the script from standard input, as pgbench does.
	code, out, errOut = clitest.RunInput(t, "\\set v 7\nINSERT INTO t VALUES (-1, :v);\n", "pgbench", "-n", "-t", "2", "-f", "-@3", dsn, "--results", results)
	if code != 0 || !strings.Contains(out, "transaction type: -\n") {
		t.Errorf("script from stdin: exit %d\n%s%s", code, out, errOut)
	}
	if got := pgtest.Query(t, dsn, "select count(*) from t where c = -1 and v = 7"); got != "2" {
		t.Errorf("script from stdin left %s rows, want 2", got)
	}

	bad := write("bad.sql", "\\set x 1 +\n")
	code, _, errOut = run(t, "pgbench", "-n", "-t", "1", "-f", bad, dsn)
	if code != 1 || !strings.Contains(errOut, "bad.sql:1:11: syntax error in command \"set\"") || !strings.Contains(errOut, "^ error found here") {
		t.Errorf("script that does not parse: exit %d, stderr:\n%s", code, errOut)
	}
	for _, args := range [][]string{
		{"-n", "-t", "1", "-T", "5", "-f", good, dsn},
		{"-n", "-R", "0", "-f", good, dsn},
		{"-n", "-L", "soon", "-f", good, dsn},
		{"-n", "--index-tablespace", "fast", "-f", good, dsn},
		{"-n", "-c", "x", "-f", good, dsn},
		{"-n", "-f", good, dsn, "extra"},
	} {
		if code, _, errOut := run(t, append([]string{"pgbench"}, args...)...); code != 1 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, want 1 with one line; stderr:\n%s", args, code, errOut)
		}
	}

	abort := write("abort.sql", "\\set x 1 / 0\n")
	code, out, errOut = run(t, "pgbench", "-n", "-t", "3", "-f", abort, dsn, "--results", results)
	if code != 2 || !strings.Contains(out, "number of transactions actually processed: 0/3") || !strings.Contains(errOut, "INVALID (aborted)") || !strings.Contains(errOut, "division by zero") {
		t.Errorf("aborted client: exit %d\n%s%s", code, out, errOut)
	}
}

// TestScriptCommitsMatchServer: a script counts its commits as its statements
// report them (blocks committed or rolled back, implicit transactions, several in
// one round trip), and the server's count agrees, so that no run is called
// contaminated for the way its script is written.
func TestScriptCommitsMatchServer(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table c (v int) with (autovacuum_enabled = off)")
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	for i, c := range []struct{ protocol, src string }{
		{"prepared", "BEGIN;\nINSERT INTO c VALUES (1);\nROLLBACK;\nSELECT 1;\n"},
		{"extended", "ROLLBACK;\nINSERT INTO c VALUES (2);\n"},
		{"extended", "\\startpipeline\nBEGIN;\nINSERT INTO c VALUES (3);\nCOMMIT;\nBEGIN;\nINSERT INTO c VALUES (4);\nCOMMIT;\n\\endpipeline\n"},
		{"prepared", "\\startpipeline\nINSERT INTO c VALUES (5);\n\\syncpipeline\nSELECT 1;\nBEGIN;\nSELECT 2;\nEND;\n\\endpipeline\n"},
		{"simple", "BEGIN \\; INSERT INTO c VALUES (6) \\; COMMIT \\; SELECT 2;\nSELECT 1 \\; SELECT 2;\n;\n"},
		{"simple", "BEGIN;\nSELECT 1 AS one \\; COMMIT \\; BEGIN \\; ROLLBACK;\n"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("s%d.sql", i))
		if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		// An autovacuum worker's visit to the database commits transactions of its
		// own, which no client made: a count off by that is tried once more.
		for try := 1; ; try++ {
			code, out, errOut := run(t, "run", "pgbench", "-f", path, "-M", c.protocol, "-c", "2", "-t", "20", "--json", "--results", results, "--dsn", dsn)
			if code != 0 {
				t.Fatalf("%q: exit %d\n%s", c.src, code, errOut)
			}
			var sum struct {
				Transactions int64 `json:"transactions"`
				CommitsTotal int64 `json:"commits_total"`
				Server       struct {
					Commits int64 `json:"commits"`
				} `json:"server"`
				Flags []struct {
					Name string `json:"name"`
				} `json:"flags"`
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatalf("--json: %v\n%s", err, out)
			}
			if sum.Transactions != 40 {
				t.Fatalf("%s %q: %d transactions, want 40", c.protocol, c.src, sum.Transactions)
			}
			if sum.CommitsTotal == sum.Server.Commits {
				break
			}
			if extra := sum.Server.Commits - sum.CommitsTotal; try == 2 || extra < 0 || extra > 3 {
				t.Errorf("%s %q: commits: client %d, server %d; flags %v", c.protocol, c.src, sum.CommitsTotal, sum.Server.Commits, sum.Flags)
				break
			}
		}
	}
}

// Per-statement latencies (-r) reach the reports: compare, Markdown and HTML show
// each statement's average on each target beside the baseline's.
func TestPerStatementReport(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.sql")
	if err := os.WriteFile(script, []byte("\\set n random(1, 10)\nSELECT :n AS quick;\nSELECT pg_sleep(0.003) AS nap;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "r.db")
	var ids []string
	for _, dsn := range []string{pgtest.NewDatabase(t), pgtest.NewDatabase(t)} {
		code, out, errOut := run(t, "run", "pgbench", "-f", script, "-r", "-t", "20", "--json", "--dsn", dsn, "--results", results)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s", code, errOut)
		}
		var sum struct {
			RunID int64 `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.RunID == 0 {
			t.Fatalf("summary %v: %s", err, out)
		}
		ids = append(ids, strconv.FormatInt(sum.RunID, 10))
	}
	sel := []string{"--run", strings.Join(ids, ","), "--results", results}
	code, out, errOut := run(t, append([]string{"compare"}, sel...)...)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, errOut)
	}
	// The nap's row: a figure of at least 3 ms for each target.
	var nap string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "SELECT pg_sleep(0.003) AS nap;") {
			nap = l
		}
	}
	f := strings.Fields(strings.TrimPrefix(nap, "SELECT pg_sleep(0.003) AS nap;"))
	if !strings.Contains(out, "Per statement") || !strings.Contains(out, "SELECT :n AS quick;") || len(f) < 3 || strings.Contains(out, `\set`) {
		t.Fatalf("compare lacks the statements' table (nap row %q):\n%s", nap, out)
	}
	for _, v := range []string{f[0], f[1]} {
		if ms, err := strconv.ParseFloat(v, 64); err != nil || ms < 3 {
			t.Errorf("nap's average %q, want at least 3 ms:\n%s", v, out)
		}
	}
	for _, name := range []string{"r.md", "r.html"} {
		path := filepath.Join(dir, name)
		if code, _, errOut := run(t, append([]string{"report", "-o", path}, sel...)...); code != 0 {
			t.Fatalf("report %s: exit %d\n%s", name, code, errOut)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "Per statement, as pgbench -r times them") || !strings.Contains(string(b), "pg\\_sleep(0.003) AS nap;") && !strings.Contains(string(b), "pg_sleep(0.003) AS nap;") {
			t.Errorf("%s lacks the statements' table", name)
		}
	}
}

// -R and -L as pgbench takes them (transactions a second, milliseconds): the
// report has pgbench's lines for the schedule lag, skipped and late transactions,
// and the log its lag column and "skipped" lines.
func TestPgbenchRate(t *testing.T) {
	pgtest.Long(t)
	bin := pgtest.Pgbench(t)
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "nap.sql")
	if err := os.WriteFile(script, []byte("SELECT pg_sleep(0.004);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-n", "-c", "1", "-T", "2", "-R", "400", "-L", "5", "-l", "-f", script}
	cmd := exec.Command(bin, append(append(args, "--log-prefix", filepath.Join(dir, "theirs")), dsn)...)
	theirs, err := cmd.Output()
	if err != nil {
		t.Fatalf("pgbench: %v\n%s", err, theirs)
	}
	code, ours, errOut := run(t, append(append([]string{"pgbench"}, args...), "--log-prefix", filepath.Join(dir, "ours"), dsn, "--results", filepath.Join(dir, "r.db"))...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	key := func(line string) string {
		return strings.TrimRight(strings.TrimRightFunc(line[:strings.IndexAny(line+"0", "0123456789")], unicode.IsSpace), "(:=")
	}
	for _, l := range strings.Split(string(theirs), "\n") {
		if k := key(l); strings.Contains(l, "skipped") || strings.Contains(l, "latency limit") || strings.Contains(l, "schedule lag") || strings.HasPrefix(l, "latency") {
			if !strings.Contains(ours, k) {
				t.Errorf("pgbench's line %q has no counterpart in:\n%s", l, ours)
			}
		}
	}
	// One client that takes 4 ms cannot start 400 a second within 5 ms: most are skipped.
	logLines := func(prefix string) (skipped, lines int, fields map[int]bool) {
		files, _ := filepath.Glob(prefix + ".*")
		fields = map[int]bool{}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				lines++
				fields[len(strings.Fields(l))] = true
				if strings.Fields(l)[2] == "skipped" {
					skipped++
				}
			}
		}
		return
	}
	// Without a latency limit nothing is skipped: the arrivals queue, and a run
	// whose target fell behind says so and does not count.
	code, out, errOut := run(t, "run", "pgbench", "-f", script, "--rate", "1000", "-c", "1", "-T", "2", "--json", "--dsn", dsn, "--results", filepath.Join(dir, "r.db"))
	var sum struct {
		TPS   float64 `json:"tps"`
		Flags []struct {
			Name    string
			Invalid bool
			Reason  string
		} `json:"flags"`
		Rate struct {
			Requested float64 `json:"requested_tps"`
			Scheduled int64   `json:"scheduled"`
			NotBegun  int64   `json:"not_begun"`
		} `json:"rate"`
	}
	if err := json.Unmarshal([]byte(out), &sum); code != 0 || err != nil {
		t.Fatalf("a run that fell behind: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if sum.Rate.Requested != 1000 || sum.Rate.NotBegun < sum.Rate.Scheduled/2 || len(sum.Flags) == 0 || sum.Flags[0].Name != "rate" || !sum.Flags[0].Invalid ||
		!strings.Contains(sum.Flags[0].Reason, "did not keep up with 1000 tx/s") {
		t.Errorf("a run that fell behind: %+v", sum)
	}

	ts, tn, tf := logLines(filepath.Join(dir, "theirs"))
	us, un, uf := logLines(filepath.Join(dir, "ours"))
	if ts == 0 || us < un/4 || fmt.Sprint(uf) != fmt.Sprint(tf) {
		t.Errorf("log: %d of %d lines skipped, field counts %v; pgbench's %d of %d, %v", us, un, uf, ts, tn, tf)
	}
}
