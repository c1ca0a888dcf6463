package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// catalogSignature is what `pgbench -i` made of a database: its tables, indexes,
// partitions and their bounds, persistence, fill factors, constraints, and the
// rows' counts and sums.
const catalogSignature = `select string_agg(x, E'\n' order by x) from (
  select c.relname || ' ' || c.relkind::text || ' ' || c.relpersistence::text || ' ' || coalesce(array_to_string(c.reloptions, ','), '')
    from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relname like 'pgbench%'
  union all select conname || ' ' || pg_get_constraintdef(oid) from pg_constraint where conrelid::regclass::text like 'pgbench%'
  union all select 'bound ' || c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid) from pg_class c where c.relispartition and c.relname like 'pgbench%'
  union all select 'accounts ' || count(*) || ' ' || sum(bid) || ' ' || sum(abalance) || ' ' || count(filler) from pgbench_accounts
  union all select 'branches ' || count(*) || ' ' || sum(bbalance) || ' ' || count(filler) from pgbench_branches
  union all select 'tellers ' || count(*) || ' ' || sum(bid) || ' ' || count(filler) from pgbench_tellers
  union all select 'history ' || count(*) from pgbench_history) s(x)`

// TestPgbenchInit: -i with pgbench's options loads what `pgbench -i` loads with
// them, through pgbakeoff's loader and writing to stderr alone; options the
// loader cannot follow are refused naming what to do instead, and each mode's
// options are refused in the other, as pgbench refuses them.
func TestPgbenchInit(t *testing.T) {
	pgtest.Long(t)
	bin := pgtest.Pgbench(t)
	var dsn string // a database loaded at scale 2
	first := []string{"-s", "2", "-F", "90", "--partitions", "3", "--partition-method", "hash", "--foreign-keys", "--unlogged-tables", "-q", "-n"}
	if serverMajor(t, pgtest.DSN(t)) >= 18 {
		// PostgreSQL 18 refuses the unlogged partitioned table pgbench before 18
		// makes; TestPgbenchInitUnloggedPartitions checks what is made instead.
		first = slices.DeleteFunc(first, func(o string) bool { return o == "--unlogged-tables" })
	}
	for _, opts := range [][]string{first, {"-s", "1", "--partitions", "2", "-I", "dtGvpf"}} {
		theirs, ours := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
		if dsn == "" {
			dsn = ours
		}
		t.Run(strings.Join(opts, " "), func(t *testing.T) {
			if code, _, errOut := runPgbench(t, bin, append(append([]string{"-i"}, opts...), theirs)...); code != 0 {
				t.Fatalf("pgbench -i: exit %d\n%s", code, errOut)
			}
			code, out, errOut := run(t, append(append([]string{"pgbench", "-i"}, opts...), ours)...)
			if code != 0 || out != "" {
				t.Fatalf("pgbakeoff pgbench -i: exit %d, stdout %q\n%s", code, out, errOut)
			}
			if want, got := pgtest.Query(t, theirs, catalogSignature), pgtest.Query(t, ours, catalogSignature); got != want {
				t.Errorf("pgbakeoff pgbench -i loaded:\n%s\npgbench -i:\n%s", got, want)
			}
		})
	}

	// -s on a run of builtin scripts: the data's scale, and pgbench's warning; the
	// report names the partitions, as pgbench's does.
	const warning = "scale option ignored, using count from pgbench_branches table (2)"
	_, tout, terr := runPgbench(t, bin, "-n", "-s", "5", "-S", "-t", "2", dsn)
	code, out, errOut := run(t, "pgbench", "-n", "-s", "5", "-S", "-t", "2", dsn, "--results", filepath.Join(t.TempDir(), "r.db"))
	if code != 0 || !strings.Contains(out, "scaling factor: 2\npartition method: hash\npartitions: 3\n") || !strings.Contains(errOut, warning) ||
		!strings.Contains(terr, warning) || !slices.Equal(reportKeys(out), reportKeys(tout)) {
		t.Errorf("-s on a run: exit %d\n%s%s\npgbench's:\n%s%s", code, out, errOut, tout, terr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-i", "-I", "dtg"}, "pgbench -i -I dtg"},
		{[]string{"-i", "-I", "dtx"}, `unrecognized initialization step "x"`},
		{[]string{"-i", "--tablespace", "fast"}, "ALTER TABLE"},
		{[]string{"-i", "--partition-method", "hash"}, "--partition-method requires greater than zero --partitions"},
		{[]string{"-i", "-c", "2"}, "cannot be used in initialization (-i) mode"},
		{[]string{"-F", "90", "-S"}, "cannot be used in benchmarking mode"},
		{[]string{"--debug", "-S"}, "run pgbench itself"},
	} {
		code, _, errOut := run(t, append(append([]string{"pgbench"}, c.args...), dsn)...)
		if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want 1 with one line naming %q; stderr:\n%s", c.args, code, c.want, errOut)
		}
	}
}

