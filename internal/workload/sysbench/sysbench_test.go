package sysbench_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
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
	n, size, err := sysbench.Detect(context.Background(), conn)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	return n, size
}

// TestLoad checks the tables against what sysbench's prepare makes: the columns,
// defaults, keys and index names, the id sequence, and rows with sysbench's shapes,
// both with a frozen stream per table and with tables split across workers.
func TestLoad(t *testing.T) {
	t.Parallel()
	special, _ := keydist.Parse("special")
	for _, opt := range []sysbench.LoadOptions{
		{Tables: 3, TableSize: 2000, Workers: 2, Dist: special},
		{Tables: 1, TableSize: 12345, Workers: 3},
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
	return r
}

// TestScripts runs every script on loaded tables and checks what the writing ones
// did to them.
func TestScripts(t *testing.T) {
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
			s, queries, err := sysbench.Script(name, o)
			if err != nil {
				t.Fatal(err)
			}
			rows0, sum0 := rows(), sumK()
			r := run(t, dsn, s, 2, 40)
			events := r.Committed
			switch name {
			case "oltp_read_write":
				if queries != (sysbench.Queries{Read: 14, Write: 4, Other: 2}) {
					t.Errorf("queries per event %+v, want sysbench's 14 read, 4 write, 2 other", queries)
				}
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
				if queries != (sysbench.Queries{Read: 1}) || s.ServerTx != 1 {
					t.Errorf("queries per event %+v, server transactions %d; want 1 read in 1", queries, s.ServerTx)
				}
			}
		})
	}
}

// TestScriptErrors: bad names and options get one line each.
func TestScriptErrors(t *testing.T) {
	opt := sysbench.DefaultOptions(4, 1000)
	for _, tt := range []struct {
		name string
		set  func(*sysbench.Options)
		want string
	}{
		{"oltp_nonsense", func(*sysbench.Options) {}, `unknown sysbench script "oltp_nonsense": use oltp_read_write,`},
		{"oltp_read_write", func(o *sysbench.Options) { o.RangeSize = 5000 }, "--range-size must be between 1 and the table size 1000, got 5000"},
		{"oltp_read_write", func(o *sysbench.Options) { o.PointSelects = -1 }, "--point-selects must be between 0 and 1000, got -1"},
		{"select_random_points", func(*sysbench.Options) {}, "select_random_points works on sbtest1 only, as in sysbench: use --tables 1"},
	} {
		o := opt
		tt.set(&o)
		_, _, err := sysbench.Script(tt.name, o)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line starting %q", tt.name, err, tt.want)
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
	s, _, err := sysbench.Script("oltp_read_write", sysbench.DefaultOptions(2, 2000))
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
}
