package pgbench_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/pgbench"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
	"github.com/spf13/pflag"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// runOurs runs the scripts with the given options through the workload and the
// driver, as `pgbakeoff run pgbench` does, for tx transactions per client.
func runOurs(t *testing.T, dsn string, r *pgbench.Run, protocol driver.Protocol, clients, tx int, seed uint64) (*driver.Result, string) {
	t.Helper()
	ctx := context.Background()
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	spec := engine.NewSpec()
	spec.Target, spec.Clients, spec.Seed, spec.Transactions = tg, clients, engine.Seed{Value: seed, Fixed: true}, tx
	r.Protocol = protocol
	var out strings.Builder
	setup := setUp(t, &spec, &engine.Env{Out: &out, Log: &out}, r)
	res, err := driver.Run(ctx, driver.Config{Target: tg, Scripts: setup.Scripts, Clients: clients, Protocol: protocol,
		Transactions: tx, MaxTries: 1, Seed: seed, OutageTimeout: time.Minute, OnTransaction: setup.OnTransaction})
	if err != nil {
		t.Fatal(err)
	}
	setup.Finish(&engine.Summary{}, res)
	return res, out.String()
}

// setUp checks r and builds its scripts on spec's target, as a run does.
func setUp(t *testing.T, spec *engine.Spec, env *engine.Env, r *pgbench.Run) *engine.Setup {
	t.Helper()
	if err := r.Check(spec); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ctl, err := spec.Target.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(ctx)
	setup, err := r.Setup(ctx, spec, env, ctl)
	if err != nil {
		t.Fatal(err)
	}
	return setup
}

func runPgbench(t *testing.T, bin, dir, dsn string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, dsn)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("pgbench: %v", err)
	}
	return 0, string(out)
}

// compatScript exercises the language on the way to the database: draws from each
// client's generator, variables typed and untyped, \gset, branches, an explicit
// block, \setshell and the automatic variables. The rows it leaves are the same
// under pgbench and pgbakeoff for the same seed.
const compatScript = `\set a random(1, 1000)
\set b random_zipfian(1, 100, 1.5)
\set c :a * 3 + :client_id + :k
\set d random_gaussian(1, 100, 2.5) + random_exponential(1, 100, 3.0) + permute(:a, 1000)
SELECT :a::int + :b::int AS s, :c::int AS c2, NULL AS n \gset g_
\if :g_s > 700
  INSERT INTO t (k, a, b, s) VALUES (:client_id, :a, :b, :g_s);
\elif :g_s > 300
  \if :b > 50
    INSERT INTO t (k, a, b, s) VALUES (:client_id, :a, :b, -2);
  \else
    INSERT INTO t (k, a, b, s) VALUES (:client_id, :a, :b, -1);
  \endif
\else
  BEGIN;
  INSERT INTO t (k, a, b, s)
    VALUES (:client_id, :a, -(:b::int), :g_c2);
  END;
\endif
\setshell sh echo :a
\set x :sh + 1
INSERT INTO t (k, a, b, s, note) VALUES (:client_id, :x, :d, :random_seed % 1000, 'w');
`

func TestScriptRunsAsUnderPgbench(t *testing.T) {
	pgtest.Long(t)
	bin := pgtest.Pgbench(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.sql"), []byte(compatScript), 0o644); err != nil {
		t.Fatal(err)
	}
	const table = "create table t (k int, a bigint, b bigint, s bigint, note text)"
	query := "select string_agg(format('%s/%s/%s/%s', k, a, b, s), ' ' order by k, a, b, s) from t"
	// Seed 0 is a seed like any other, not "from the clock".
	seeds := map[driver.Protocol]uint64{driver.Simple: 77, driver.Extended: 0, driver.Prepared: 123456789}
	for _, mode := range []driver.Protocol{driver.Simple, driver.Extended, driver.Prepared} {
		t.Run(mode.String(), func(t *testing.T) {
			seed := seeds[mode]
			theirs, ours := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
			pgtest.Query(t, theirs, table)
			pgtest.Query(t, ours, table)
			code, out := runPgbench(t, bin, dir, theirs, "-n", "-c", "3", "-t", "6", "-M", mode.String(), "--random-seed="+strconv.FormatUint(seed, 10), "-D", "k=5", "-f", "c.sql")
			if code != 0 {
				t.Fatalf("pgbench exited %d:\n%s", code, out)
			}
			r := &pgbench.Run{Files: []string{filepath.Join(dir, "c.sql")}, Defines: []string{"k=5"}}
			res, log := runOurs(t, ours, r, mode, 3, 6, seed)
			if res.Committed != 18 || res.Failed != 0 || res.Aborted != 0 {
				t.Fatalf("%d committed, %d failed, %d aborted; log:\n%s", res.Committed, res.Failed, res.Aborted, log)
			}
			want, got := pgtest.Query(t, theirs, query), pgtest.Query(t, ours, query)
			if got != want || strings.Count(want, "/") != 3*36 {
				t.Errorf("rows differ:\npgbakeoff: %s\npgbench:   %s", got, want)
			}
			if c := res.CommitsTotal; c < 36 {
				t.Errorf("counted %d commits of at least 36", c)
			}
		})
	}
}