// TestPgbenchInitUnloggedPartitions: unlogged tables with partitions are every
// table unlogged but the partitioned parent, which PostgreSQL 18 refuses unlogged
// and which holds no rows on any version.
func TestPgbenchInitUnloggedPartitions(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	code, out, errOut := run(t, "pgbench", "-i", "-s", "1", "--partitions", "2", "--unlogged-tables", "-q", dsn)
	if code != 0 || out != "" {
		t.Fatalf("pgbakeoff pgbench -i --partitions 2 --unlogged-tables: exit %d, stdout %q\n%s", code, out, errOut)
	}
	parent := "u"
	if serverMajor(t, dsn) >= 18 {
		parent = "p"
	}
	want := "pgbench_accounts " + parent + "\npgbench_accounts_1 u\npgbench_accounts_2 u\npgbench_branches u\npgbench_history u\npgbench_tellers u"
	got := pgtest.Query(t, dsn, `select string_agg(relname || ' ' || relpersistence::text, E'\n' order by relname) from pg_class
		where relname like 'pgbench%' and relkind in ('r', 'p')`)
	if got != want {
		t.Errorf("persistence:\n%s\nwant:\n%s", got, want)
	}
}

// serverMajor is the major version of the server dsn names.
func serverMajor(t *testing.T, dsn string) int {
	n, err := strconv.Atoi(pgtest.Query(t, dsn, "select current_setting('server_version_num')::int / 10000"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPgbenchHelp: --help names every option pgbench's own help names, and
// --show-script and -b list show the builtin scripts as pgbench shows them.
func TestPgbenchHelp(t *testing.T) {
	bin := pgtest.Pgbench(t)
	_, theirs, _ := runPgbench(t, bin, "--help")
	code, ours, _ := run(t, "pgbench", "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	opts := regexp.MustCompile(`--[a-z][a-z-]+`).FindAllString(theirs, -1)
	if len(opts) < 40 {
		t.Fatalf("pgbench's help names %d options:\n%s", len(opts), theirs)
	}
	for _, o := range opts {
		if !strings.Contains(ours, o) {
			t.Errorf("the help lacks %s", o)
		}
	}
	for _, extra := range []string{"--exit-on-abort", "--continue-on-error", "--reconnect", "--dbname"} {
		if !strings.Contains(ours, extra) {
			t.Errorf("the help lacks %s", extra)
		}
	}
	for _, args := range [][]string{{"--show-script=tpcb-like"}, {"--show-script", "select"}, {"-b", "list"}} {
		_, _, want := runPgbench(t, bin, args...)
		code, out, got := run(t, append([]string{"pgbench"}, args...)...)
		if code != 0 || out != "" || got != want {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\npgbench's:\n%s", args, code, out, got, want)
		}
	}
}

// TestPgbenchContinueOnError: a client whose SQL fails aborts (exit 2), unless
// --continue-on-error, where the transaction fails and the client goes on: every
// transaction is processed or failed.
func TestPgbenchContinueOnError(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table u (k int primary key)")
	script := filepath.Join(t.TempDir(), "unique.sql")
	if err := os.WriteFile(script, []byte("\\set k random(1, 3)\nINSERT INTO u VALUES (:k);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(t.TempDir(), "r.db")
	code, out, errOut := run(t, "pgbench", "-n", "-t", "12", "-f", script, dsn, "--results", results)
	if code != 2 || !strings.Contains(errOut, "duplicate key") || !strings.Contains(errOut, "Run was aborted") {
		t.Errorf("a unique violation: exit %d, want 2\n%s%s", code, out, errOut)
	}
	pgtest.Query(t, dsn, "truncate u")
	code, out, errOut = run(t, "pgbench", "-n", "-t", "12", "--continue-on-error", "-f", script, dsn, "--results", results)
	processed := regexp.MustCompile(`processed: (\d+)/12\n`).FindStringSubmatch(out)
	failed := regexp.MustCompile(`failed transactions: (\d+) `).FindStringSubmatch(out)
	if code != 0 || processed == nil || failed == nil {
		t.Fatalf("--continue-on-error: exit %d\n%s%s", code, out, errOut)
	}
	p, _ := strconv.Atoi(processed[1])
	f, _ := strconv.Atoi(failed[1])
	if rows := pgtest.Query(t, dsn, "select count(*) from u"); p+f != 12 || f == 0 || rows != processed[1] {
		t.Errorf("--continue-on-error: %d processed, %d failed, %s rows; want 12 in all, some failed\n%s", p, f, rows, out)
	}
}

// TestPgbench17Options: PostgreSQL 17's \syncpipeline runs, and --exit-on-abort
// ends the run as the first client aborts, rather than when the others are done.
func TestPgbench17Options(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table t (c int, v bigint)")
	dir, results := t.TempDir(), filepath.Join(t.TempDir(), "r.db")
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sync := write("sync.sql", "\\startpipeline\nINSERT INTO t VALUES (-2, 1);\n\\syncpipeline\nINSERT INTO t VALUES (-2, 2);\n\\endpipeline\n")
	code, out, errOut := run(t, "pgbench", "-n", "-M", "extended", "-t", "3", "-f", sync, dsn, "--results", results)
	if got := pgtest.Query(t, dsn, "select count(*) from t where c = -2"); code != 0 || got != "6" {
		t.Errorf("\\syncpipeline: exit %d, %s rows, want 6\n%s%s", code, got, out, errOut)
	}
	one := write("one.sql", "\\if :client_id = 1\n\\set x 1 / 0\n\\endif\nSELECT 1;\n")
	start := time.Now()
	code, out, errOut = run(t, "pgbench", "-n", "-c", "2", "-T", "30", "--exit-on-abort", "-f", one, dsn, "--results", results)
	if took := time.Since(start); code != 2 || took > 20*time.Second || !strings.Contains(errOut, "Run was aborted") {
		t.Errorf("--exit-on-abort: exit %d after %s, want 2 at once\n%s%s", code, took, out, errOut)
	}
}

// waitRunning waits until clients sessions named like app have run a query of
// the builtin scripts.
func waitRunning(t *testing.T, dsn, app string, clients int) {
	t.Helper()
	q := "select count(*) from pg_stat_activity where datname = current_database() and application_name like '" + app +
		"' and query like 'SELECT abalance%'"
	for deadline := time.Now().Add(20 * time.Second); pgtest.Query(t, dsn, q) != strconv.Itoa(clients); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the clients (%s) did not start", app)
		}
	}
}

// TestPgbenchLostConnections: backends terminated during a run abort their
// clients, as pgbench aborts them (exit 2, "Run was aborted"), unless the run is
// asked to reconnect, where its summary says what was lost and the run counts.
func TestPgbenchLostConnections(t *testing.T) {
	pgtest.Long(t)
	bin := pgtest.Pgbench(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	results := filepath.Join(t.TempDir(), "r.db")
	args := []string{"-n", "-S", "-c", "2", "-T", "3", "-R", "500", dsn}
	terminate := func(app string) {
		pgtest.Query(t, dsn, "select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = current_database() and application_name like '"+app+"'")
	}
	for _, c := range []struct {
		name, app string
		args      []string
		code      int
	}{
		{"pgbench", "pgbench", nil, 2},
		{"pgbakeoff", "pgbakeoff-run-%", []string{"pgbench", "--results", results}, 2},
		{"reconnect", "pgbakeoff-run-%", []string{"pgbench", "--reconnect", "--results", results}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			type result struct {
				code        int
				out, errOut string
			}
			done := make(chan result, 1)
			go func() {
				var r result
				if c.args == nil {
					r.code, r.out, r.errOut = runPgbench(t, bin, args...)
				} else {
					r.code, r.out, r.errOut = run(t, append(c.args, args...)...)
				}
				done <- r
			}()
			waitRunning(t, dsn, c.app, 2)
			terminate(c.app)
			r := <-done
			aborted := strings.Contains(r.errOut, "Run was aborted; the above results are incomplete.")
			if r.code != c.code || aborted != (c.code == 2) || !strings.Contains(r.out, "number of transactions actually processed: ") {
				t.Errorf("exit %d, want %d\n%s%s", r.code, c.code, r.out, r.errOut)
			}
			if c.name == "reconnect" && !strings.Contains(r.errOut, "reconnects: ") {
				t.Errorf("the summary does not say the connections were lost:\n%s", r.errOut)
			}
		})
	}
}

// TestPgbenchServerStopped: a server stopped for good under -R ends the run at
// once, aborted as pgbench's is (exit 2), rather than after the window or a
// wait for the server.
func TestPgbenchServerStopped(t *testing.T) {
	pgtest.Long(t)
	shared := pgtest.Server(t)
	base := t.TempDir()
	// As root, PostgreSQL runs as another user, which must enter base.
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := localpg.Start(t.Context(), localpg.Options{Name: "pgbench-stopped", BaseDir: base,
		Install:  &localpg.Install{BinDir: shared.BinDir, Version: shared.Version, Major: shared.Major},
		Settings: []localpg.Setting{{Name: "fsync", Value: "off"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	dsn := srv.TCPDSN()
	if code, _, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", dsn); code != 0 {
		t.Fatalf("init tpcb: exit %d\n%s", code, errOut)
	}
	type result struct {
		code        int
		out, errOut string
		took        time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		code, out, errOut := run(t, "pgbench", "-n", "-S", "-c", "2", "-T", "60", "-R", "500", dsn, "--results", filepath.Join(t.TempDir(), "r.db"))
		done <- result{code, out, errOut, time.Since(start)}
	}()
	waitRunning(t, dsn, "pgbakeoff-run-%", 2)
	if err := srv.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 2 || !strings.Contains(r.errOut, "Run was aborted; the above results are incomplete.") || r.took > 30*time.Second {
		t.Errorf("exit %d after %s, want 2 at once\n%s%s", r.code, r.took, r.out, r.errOut)
	}
}

// TestPgbenchManyThreads: pgbench takes any -j up to the clients; the drop-in
// runs with as many threads as this machine can use, and says so.
func TestPgbenchManyThreads(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	script := filepath.Join(t.TempDir(), "one.sql")
	if err := os.WriteFile(script, []byte("select 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := strconv.Itoa(engine.MaxJobs() + 1) // one thread more than this machine can use
	code, out, errOut := run(t, "pgbench", "-n", "-c", n, "-j", n, "-t", "1", "-f", script, dsn, "--results", filepath.Join(t.TempDir(), "r.db"))
	if code != 0 || !strings.Contains(errOut, "-j "+n+" is more threads than this machine's") || !strings.Contains(out, "number of transactions actually processed: "+n+"/"+n) {
		t.Errorf("-c %s -j %s: exit %d\n%s%s", n, n, code, out, errOut)
	}
}
