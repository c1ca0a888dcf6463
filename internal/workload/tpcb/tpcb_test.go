package tpcb_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

func connector(t *testing.T, dsn string) load.Connector {
	t.Helper()
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) (*pgconn.PgConn, error) { return tg.Connect(ctx) }
}

func TestLoad(t *testing.T) {
	cases := []struct {
		name  string
		opt   tpcb.LoadOptions
		check map[string]string // query -> expected first value
	}{
		{"scale=2", tpcb.LoadOptions{Scale: 2, Sharding: load.Sharding{Workers: 2}}, map[string]string{
			"select count(*) from pgbench_accounts":                                "200000",
			"select count(*) from pgbench_tellers":                                 "20",
			"select count(*) from pgbench_branches":                                "2",
			"select count(*) from pgbench_history":                                 "0",
			"select sum(abalance) from pgbench_accounts":                           "0",
			"select count(*) from pgbench_accounts where bid = 2":                  "100000",
			"select count(*) from pgbench_tellers where bid = 2":                   "10",
			"select count(*) from pgbench_tellers where filler is null":            "20",
			"select octet_length(filler) from pgbench_accounts limit 1":            "84",
			"select count(*) from pg_indexes where indexname like 'pgbench_%pkey'": "3",
			"select format_type(atttypid, atttypmod) from pg_attribute where attrelid = 'pgbench_accounts'::regclass and attname = 'aid'": "integer",
		}},
		{"partitions=3/range", tpcb.LoadOptions{Scale: 1, Partitions: 3, Sharding: load.Sharding{Workers: 2}}, map[string]string{
			"select count(*) from pg_inherits where inhparent = 'pgbench_accounts'::regclass": "3",
			"select count(*) from pgbench_accounts_3":                                         "33332",
			"select count(*) from pgbench_accounts":                                           "100000",
		}},
		{"partitions=2/hash", tpcb.LoadOptions{Scale: 1, Partitions: 2, PartitionMethod: "hash", Sharding: load.Sharding{Workers: 2}}, map[string]string{
			"select count(*) from pg_inherits where inhparent = 'pgbench_accounts'::regclass": "2",
			"select count(*) from pgbench_accounts":                                           "100000",
		}},
		{"fillfactor=90/unlogged/foreign-keys", tpcb.LoadOptions{Scale: 1, FillFactor: 90, Unlogged: true, ForeignKeys: true, Sharding: load.Sharding{Workers: 1}}, map[string]string{
			"select reloptions::text from pg_class where relname = 'pgbench_accounts'":            "{fillfactor=90}",
			"select relpersistence from pg_class where relname = 'pgbench_tellers'":               "u",
			"select count(*) from pg_constraint where contype = 'f' and conname like 'pgbench_%'": "5",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dsn := pgtest.NewDatabase(t)
			var out strings.Builder
			p := load.NewProgress(&out, false, "tpcb", 0, "rows")
			phases, err := tpcb.Load(context.Background(), connector(t, dsn), tc.opt, p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "100.0%") || !strings.Contains(phases.String(), "primary keys") {
				t.Errorf("progress %q / phases %q lack the final state", out.String(), phases)
			}
			for q, want := range tc.check {
				if got := pgtest.Query(t, dsn, q); got != want {
					t.Errorf("%s = %q, want %q", q, got, want)
				}
			}
			conn, err := connector(t, dsn)(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if scale, err := tpcb.DetectScale(context.Background(), conn); err != nil || scale != tc.opt.Scale {
				t.Errorf("DetectScale = %d, %v; want %d", scale, err, tc.opt.Scale)
			}
		})
	}
}

// TestReload loads over an existing dataset of another shape: the old tables, their
// partitions and schemas left by a load that died mid-drop are all gone afterwards,
// and the new accounts are frozen.
func TestReload(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	if _, err := tpcb.Load(ctx, connector(t, dsn), tpcb.LoadOptions{Scale: 1, Partitions: 3, ForeignKeys: true, Sharding: load.Sharding{Workers: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	pgtest.Query(t, dsn, "create schema pgbakeoff_dropping_1_dead; create table pgbakeoff_dropping_1_dead.t (x int)")
	if _, err := tpcb.Load(ctx, connector(t, dsn), tpcb.LoadOptions{Scale: 2, Sharding: load.Sharding{Workers: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"select count(*) from pg_namespace where nspname like 'pgbakeoff%'":                       "0",
		"select count(*) from pg_class where relname like 'pgbench_accounts_%' and relkind = 'r'": "0",
		"select count(*) from pg_constraint where contype = 'f'":                                  "0",
		"select count(*) from pgbench_accounts":                                                   "200000",
		"select relkind from pg_class where relname = 'pgbench_accounts'":                         "r",
	} {
		if got := pgtest.Query(t, dsn, q); got != want {
			t.Errorf("%s = %q, want %q", q, got, want)
		}
	}
	if pgtest.Query(t, dsn, "select count(*) from pg_available_extensions where name = 'pg_visibility'") == "1" {
		pgtest.Query(t, dsn, "create extension if not exists pg_visibility")
		if n := pgtest.Query(t, dsn, "select count(*) from pg_visibility_map('pgbench_accounts') where not all_frozen"); n != "0" {
			t.Errorf("%s pages of pgbench_accounts are not frozen", n)
		}
	}
}

// TestSchemaMatchesPgbench loads one database with pgbench -i and one with pgbakeoff
// and compares their columns, types, options and indexes.
func TestSchemaMatchesPgbench(t *testing.T) {
	pgbench := pgtest.Pgbench(t)
	ours, theirs := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	if _, err := tpcb.Load(context.Background(), connector(t, ours), tpcb.LoadOptions{Scale: 1, Partitions: 2, Sharding: load.Sharding{Workers: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	runPgbench(t, pgbench, theirs, "-i", "-s", "1", "--partitions", "2", "-q")
	const describe = `select string_agg(format('%s.%s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull), ', ' order by c.relname, a.attnum)
		|| ' | ' || (select string_agg(relname || coalesce(reloptions::text, '') || relkind::text, ', ' order by relname) from pg_class where relname like 'pgbench%')
		from pg_attribute a join pg_class c on c.oid = a.attrelid
		where c.relname like 'pgbench%' and a.attnum > 0 and not a.attisdropped`
	if a, b := pgtest.Query(t, ours, describe), pgtest.Query(t, theirs, describe); a != b {
		t.Errorf("schema differs:\npgbakeoff: %s\npgbench:   %s", a, b)
	}
	const data = `select md5(string_agg(format('%s %s %s %s', aid, bid, abalance, filler), ',' order by aid)) from pgbench_accounts`
	if a, b := pgtest.Query(t, ours, data), pgtest.Query(t, theirs, data); a != b {
		t.Errorf("pgbench_accounts data differs: %s vs %s", a, b)
	}
}

// TestPgbenchDatabaseRunsHere: a database initialized by pgbench -i runs every
// builtin script under pgbakeoff without a failure.
func TestPgbenchDatabaseRunsHere(t *testing.T) {
	pgtest.Long(t)
	pgbench := pgtest.Pgbench(t)
	dsn := pgtest.NewDatabase(t)
	runPgbench(t, pgbench, dsn, "-i", "-s", "2", "-q")
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tpcb.ScriptNames() {
		for _, proto := range []driver.Protocol{driver.Prepared, driver.Extended, driver.Simple} {
			t.Run("script="+name+"/protocol="+proto.String(), func(t *testing.T) {
				scripts, err := tpcb.ParseScripts([]string{name}, 2)
				if err != nil {
					t.Fatal(err)
				}
				const balances = "select (select sum(abalance) from pgbench_accounts) - (select sum(tbalance) from pgbench_tellers) || ',' || (select sum(tbalance) from pgbench_tellers) - (select sum(bbalance) from pgbench_branches)"
				balBefore := pgtest.Query(t, dsn, balances)
				before := pgtest.Query(t, dsn, "select count(*) from pgbench_history")
				res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: scripts, Clients: 2, Protocol: proto, Transactions: 50})
				if err != nil {
					t.Fatal(err)
				}
				if res.Committed != 100 || res.Failed != 0 {
					t.Fatalf("committed %d failed %d (%v), want 100 and 0", res.Committed, res.Failed, res.Errors)
				}
				after := pgtest.Query(t, dsn, "select count(*) from pgbench_history")
				if name != "select-only" && after == before {
					t.Errorf("pgbench_history did not grow (%s rows)", after)
				}
				// Balances move together in tpcb-like: every delta lands on all three tables.
				if name == "tpcb-like" {
					if balAfter := pgtest.Query(t, dsn, balances); balAfter != balBefore {
						t.Errorf("tpcb-like moved account, teller and branch balances apart: differences %s before, %s after", balBefore, balAfter)
					}
				}
			})
		}
	}
}

// TestOurDatabaseRunsUnderPgbench: pgbench runs on pgbakeoff's load with no failure.
func TestOurDatabaseRunsUnderPgbench(t *testing.T) {
	pgtest.Long(t)
	pgbench := pgtest.Pgbench(t)
	dsn := pgtest.NewDatabase(t)
	if _, err := tpcb.Load(context.Background(), connector(t, dsn), tpcb.LoadOptions{Scale: 2, Sharding: load.Sharding{Workers: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	out := runPgbench(t, pgbench, dsn, "-n", "-b", "tpcb-like", "-c", "2", "-t", "100", "-M", "prepared")
	if !strings.Contains(out, "scaling factor: 2") || !strings.Contains(out, "number of transactions actually processed: 200/200") {
		t.Errorf("pgbench output lacks the expected scale and count:\n%s", out)
	}
}

func TestParseScripts(t *testing.T) {
	cases := []struct {
		name    string
		specs   []string
		want    string
		wantErr string
	}{
		{"default", nil, "tpcb-like", ""},
		{"weights", []string{"tpcb-like@9", "select-only@1"}, "tpcb-like@9,select-only@1", ""},
		{"prefix", []string{"select"}, "select-only", ""},
		{"unknown", []string{"tpcc"}, "", `unknown script "tpcc"`},
		{"ambiguous", []string{"s"}, "", `unknown script "s"`},
		{"bad weight", []string{"tpcb-like@x"}, "", "weight after @"},
		{"twice", []string{"tpcb-like", "tpcb-like@2"}, "", "given twice"},
		{"all zero", []string{"tpcb-like@0"}, "", "weight 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tpcb.ParseScripts(tc.specs, 1)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := driver.Mix(s); got != tc.want {
				t.Errorf("Mix = %q, want %q", got, tc.want)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func runPgbench(t *testing.T, pgbench, dsn string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pgbench, append(args, dsn)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %v: %v\n%s", args, err, out)
	}
	return string(out)
}
