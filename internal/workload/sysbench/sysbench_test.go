package sysbench_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sysbench"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

func connector(dsn string) func(context.Context) (*pgconn.PgConn, error) {
	return func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
}

func loaded(t *testing.T, opt sysbench.LoadOptions) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	if _, err := sysbench.Load(context.Background(), connector(dsn), opt, nil); err != nil {
		t.Fatalf("load: %v", err)
	}
	return dsn
}

func detect(t *testing.T, dsn string) (int, int64) {
	t.Helper()
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	found, err := sysbench.Detect(context.Background(), conn)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	return found.Tables, found.Size
}

// TestLoad checks the tables against what sysbench's prepare makes: the columns,
// defaults, keys and index names, the id sequence, and rows with sysbench's shapes,
// both with a frozen stream per table and with tables split across workers.
func TestLoad(t *testing.T) {
	t.Parallel()
	special, _ := keydist.Parse("special")
	for _, opt := range []sysbench.LoadOptions{
		{Tables: 3, TableSize: 2000, Dist: special, Sharding: load.Sharding{Workers: 2}},
		{Tables: 1, TableSize: 12345, Sharding: load.Sharding{Workers: 3}},
	} {
		t.Run(fmt.Sprintf("tables=%d/workers=%d", opt.Tables, opt.Workers), func(t *testing.T) {
			t.Parallel()
			dsn := loaded(t, opt)
			if n, size := detect(t, dsn); n != opt.Tables || size != opt.TableSize {
				t.Errorf("Detect = %d tables of %d rows, want %d of %d", n, size, opt.Tables, opt.TableSize)
			}
			last := "sbtest" + strconv.Itoa(opt.Tables)
			want := map[string]string{
				// The column definitions of sysbench's CREATE TABLE on PostgreSQL.
				`select string_agg(attname || ' ' || format_type(atttypid, atttypmod) || ' ' || attnotnull || ' ' || coalesce(pg_get_expr(adbin, adrelid), ''), ', ' order by attnum)
				   from pg_attribute left join pg_attrdef on adrelid = attrelid and adnum = attnum
				  where attrelid = '` + last + `'::regclass and attnum > 0`: "id integer true nextval('" + last + "_id_seq'::regclass), k integer true 0, c character(120) true ''::bpchar, pad character(60) true ''::bpchar",
				"select string_agg(indexrelid::regclass || ' ' || pg_get_indexdef(indexrelid), '; ' order by indexrelid::regclass::text) from pg_index where indrelid = '" + last + "'::regclass": "k_" + strconv.Itoa(opt.Tables) + " CREATE INDEX k_" + strconv.Itoa(opt.Tables) + " ON public." + last + " USING btree (k); " + last + "_pkey CREATE UNIQUE INDEX " + last + "_pkey ON public." + last + " USING btree (id)",
				"select count(*) || ' ' || min(id) || ' ' || max(id) || ' ' || count(distinct id) from " + last:                                                                                   fmt.Sprintf("%d 1 %d %d", opt.TableSize, opt.TableSize, opt.TableSize),
				"select last_value from " + last + "_id_seq":                                                      strconv.FormatInt(opt.TableSize, 10),
				"select count(*) from " + last + " where k between 1 and " + strconv.FormatInt(opt.TableSize, 10): strconv.FormatInt(opt.TableSize, 10),
				`select count(*) from ` + last + ` where c::text ~ '^[0-9]{11}(-[0-9]{11}){9}$' and pad::text ~ '^[0-9]{11}(-[0-9]{11}){4}$'
				   and octet_length(c) = 120 and octet_length(pad) = 60`: strconv.FormatInt(opt.TableSize, 10),
				"select count(distinct c) = count(*) from " + last: "t",
			}
			for q, w := range want {
				if got := pgtest.Query(t, dsn, q); got != w {
					t.Errorf("%s\n= %q, want %q", q, got, w)
				}
			}
			// sysbench's special puts 75% of the keys in the middle 1% of the range;
			// uniform about 1%.
			mid := pgtest.Query(t, dsn, fmt.Sprintf("select round(100.0 * count(*) filter (where abs(k - %d) <= %d) / count(*)) from %s",
				opt.TableSize/2, opt.TableSize/100, last))
			pct, _ := strconv.Atoi(mid)
			if opt.Dist.Kind == keydist.Special && (pct < 65 || pct > 85) || opt.Dist.Kind == keydist.Uniform && pct > 5 {
				t.Errorf("%d%% of k in the middle 1%% of the range with %s", pct, opt.Dist)
			}
		})
	}
}

