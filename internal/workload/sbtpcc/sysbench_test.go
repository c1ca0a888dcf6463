package sbtpcc_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sbtpcc"
)

// ScriptsEnv names the directory of Percona's sysbench-tpcc scripts (tpcc.lua and
// the files it requires), by default the shared fixture.
const ScriptsEnv = "PGBAKEOFF_SYSBENCH_TPCC"

const defaultScripts = "/work/shared/fixtures/sysbench-tpcc"

// sysbenchTPCC runs `sysbench tpcc.lua` on databases of the test server.
type sysbenchTPCC struct {
	bin, dir string
	cfg      *pgconn.Config
}

// newSysbenchTPCC finds sysbench and the scripts, or skips t saying what is missing.
func newSysbenchTPCC(t *testing.T) *sysbenchTPCC {
	t.Helper()
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("sysbench is not installed; .ci/run installs it (Debian package sysbench)")
	}
	dir := os.Getenv(ScriptsEnv)
	if dir == "" {
		dir = defaultScripts
	}
	if _, err := os.Stat(filepath.Join(dir, "tpcc.lua")); err != nil {
		t.Skipf("no sysbench-tpcc scripts: %v; set %s to a checkout of Percona-Lab/sysbench-tpcc", err, ScriptsEnv)
	}
	cfg, err := pgconn.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	return &sysbenchTPCC{bin: bin, dir: dir, cfg: cfg}
}

// run runs `sysbench tpcc.lua <args>` on database db, 1 table set of 1 warehouse,
// and returns its output.
func (sb *sysbenchTPCC) run(t *testing.T, db string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	all := append([]string{"./tpcc.lua", "--db-driver=pgsql", "--pgsql-host=" + sb.cfg.Host, "--pgsql-port=" + strconv.Itoa(int(sb.cfg.Port)),
		"--pgsql-user=" + sb.cfg.User, "--pgsql-password=" + sb.cfg.Password, "--pgsql-db=" + db, "--tables=1", "--scale=1"}, args...)
	cmd := exec.CommandContext(ctx, sb.bin, all...)
	cmd.Dir = sb.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench tpcc.lua %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// check runs tpcc.lua's check and fails t unless all ten of its checks passed.
func (sb *sysbenchTPCC) check(t *testing.T, db string) {
	t.Helper()
	out := sb.run(t, db, "check")
	if n := strings.Count(out, "PASSED"); n != 10 || strings.Contains(out, "FAILED") {
		t.Errorf("tpcc.lua check: %d passed, want 10:\n%s", n, out)
	}
}

// dbName is the database a DSN of NewDatabase names.
func dbName(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}

// catalog describes the table sets' columns, indexes and constraints as the
// server shows them.
const catalog = `select string_agg(x, E'\n' order by x) from (
	select c.relname || '.' || a.attname || ' ' || a.attnum || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull as x
	  from pg_attribute a join pg_class c on c.oid = a.attrelid
	 where c.relnamespace = 'public'::regnamespace and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
	   and c.relname ~ '^(warehouse|district|customer|history|orders|new_orders|order_line|stock|item)1$'
	union all select 'index ' || indexdef from pg_indexes where schemaname = 'public' and indexname !~ 'journal'
	union all select 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
	  from pg_constraint where connamespace = 'public'::regnamespace and conrelid::regclass::text !~ 'journal') t`

// foreignKeys is tpcc_common.lua's statements that add the foreign keys of table
// set 1, read from the script: prepare adds them before it inserts its rows, so
// that every row is checked one at a time, which costs more than half of its
// time; added afterwards, each is validated in one pass.
func (sb *sysbenchTPCC) foreignKeys(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sb.dir, "tpcc_common.lua"))
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for _, m := range regexp.MustCompile(`con:query\("(ALTER TABLE [^)]+ FOREIGN KEY[^)]+\) REFERENCES [^)]+\))"\)`).FindAllStringSubmatch(string(b), -1) {
		stmts = append(stmts, strings.NewReplacer(`"..i.."`, "1", `"..table_num.."`, "1").Replace(m[1]))
	}
	if len(stmts) != 10 {
		t.Fatalf("tpcc_common.lua: %d foreign keys found, want 10:\n%s", len(stmts), strings.Join(stmts, "\n"))
	}
	return stmts
}