// A script error stops the client, as pgbench aborts it, and says why; the
// transactions finished before are kept.
func TestScriptErrorAbortsClient(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table t (k int)")
	dir := t.TempDir()
	src := "INSERT INTO t VALUES (:client_id);\n\\set n :n + 1\n\\set x 10 / (3 - :n)\n"
	if err := os.WriteFile(filepath.Join(dir, "e.sql"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &pgbench.Run{Files: []string{filepath.Join(dir, "e.sql")}, Defines: []string{"n=0"}}
	res, _ := runOurs(t, dsn, r, driver.Prepared, 2, 10, 1)
	if res.Aborted != 2 || res.Committed != 4 || res.Failed != 2 {
		t.Errorf("%d aborted, %d committed, %d failed; want 2, 4, 2", res.Aborted, res.Committed, res.Failed)
	}
	want := "division by zero; client 0 aborted in command 2 (set) of script 0; evaluation of meta-command failed"
	if !strings.HasSuffix(strings.Replace(res.Abort, "client 1", "client 0", 1), want) {
		t.Errorf("abort %q, want %q", res.Abort, want)
	}
	if got := pgtest.Query(t, dsn, "select count(*) from t"); got != "6" {
		t.Errorf("%s rows, want 6 (three per client before the error)", got)
	}
}

// \gset that gets no row stops the client with pgbench's words.
func TestGsetWithoutRow(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "g.sql"), []byte("SELECT 1 AS one WHERE false \\gset\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []driver.Protocol{driver.Simple, driver.Extended, driver.Prepared} {
		res, _ := runOurs(t, dsn, &pgbench.Run{Files: []string{filepath.Join(dir, "g.sql")}}, mode, 1, 1, 1)
		if want := "client 0 script 0 command 0 query 0: expected one row, got 0"; res.Abort != want {
			t.Errorf("%s: abort %q, want %q", mode, res.Abort, want)
		}
	}
}

func TestBadOptions(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.sql")
	if err := os.WriteFile(ok, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.sql")
	if err := os.WriteFile(bad, []byte("\\set x 1 +\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		run  pgbench.Run
		want string
	}{
		{pgbench.Run{Files: []string{filepath.Join(dir, "missing.sql")}}, `could not open file "` + filepath.Join(dir, "missing.sql") + `": no such file or directory`},
		{pgbench.Run{Files: []string{bad}}, "bad.sql:1: syntax error in command \"set\""},
		{pgbench.Run{Files: []string{ok + "@0"}}, "total script weight must not be zero"},
		{pgbench.Run{Files: []string{ok + "@x"}}, "invalid weight specification: @x"},
		{pgbench.Run{Files: []string{ok + "@-1"}}, "weight specification out of range (0 .. 2147483647): -1"},
		{pgbench.Run{Files: []string{ok}, Defines: []string{"x"}}, `invalid variable definition: "x"`},
		{pgbench.Run{Files: []string{ok}, Defines: []string{"1x=2"}}, `invalid variable name "1x"`},
	}
	for _, c := range cases {
		spec := engine.NewSpec()
		err := c.run.Check(&spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.run, err, c.want)
		}
	}
}

// Statements in a pipeline go out together; \syncpipeline ends an implicit
// transaction inside it, and a block may span it. Misuse aborts the client with
// pgbench's words.
func TestPipelines(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table t (k text, v text)")
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("p.sql", `\set x random(1, 9)
\startpipeline
INSERT INTO t VALUES ('a', :x);
SELECT 1;
\syncpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
INSERT INTO t VALUES ('b' || :client_id, current_setting('transaction_isolation'));
END;
\endpipeline
\startpipeline
\endpipeline
INSERT INTO t VALUES ('after', :x);
`)
	for _, mode := range []driver.Protocol{driver.Extended, driver.Prepared} {
		pgtest.Query(t, dsn, "truncate t")
		res, log := runOurs(t, dsn, &pgbench.Run{Files: []string{good}}, mode, 2, 3, 1)
		if res.Committed != 6 || res.Aborted != 0 || res.Failed != 0 {
			t.Fatalf("%s: %d committed, %d aborted (%s), %d failed\n%s", mode, res.Committed, res.Aborted, res.Abort, res.Failed, log)
		}
		rows := "a:6 after:6 b0:3 b1:3 serializable:6"
		got := pgtest.Query(t, dsn, "select string_agg(x, ' ' order by x) from (select k || ':' || count(*) as x from t group by k "+
			"union all select v || ':' || count(*) from t where k like 'b%' group by v) s")
		if got != rows {
			t.Errorf("%s: rows %s, want %s", mode, got, rows)
		}
		// Three commits a transaction (the first sync's implicit one, the block, the
		// last insert), one for each session's start, and with prepared statements
		// one for each of the six statements prepared on each connection.
		want := int64(18 + 2)
		if mode == driver.Prepared {
			want += 2 * 6
		}
		if res.CommitsTotal != want {
			t.Errorf("%s: %d commits counted, want %d", mode, res.CommitsTotal, want)
		}
	}
	for _, c := range []struct {
		src  string
		mode driver.Protocol
		want string
	}{
		{"\\startpipeline\nSELECT 1;\n\\endpipeline\n", driver.Simple, "client 0 aborted in command 0 (startpipeline) of script 0; cannot use pipeline mode with the simple query protocol"},
		{"\\startpipeline\n\\startpipeline\n", driver.Prepared, "client 0 aborted in command 1 (startpipeline) of script 0; already in pipeline mode"},
		{"\\endpipeline\n", driver.Extended, "client 0 aborted in command 0 (endpipeline) of script 0; not in pipeline mode"},
		{"\\startpipeline\nSELECT 1 AS one \\gset\n\\endpipeline\n", driver.Prepared, "client 0 aborted in command 1 (gset) of script 0; \\gset is not allowed in pipeline mode"},
		{"\\startpipeline\nSELECT 1;\n\\syncpipeline\n", driver.Extended, "client 0 aborted: end of script reached with pipeline open"},
		{"\\startpipeline\nSELECT 1/0;\n\\endpipeline\n", driver.Prepared, "client 0 script 0 aborted in command 2 query 0: ERROR:  division by zero"},
		{"\\startpipeline\n" + strings.Repeat("SELECT 1;\n", 5000) + "\\endpipeline\n", driver.Extended,
			"(SQL) of script 0; the pipeline holds more than 64 KiB of statements; end it sooner with \\endpipeline"},
	} {
		res, _ := runOurs(t, dsn, &pgbench.Run{Files: []string{write("bad.sql", c.src)}}, c.mode, 1, 1, 1)
		if res.Aborted != 1 || !strings.HasSuffix(res.Abort, c.want) {
			t.Errorf("%.60q (%s): %d aborted: %q, want %q", c.src, c.mode, res.Aborted, res.Abort, c.want)
		}
	}
}

// With -r each command's latency and failures over the window go into the
// summary's figures, in script order.
func TestPerCommandLatencies(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "r.sql")
	src := "\\set x random(1, 10)\nSELECT pg_sleep(0.002), :x;\n\\if :x > 100\nSELECT 1;\n\\endif\n\\sleep 1 ms\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &pgbench.Run{Files: []string{path}, PerCommand: true}
	ctx := context.Background()
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	spec := engine.NewSpec()
	spec.Target, spec.Clients, spec.Transactions = tg, 2, 5
	setup := setUp(t, &spec, &engine.Env{}, r)
	res, err := driver.Run(ctx, driver.Config{Target: tg, Scripts: setup.Scripts, Clients: 2, Transactions: 5, MaxTries: 1, OutageTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	sum := &engine.Summary{}
	setup.Finish(sum, res)
	f, ok := sum.Figures.(*pgbench.Figures)
	if !ok || len(f.Statements) != 6 {
		t.Fatalf("figures %#v", sum.Figures)
	}
	st := f.Statements
	if st[1].Count != 10 || st[1].AvgMs < 2 || st[1].Text != "SELECT pg_sleep(0.002), :x;" || st[1].Line != 2 {
		t.Errorf("the SQL command: %+v", st[1])
	}
	if st[3].Count != 0 || st[5].Count != 10 || st[5].AvgMs < 1 || st[0].Count != 10 {
		t.Errorf("the skipped SELECT %+v, the \\sleep %+v, the \\set %+v", st[3], st[5], st[0])
	}
	var b strings.Builder
	f.WriteText(&b, sum)
	if !strings.Contains(b.String(), "statement latencies in milliseconds and failures, "+path+":\n") ||
		!strings.Contains(b.String(), "  \\sleep 1 ms\n") {
		t.Errorf("text:\n%s", b.String())
	}
}

// The transaction log has pgbench's lines, a line a transaction or a line an
// interval; the shapes are checked against pgbench's own log of the same script.
func TestTransactionLog(t *testing.T) {
	pgtest.Long(t)
	bin := pgtest.Pgbench(t)
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "l.sql")
	if err := os.WriteFile(path, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readLog := func(prefix string) []string {
		t.Helper()
		files, _ := filepath.Glob(prefix + ".*")
		if len(files) != 1 {
			t.Fatalf("log files %v", files)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(files[0])
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	shape := func(line string) string {
		var b strings.Builder
		for _, f := range strings.Fields(line) {
			if strings.Trim(f, "0123456789") == "" {
				b.WriteString("n ")
			} else {
				b.WriteString(f + " ")
			}
		}
		return b.String()
	}
	if code, out := runPgbench(t, bin, dir, dsn, "-n", "-l", "--log-prefix", filepath.Join(dir, "theirs"), "-c", "2", "-t", "4", "-f", path); code != 0 {
		t.Fatalf("pgbench: %d\n%s", code, out)
	}
	theirs := readLog(filepath.Join(dir, "theirs"))
	r := &pgbench.Run{Files: []string{path}, Log: true, LogPrefix: filepath.Join(dir, "ours")}
	runOurs(t, dsn, r, driver.Prepared, 2, 4, 1)
	ours := readLog(filepath.Join(dir, "ours"))
	if len(ours) != 8 || len(theirs) != 8 || shape(ours[0]) != shape(theirs[0]) {
		t.Fatalf("log lines:\n%s\npgbench's:\n%s", strings.Join(ours, "\n"), strings.Join(theirs, "\n"))
	}
	seen := map[string]bool{}
	for _, l := range ours {
		f := strings.Fields(l)
		seen[f[0]+"/"+f[1]] = true
	}
	for _, k := range []string{"0/1", "0/4", "1/1", "1/4"} {
		if !seen[k] {
			t.Errorf("no line for client/transaction %s in\n%s", k, strings.Join(ours, "\n"))
		}
	}

	// With threads, a file a thread, the clients dealt to them in blocks as
	// pgbench deals them: three clients on two threads, 0 and 1 on the first.
	clientsIn := func(prefix string) string {
		t.Helper()
		files, _ := filepath.Glob(prefix + ".*")
		sort.Strings(files)
		var b strings.Builder
		for i, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				seen[strings.Fields(l)[0]] = true
			}
			name := strings.TrimPrefix(filepath.Ext(f), ".") // the thread's number
			if i == 0 {
				name = "pid" // PREFIX.PID sorts first
			}
			fmt.Fprintf(&b, "%s:%d ", name, len(seen))
			os.Remove(f)
		}
		return b.String()
	}
	if code, out := runPgbench(t, bin, dir, dsn, "-n", "-l", "--log-prefix", filepath.Join(dir, "theirs"), "-c", "3", "-j", "2", "-t", "2", "-f", path); code != 0 {
		t.Fatalf("pgbench: %d\n%s", code, out)
	}
	r = &pgbench.Run{Files: []string{path}, Log: true, LogPrefix: filepath.Join(dir, "ours")}
	tg, _ := target.Parse(dsn)
	spec := engine.NewSpec()
	spec.Target, spec.Clients, spec.Jobs, spec.Transactions = tg, 3, 2, 2
	setup := setUp(t, &spec, &engine.Env{}, r)
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: setup.Scripts, Clients: 3, Transactions: 2,
		MaxTries: 1, OutageTimeout: time.Minute, OnTransaction: setup.OnTransaction})
	if err != nil {
		t.Fatal(err)
	}
	setup.Finish(&engine.Summary{}, res)
	if got, want := clientsIn(filepath.Join(dir, "ours")), clientsIn(filepath.Join(dir, "theirs")); got != want || got != "pid:2 1:1 " {
		t.Errorf("clients in each thread's file: %q, pgbench's %q", got, want)
	}

	// One line a second, with pgbench's fifteen fields.
	r = &pgbench.Run{Files: []string{path}, Log: true, LogPrefix: filepath.Join(dir, "agg"), AggregateInterval: 1}
	spec = engine.NewSpec()
	spec.Target, spec.Clients, spec.Duration = tg, 2, 2*time.Second
	ctx := context.Background()
	setup = setUp(t, &spec, &engine.Env{}, r)
	res, err = driver.Run(ctx, driver.Config{Target: tg, Scripts: setup.Scripts, Clients: 2, Duration: 2 * time.Second,
		MaxTries: 1, OutageTimeout: time.Minute, OnTransaction: setup.OnTransaction})
	if err != nil {
		t.Fatal(err)
	}
	setup.Finish(&engine.Summary{}, res)
	lines := readLog(filepath.Join(dir, "agg"))
	var n int64
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 15 {
			t.Fatalf("aggregate line %q has %d fields, want 15", l, len(f))
		}
		var c int64
		fmt.Sscan(f[1], &c)
		n += c
	}
	// The last, partial interval is left out, so the lines count at most the run's
	// transactions (warm-up and tail included).
	if len(lines) < 2 || len(lines) > 3 || n == 0 || n > res.CommitsTotal {
		t.Errorf("%d aggregate lines counting %d transactions:\n%s", len(lines), n, strings.Join(lines, "\n"))
	}
}