// TestReload loads fewer tables over more: the extra old tables are gone.
func TestReload(t *testing.T) {
	t.Parallel()
	dsn := loaded(t, sysbench.LoadOptions{Tables: 3, TableSize: 100})
	if _, err := sysbench.Load(context.Background(), connector(dsn), sysbench.LoadOptions{Tables: 1, TableSize: 500}, nil); err != nil {
		t.Fatal(err)
	}
	if got := pgtest.Query(t, dsn, "select count(*) from pg_class where relname ~ '^sbtest[0-9]+$'"); got != "1" {
		t.Errorf("%s sbtest tables after reloading 1 over 3", got)
	}
	if n, size := detect(t, dsn); n != 1 || size != 500 {
		t.Errorf("Detect = %d tables of %d rows, want 1 of 500", n, size)
	}
}

func run(t *testing.T, dsn string, s *driver.Script, clients, n int) driver.ScriptResult {
	t.Helper()
	return runAll(t, dsn, s, clients, n).Scripts[0]
}

// runAll is run with the whole result.
func runAll(t *testing.T, dsn string, s *driver.Script, clients, n int) *driver.Result {
	t.Helper()
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{s}, Clients: clients, Transactions: n, MaxTries: 100})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Scripts[0]
	if r.Failed != 0 || r.Committed != int64(clients*n) {
		t.Fatalf("%s: %d committed, %d failed; want %d and 0", s.Name, r.Committed, r.Failed, clients*n)
	}
	return res
}

// eventCommits is what the server committed for the events of res, run by clients
// that each connected once: without each session's start and the statements it
// prepared.
func eventCommits(res *driver.Result, s *driver.Script, clients int) int64 {
	return res.CommitsTotal - int64(clients*(1+len(s.Statements)))
}

// TestScripts runs every script on loaded tables and checks what the writing ones
// did to them.
func TestScripts(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	const tables, size = 2, 3000
	dsn := loaded(t, sysbench.LoadOptions{Tables: tables, TableSize: size})
	opt := sysbench.DefaultOptions(tables, size)
	opt.Clients = 2
	q := func(sql string) int64 {
		v, err := strconv.ParseInt(pgtest.Query(t, dsn, sql), 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return v
	}
	rows := func() int64 { return q("select (select count(*) from sbtest1) + (select count(*) from sbtest2)") }
	sumK := func() int64 { return q("select (select sum(k) from sbtest1) + (select sum(k) from sbtest2)") }

	for _, name := range sysbench.Names {
		t.Run(name, func(t *testing.T) {
			o := opt
			if strings.HasPrefix(name, "select_random") {
				o.Tables = 1
			}
			s, err := sysbench.Script(name, o)
			if err != nil {
				t.Fatal(err)
			}
			rows0, sum0 := rows(), sumK()
			res := runAll(t, dsn, s, 2, 40)
			r := res.Scripts[0]
			events := r.Committed
			switch name {
			case "oltp_read_write":
				if got := rows(); got != rows0 {
					t.Errorf("rows %d -> %d: a delete-insert pair keeps the count", rows0, got)
				}
			case "oltp_update_index":
				if got := sumK(); got != sum0+events {
					t.Errorf("sum(k) %d -> %d after %d events, want +%d", sum0, got, events, events)
				}
			case "oltp_insert":
				if got := rows(); got != rows0+events {
					t.Errorf("rows %d -> %d after %d inserts", rows0, got, events)
				}
				if got := q("select count(*) from (select id from sbtest1 union all select id from sbtest2) t where id > " + strconv.Itoa(size)); got != events {
					t.Errorf("%d rows with ids past the loaded ones, want %d from the sequences", got, events)
				}
			case "oltp_delete":
				if got := rows(); got >= rows0 || got < rows0-events {
					t.Errorf("rows %d -> %d after %d deletes", rows0, got, events)
				}
			case "oltp_update_non_index":
				if got := q(`select count(*) from sbtest1 where c::text !~ '^[0-9]{11}(-[0-9]{11}){9}$'`); got != 0 {
					t.Errorf("%d rows of sbtest1 have a c of another shape", got)
				}
			case "oltp_point_select", "select_random_points", "select_random_ranges":
				if n := eventCommits(res, s, 2); r.Queries != (driver.Queries{Read: events}) || n != events {
					t.Errorf("%d events counted %+v in %d server transactions; want a read and a transaction each", events, r.Queries, n)
				}
			}
		})
	}
}

// TestScriptErrors: bad names and options get one line each, naming the option
// as a study does (the command line spells it as its flag).
func TestScriptErrors(t *testing.T) {
	opt := sysbench.DefaultOptions(4, 1000)
	for _, tt := range []struct {
		name string
		set  func(*sysbench.Options)
		want string
	}{
		{"oltp_nonsense", func(*sysbench.Options) {}, `unknown sysbench script "oltp_nonsense": use oltp_read_write,`},
		{"oltp_read_write", func(o *sysbench.Options) { o.RangeSize = 0 }, "range_size must be between 1 and 2147482648 (a range's last id must fit the integer id column), got 0"},
		{"oltp_read_only", func(o *sysbench.Options) { o.RangeSize = 1 << 31 }, "range_size must be between 1 and 2147482648"},
		{"oltp_read_write", func(o *sysbench.Options) { o.PointSelects = -1 }, "point_selects must be between 0 and 1000, got -1"},
		{"select_random_points", func(o *sysbench.Options) { o.RandomPoints = 0 }, "random_points must be between 1 and 1000, got 0"},
	} {
		o := opt
		tt.set(&o)
		_, err := sysbench.Script(tt.name, o)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line starting %q", tt.name, err, tt.want)
		}
	}
	// As in sysbench, a range may run past the last row, and a script without
	// ranges ignores the range size; select_random_* take sbtest1 whatever the
	// number of tables.
	for _, tt := range []struct {
		name, script string
		set          func(*sysbench.Options)
	}{
		{"range past the last row", "oltp_read_write", func(o *sysbench.Options) { o.RangeSize = 5000 }},
		{"no ranges in the script", "oltp_point_select", func(o *sysbench.Options) { o.RangeSize = 0 }},
		{"ranges turned off", "oltp_read_only", func(o *sysbench.Options) { o.RangeSize, o.RangeSelects = 0, false }},
		{"sbtest1 of 4 tables", "select_random_ranges", func(*sysbench.Options) {}},
	} {
		o := opt
		tt.set(&o)
		if _, err := sysbench.Script(tt.script, o); err != nil {
			t.Errorf("%s (%s): %v", tt.name, tt.script, err)
		}
	}
}