// TestSysbenchTPCC runs each tool on the other's data: tpcc.lua prepares a table
// set of one warehouse (1 minute without its foreign keys, which are then added as
// its script writes them), which pgbakeoff detects, checks, runs on and
// checks again; pgbakeoff loads the same, with the same tables, keys and indexes,
// on which tpcc.lua runs and checks. After runs of both tools, in either order,
// both tools' checks pass.
func TestSysbenchTPCC(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	sb := newSysbenchTPCC(t)
	admin := pgtest.DSN(t)

	prepared := pgtest.NewDatabase(t)
	start := time.Now()
	sb.run(t, dbName(t, prepared), "--threads=1", "--use_fk=0", "prepare")
	for _, stmt := range sb.foreignKeys(t) {
		pgtest.Query(t, prepared, stmt)
	}
	t.Logf("tpcc.lua prepare and its foreign keys: %s", time.Since(start).Round(time.Second))

	ours := loaded(t, sbtpcc.LoadOptions{Tables: 1, Scale: 1, UseFK: true, Sharding: load.Sharding{Workers: 2}})
	if a, b := pgtest.Query(t, prepared, catalog), pgtest.Query(t, ours, catalog); a != b || !strings.Contains(a, "fkey_order_line_2_1 FOREIGN KEY") {
		t.Errorf("pgbakeoff's tables differ from tpcc.lua's:\n%s", diff(a, b))
	}

	t.Run("pgbakeoff on tpcc.lua's data", func(t *testing.T) {
		clone := pgtest.NewDatabase(t)
		pgtest.Query(t, admin, "drop database "+dbName(t, clone))
		pgtest.Query(t, admin, "create database "+dbName(t, clone)+" template "+dbName(t, prepared))
		conn, err := pgconn.Connect(context.Background(), clone)
		if err != nil {
			t.Fatal(err)
		}
		found, err := sbtpcc.Detect(context.Background(), conn, "public")
		conn.Close(context.Background())
		if err != nil || found != (sbtpcc.Layout{Tables: 1, Scale: 1}) {
			t.Fatalf("Detect on tpcc.lua's tables = %+v, %v", found, err)
		}
		check(t, clone, "public", 1)
		scripts, err := sbtpcc.Scripts(sbtpcc.RunOptions{Tables: 1, Scale: 1, TrxLevel: "RR"})
		if err != nil {
			t.Fatal(err)
		}
		run(t, clone, scripts, 4, 50)
		check(t, clone, "public", 1)
		sb.check(t, dbName(t, clone))
		sb.run(t, dbName(t, clone), "--threads=2", "--time=3", "run")
		check(t, clone, "public", 1)
		sb.check(t, dbName(t, clone))
	})

	t.Run("tpcc.lua on pgbakeoff's data", func(t *testing.T) {
		db := dbName(t, ours)
		sb.check(t, db)
		out := sb.run(t, db, "--threads=2", "--time=5", "run")
		if !strings.Contains(out, "transactions:") {
			t.Fatalf("tpcc.lua run:\n%s", out)
		}
		t.Logf("tpcc.lua run on pgbakeoff's data:\n%s", out[strings.Index(out, "SQL statistics"):])
		sb.check(t, db)
		check(t, ours, "public", 1)
		// Its new orders' amounts, written with %d, are whole: as pgbakeoff writes them.
		if got := pgtest.Query(t, ours, "select count(*) filter (where ol_amount <> trunc(ol_amount)) || ' ' || (count(*) > 0) from order_line1 where ol_o_id > 3000"); got != "0 true" {
			t.Errorf("tpcc.lua's new order lines: %s with fractional amounts, any", got)
		}
		scripts, err := sbtpcc.Scripts(sbtpcc.RunOptions{Tables: 1, Scale: 1, TrxLevel: "RC"})
		if err != nil {
			t.Fatal(err)
		}
		run(t, ours, scripts, 4, 50)
		check(t, ours, "public", 1)
		sb.check(t, db)
	})
}

// diff is the lines of a and b that the other lacks.
func diff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var out []string
	for l := range ia {
		if !ib[l] {
			out = append(out, "- "+l)
		}
	}
	for l := range ib {
		if !ia[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