// With a connection per transaction (-C) every transaction runs on a session of
// its own, and the connections are counted and timed.
func TestConnectPerTransaction(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table t (pid int)")
	dir := t.TempDir()
	path := filepath.Join(dir, "c.sql")
	if err := os.WriteFile(path, []byte("INSERT INTO t VALUES (pg_backend_pid());\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &pgbench.Run{Files: []string{path}}
	ctx := context.Background()
	tg, _ := target.Parse(dsn)
	spec := engine.NewSpec()
	spec.Target, spec.Clients, spec.Transactions = tg, 2, 5
	setup := setUp(t, &spec, &engine.Env{}, r)
	res, err := driver.Run(ctx, driver.Config{Target: tg, Scripts: setup.Scripts, Clients: 2, Transactions: 5, MaxTries: 1,
		OutageTimeout: time.Minute, ConnectPerTx: true})
	if err != nil {
		t.Fatal(err)
	}
	// The first transaction of each client runs on the connection made at the start.
	if res.Committed != 10 || res.Connects != 8 || res.ConnectPerTx <= 0 || len(res.Outages) != 0 {
		t.Errorf("%d committed, %d connections in %s, %d outages", res.Committed, res.Connects, res.ConnectPerTx, len(res.Outages))
	}
	if got := pgtest.Query(t, dsn, "select count(distinct pid) from t"); got != "10" {
		t.Errorf("%s sessions ran the 10 transactions", got)
	}
}

// psql's :'name' and :"name" write a value as a quoted literal or identifier (with
// the simple protocol) or send the literal as a parameter; pgbench has neither.
func TestQuotedVariables(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, `create table "my t" (k text, v text)`)
	dir := t.TempDir()
	path := filepath.Join(dir, "q.sql")
	src := "SELECT 'it''s' AS s \\gset\nINSERT INTO :\"tbl\" (k, v) VALUES (:'s', :'bs');\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []driver.Protocol{driver.Simple, driver.Extended, driver.Prepared} {
		pgtest.Query(t, dsn, `truncate "my t"`)
		r := &pgbench.Run{Files: []string{path}, Defines: []string{"tbl=my t", `bs=a\b'c`}}
		res, log := runOurs(t, dsn, r, mode, 1, 2, 1)
		if res.Committed != 2 || res.Aborted != 0 {
			t.Fatalf("%s: %d committed, %d aborted: %s\n%s", mode, res.Committed, res.Aborted, res.Abort, log)
		}
		if got := pgtest.Query(t, dsn, `select string_agg(k || '|' || v, ',') from "my t"`); got != `it's|a\b'c,it's|a\b'c` {
			t.Errorf("%s: rows %s", mode, got)
		}
	}
}