// TestSysbenchCompatible runs sysbench itself on tables pgbakeoff loaded, and
// pgbakeoff on tables sysbench prepared.
func TestSysbenchCompatible(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("sysbench is not installed; .ci/run installs it (Debian package sysbench)")
	}
	cfg, err := pgconn.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	dsn := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", cfg.Host, cfg.Port, cfg.User, cfg.Database)
	sb := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		all := append([]string{"--db-driver=pgsql", "--pgsql-host=" + cfg.Host, "--pgsql-port=" + strconv.Itoa(int(cfg.Port)),
			"--pgsql-user=" + cfg.User, "--pgsql-db=" + cfg.Database, "--tables=2", "--table-size=2000"}, args...)
		out, err := exec.CommandContext(ctx, bin, all...).CombinedOutput()
		if err != nil {
			t.Fatalf("sysbench %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	// sysbench's prepare, then our detection and a run.
	sb("oltp_read_write", "prepare")
	if n, size := detect(t, dsn); n != 2 || size != 2000 {
		t.Fatalf("Detect on sysbench's tables = %d of %d, want 2 of 2000", n, size)
	}
	s, err := sysbench.Script("oltp_read_write", sysbench.DefaultOptions(2, 2000))
	if err != nil {
		t.Fatal(err)
	}
	run(t, dsn, s, 2, 50)

	// Our load, then sysbench's run on it: every event completes.
	if _, err := sysbench.Load(context.Background(), connector(dsn), sysbench.LoadOptions{Tables: 2, TableSize: 2000}, nil); err != nil {
		t.Fatal(err)
	}
	out := sb("oltp_read_write", "--threads=2", "--events=200", "--time=0", "run")
	if !strings.Contains(out, "total number of events:              200") {
		t.Errorf("sysbench did not complete 200 events on pgbakeoff's tables:\n%s", out)
	}
	// And its insert test, which needs the id sequence past the loaded ids.
	out = sb("oltp_insert", "--threads=2", "--events=100", "--time=0", "run")
	if !strings.Contains(out, "total number of events:              100") {
		t.Errorf("sysbench oltp_insert did not complete 100 events:\n%s", out)
	}

	// The same options give the same statements: sysbench's counts and ours agree,
	// with one client so that no event is retried.
	for _, args := range [][]string{
		{"oltp_read_write"},
		{"oltp_read_write", "--point_selects=3", "--simple_ranges=0", "--sum_ranges=2", "--distinct_ranges=0",
			"--index_updates=2", "--non_index_updates=0", "--delete_inserts=2", "--skip_trx=on"},
		{"oltp_read_only", "--range_selects=off", "--point_selects=4"},
		{"oltp_write_only", "--index_updates=0", "--non_index_updates=3"},
	} {
		out := sb(append(args[1:], "--threads=1", "--events=40", "--time=0", args[0], "run")...)
		var theirs driver.Queries
		for _, f := range []struct {
			name string
			n    *int64
		}{{"read", &theirs.Read}, {"write", &theirs.Write}, {"other", &theirs.Other}} {
			m := regexp.MustCompile(`(?m)^\s+` + f.name + `:\s+(\d+)$`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no %s count in sysbench's output:\n%s", f.name, out)
			}
			*f.n, _ = strconv.ParseInt(m[1], 10, 64)
		}
		o := sysbench.DefaultOptions(2, 2000)
		counts := map[string]*int{"point_selects": &o.PointSelects, "simple_ranges": &o.SimpleRanges, "sum_ranges": &o.SumRanges,
			"distinct_ranges": &o.DistinctRanges, "index_updates": &o.IndexUpdates, "non_index_updates": &o.NonIndexUpdates,
			"delete_inserts": &o.DeleteInserts}
		switches := map[string]*bool{"skip_trx": &o.SkipTrx, "range_selects": &o.RangeSelects}
		for _, a := range args[1:] {
			name, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if b := switches[name]; b != nil {
				*b = v == "on"
				continue
			}
			n, err := strconv.Atoi(v)
			if counts[name] == nil || err != nil {
				t.Fatalf("option %s", a)
			}
			*counts[name] = n
		}
		s, err := sysbench.Script(args[0], o)
		if err != nil {
			t.Fatal(err)
		}
		if ours := run(t, dsn, s, 1, 40).Queries; ours != theirs || theirs.Total() == 0 {
			t.Errorf("%v: 40 events counted %+v; sysbench counted %+v", args, ours, theirs)
		}
	}
}

// TestQueryCounts checks what one client's events send, with sysbench's defaults and
// with other options, through the driver's counts of what the server answered: a
// statement that changed no row counts as other, as in sysbench. The writing
// scripts' effect on the tables says which tables each event used.
func TestQueryCounts(t *testing.T) {
	t.Parallel()
	const tables, size, events = 2, 2000, 60
	dsn := loaded(t, sysbench.LoadOptions{Tables: tables, TableSize: size})
	sumK := func(table string) int64 {
		v, err := strconv.ParseInt(pgtest.Query(t, dsn, "select sum(k) from "+table), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	custom := func(o *sysbench.Options) {
		o.PointSelects, o.SimpleRanges, o.SumRanges, o.OrderRanges, o.DistinctRanges = 3, 0, 2, 1, 0
		o.IndexUpdates, o.NonIndexUpdates, o.DeleteInserts = 2, 0, 2
	}
	// The cases share the tables, so they run one after another.
	for _, tt := range []struct {
		name, script string
		set          func(*sysbench.Options)
		perEvent     driver.Queries
		serverTx     int64
	}{
		{"read_write", "oltp_read_write", func(*sysbench.Options) {}, driver.Queries{Read: 14, Write: 4, Other: 2}, 1},
		{"read_write/options", "oltp_read_write", custom, driver.Queries{Read: 6, Write: 6, Other: 2}, 1},
		{"read_write/skip_trx", "oltp_read_write", func(o *sysbench.Options) { custom(o); o.SkipTrx = true }, driver.Queries{Read: 6, Write: 6}, 12},
		{"read_write/no_writes", "oltp_read_write", func(o *sysbench.Options) { o.IndexUpdates, o.NonIndexUpdates, o.DeleteInserts = 0, 0, 0 },
			driver.Queries{Read: 14, Other: 2}, 1},
		{"read_only", "oltp_read_only", func(*sysbench.Options) {}, driver.Queries{Read: 14, Other: 2}, 1},
		{"read_only/no_ranges", "oltp_read_only", func(o *sysbench.Options) { o.RangeSelects = false }, driver.Queries{Read: 10, Other: 2}, 1},
		{"write_only", "oltp_write_only", func(*sysbench.Options) {}, driver.Queries{Write: 4, Other: 2}, 1},
		{"update_non_index", "oltp_update_non_index", func(o *sysbench.Options) { o.NonIndexUpdates = 2 }, driver.Queries{Write: 2}, 2},
		{"point_select", "oltp_point_select", func(o *sysbench.Options) { o.PointSelects = 7 }, driver.Queries{Read: 1}, 1},
		{"insert", "oltp_insert", func(*sysbench.Options) {}, driver.Queries{Write: 1}, 1},
		{"random_points", "select_random_points", func(*sysbench.Options) {}, driver.Queries{Read: 1}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := sysbench.DefaultOptions(tables, size)
			tt.set(&o)
			s, err := sysbench.Script(tt.script, o)
			if err != nil {
				t.Fatal(err)
			}
			res := runAll(t, dsn, s, 1, events)
			r := res.Scripts[0]
			want := driver.Queries{Read: events * tt.perEvent.Read, Write: events * tt.perEvent.Write, Other: events * tt.perEvent.Other}
			if n := eventCommits(res, s, 1); r.Queries != want || n != events*tt.serverTx {
				t.Errorf("%d events counted %+v in %d server transactions, want %+v in %d", events, r.Queries, n, want, events*tt.serverTx)
			}
			if w := sysbench.Writes(tt.script, o); w != (r.Queries.Write > 0) {
				t.Errorf("Writes says %v, but %d events counted %d writes", w, events, r.Queries.Write)
			}
		})
	}

	// Each event updates k on one table, drawn per event: both tables gain, each
	// by a multiple of the updates per event.
	o := sysbench.DefaultOptions(tables, size)
	o.IndexUpdates = 5
	s, err := sysbench.Script("oltp_update_index", o)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := sumK("sbtest1"), sumK("sbtest2")
	r := run(t, dsn, s, 1, events)
	d1, d2 := sumK("sbtest1")-k1, sumK("sbtest2")-k2
	if d1+d2 != 5*events || d1 == 0 || d2 == 0 || d1%5 != 0 || r.Queries != (driver.Queries{Write: 5 * events}) {
		t.Errorf("%d events of 5 index updates raised k by %d on sbtest1 and %d on sbtest2, counted %+v; want %d in all, on both, by fives",
			events, d1, d2, r.Queries, 5*events)
	}

	if !sysbench.Writes("oltp_update_index", o) {
		t.Error("Writes says oltp_update_index does not write")
	}

	// Deletes of rows already gone change nothing: sysbench counts them as other.
	// The special distribution draws the middle 1% of ids three times in four, so
	// ids come up again.
	rows := func() int64 {
		v, err := strconv.ParseInt(pgtest.Query(t, dsn, "select (select count(*) from sbtest1) + (select count(*) from sbtest2)"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	s, err = sysbench.Script("oltp_delete", sysbench.DefaultOptions(tables, size))
	if err != nil {
		t.Fatal(err)
	}
	before := rows()
	r = run(t, dsn, s, 1, events)
	if deleted := before - rows(); r.Queries.Write != deleted || r.Queries.Other == 0 || r.Queries.Total() != events {
		t.Errorf("%d deletes removed %d rows, counted %+v; want the rows removed as writes and the rest, some, as other", events, deleted, r.Queries)
	}
	if !sysbench.Writes("oltp_delete", sysbench.DefaultOptions(tables, size)) {
		t.Error("Writes says oltp_delete does not write")
	}
}

// TestIgnoredErrors: clients that delete and insert the same ids collide on the
// primary key, as in sysbench's delete-inserts; the event is rolled back and run
// again, every event completes, and the tries' statements are counted.
func TestIgnoredErrors(t *testing.T) {
	t.Parallel()
	uniform, _ := keydist.Parse("uniform")
	dsn := loaded(t, sysbench.LoadOptions{Tables: 1, TableSize: 10, Dist: uniform})
	o := sysbench.DefaultOptions(1, 10)
	o.Dist, o.IndexUpdates, o.NonIndexUpdates = uniform, 0, 0 // one row per event: no deadlocks
	s, err := sysbench.Script("oltp_write_only", o)
	if err != nil {
		t.Fatal(err)
	}
	const clients, events = 4, 200
	r := run(t, dsn, s, clients, events) // fails on any failed event
	t.Logf("%d events, %d retries, counted %+v", clients*events, r.Retries, r.Queries)
	// A try that commits sends BEGIN, DELETE, INSERT and COMMIT; one retried sends
	// BEGIN and DELETE, fails on the INSERT (not counted) and ends in ROLLBACK. The
	// DELETE counts as a write or, when another client took the row first, other.
	if n := int64(clients * events); r.Retries == 0 || r.Queries.Total() != 4*n+3*r.Retries || r.Queries.Write < 2*n {
		t.Errorf("%d events on 10 rows: %d retries, counted %+v; want some retries, and 4 statements an event and 3 a retry",
			n, r.Retries, r.Queries)
	}
	if got := pgtest.Query(t, dsn, "select count(*) from sbtest1"); got != "10" {
		t.Errorf("%s rows after the delete-inserts, want 10", got)
	}
}