// COPY in a script is refused at once with each protocol, rather than leaving the
// client waiting for data it will never send.
func TestCopyRefused(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table t (v int)")
	dir := t.TempDir()
	for i, src := range []string{"COPY t FROM STDIN;\n", "COPY (SELECT 1) TO STDOUT;\n"} {
		path := filepath.Join(dir, fmt.Sprintf("c%d.sql", i))
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []driver.Protocol{driver.Simple, driver.Extended, driver.Prepared} {
			res, _ := runOurs(t, dsn, &pgbench.Run{Files: []string{path}}, mode, 1, 2, 1)
			if want := "client 0 script 0 aborted in command 0: COPY is not supported in pgbench, aborting"; res.Abort != want {
				t.Errorf("%q (%s): abort %q, want %q", src, mode, res.Abort, want)
			}
		}
	}
}

// A script that ends inside a transaction block has its transaction counted, then
// its client stops (pgbench's "end of script reached without completing the last
// transaction"); a SQL error that aborts a client keeps its SQLSTATE in the counts.
func TestAbortAccounting(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	open := filepath.Join(dir, "open.sql")
	if err := os.WriteFile(open, []byte("BEGIN;\nSELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ := runOurs(t, dsn, &pgbench.Run{Files: []string{open}}, driver.Prepared, 1, 10, 1)
	if res.Committed != 1 || res.Failed != 0 || res.Aborted != 1 ||
		res.Abort != "client 0 aborted: end of script reached without completing the last transaction" {
		t.Errorf("open block: %d committed, %d failed, %d aborted: %s", res.Committed, res.Failed, res.Aborted, res.Abort)
	}
	bad := filepath.Join(dir, "bad.sql")
	if err := os.WriteFile(bad, []byte("SELECT 1/0;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ = runOurs(t, dsn, &pgbench.Run{Files: []string{bad}}, driver.Extended, 2, 3, 1)
	if res.Aborted != 2 || len(res.Errors) != 1 || res.Errors[0].SQLState != "22012" || res.Errors[0].Cause != driver.CauseAborted || res.Errors[0].Count != 2 {
		t.Errorf("SQL error: %d aborted, errors %+v", res.Aborted, res.Errors)
	}
}

// With --exit-on-abort the run ends when the first client aborts; without it the
// other clients go on to the end.
func TestExitOnAbort(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "x.sql")
	if err := os.WriteFile(path, []byte("\\if :client_id = 1\n\\set x 1 / 0\n\\endif\nSELECT pg_sleep(0.01);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tg, _ := target.Parse(dsn)
	r := &pgbench.Run{Files: []string{path}}
	spec := engine.NewSpec()
	spec.Target, spec.Clients = tg, 2
	setup := setUp(t, &spec, &engine.Env{}, r)
	for _, exit := range []bool{true, false} {
		start := time.Now()
		res, err := driver.Run(ctx, driver.Config{Target: tg, Scripts: setup.Scripts, Clients: 2, Duration: 3 * time.Second,
			MaxTries: 1, OutageTimeout: time.Minute, ExitOnAbort: exit})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if res.Aborted != 1 || exit && took > 2*time.Second || !exit && (took < 3*time.Second || res.Committed < 50) {
			t.Errorf("exit-on-abort %v: %d aborted, %d committed, the run took %s", exit, res.Aborted, res.Committed, took)
		}
	}
}

// Scripts are numbered in the order -f and -b were given, as pgbench numbers them
// (in its messages, debug() and the log's script column).
func TestScriptsInCommandLineOrder(t *testing.T) {
	tg, _ := target.Parse(loadedTPCB(t))
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.sql"), filepath.Join(dir, "b.sql")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("SELECT 1;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := engine.NewSpec()
	r := pgbench.Workload{}.NewRun().(*pgbench.Run)
	fs := pflag.NewFlagSet("run pgbench", pflag.ContinueOnError)
	r.Flags(fs)
	if err := fs.Parse([]string{"-f", a, "-b", "select-only@2", "-f", b + "@0", "-b", "simple-update@1", "-f", b}); err != nil {
		t.Fatal(err)
	}
	spec.Target, spec.Clients = tg, 1
	setup := setUp(t, &spec, &engine.Env{}, r)
	var got []string
	for _, s := range setup.Scripts {
		got = append(got, fmt.Sprintf("%s@%d", filepath.Base(s.Name), s.Weight))
	}
	if want := "a.sql@1 select-only@2 simple-update@1 b.sql@1"; strings.Join(got, " ") != want {
		t.Errorf("scripts %v, want %s (the weight-0 one left out)", got, want)
	}
}

// With -r the builtin scripts run as pgbench's own scripts, so that each of their
// commands is timed and named as pgbench's per-statement report names it:
// pgbench's -r of the same scripts names the same commands, in the same order.
func TestPerCommandBuiltins(t *testing.T) {
	bin := pgtest.Pgbench(t)
	dsn := loadedTPCB(t)
	tg, _ := target.Parse(dsn)
	ctx := context.Background()
	code, out := runPgbench(t, bin, t.TempDir(), dsn, "-n", "-r", "-t", "3", "-b", "tpcb-like", "-b", "select-only")
	if code != 0 {
		t.Fatalf("pgbench: exit %d\n%s", code, out)
	}
	var want []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && strings.HasPrefix(l, "      ") {
			want = append(want, strings.Join(f[2:], " "))
		}
	}
	r := &pgbench.Run{Builtins: []string{"tpcb-like", "select-only"}, PerCommand: true}
	spec := engine.NewSpec()
	spec.Target, spec.Clients, spec.Transactions = tg, 2, 10
	setup := setUp(t, &spec, &engine.Env{}, r)
	res, err := driver.Run(ctx, driver.Config{Target: tg, Scripts: setup.Scripts, Clients: 2, Transactions: 10, MaxTries: 1, OutageTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	sum := &engine.Summary{}
	setup.Finish(sum, res)
	f, _ := sum.Figures.(*pgbench.Figures)
	if res.Committed != 20 || f == nil {
		t.Fatalf("%d committed, figures %#v", res.Committed, sum.Figures)
	}
	var got []string
	var sql int64
	for _, st := range f.Statements {
		got = append(got, st.Text)
		if !strings.HasPrefix(st.Text, `\`) {
			sql += st.Count
			if st.Count > 0 && st.AvgMs <= 0 {
				t.Errorf("%q: %d executions of %f ms", st.Text, st.Count, st.AvgMs)
			}
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || sql < 20 {
		t.Errorf("commands timed (%d SQL executions):\n%s\npgbench's:\n%s", sql, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// loadedTPCB is a database of the test's own holding TPC-B's tables at scale 1: a
// copy of one load.
func loadedTPCB(t *testing.T) string {
	t.Helper()
	return pgtest.Loaded(t, "tpcb-1", func(dsn string) error {
		connect := func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
		_, err := tpcb.Load(context.Background(), connect, tpcb.LoadOptions{Scale: 1, Sharding: load.Sharding{Workers: 1}}, nil)
		return err
	})
}
