package sbtpcc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sbtpcc"
)

// TestMix: tpcc.lua draws uniform(1, 23) per event, 10 new orders, 10 payments
// and one of each other transaction; with purge uniform(1, 24).
func TestMix(t *testing.T) {
	for _, tt := range []struct {
		purge bool
		want  string
	}{
		{false, "new_order@10,payment@10,orderstatus@1,delivery@1,stocklevel@1"},
		{true, "new_order@10,payment@10,orderstatus@1,delivery@1,stocklevel@1,purge@1"},
	} {
		scripts, err := sbtpcc.Scripts(sbtpcc.RunOptions{Tables: 1, Scale: 1, TrxLevel: "RR", Purge: tt.purge})
		if err != nil {
			t.Fatal(err)
		}
		if got := driver.Mix(scripts); got != tt.want {
			t.Errorf("purge=%t: mix %s, want %s", tt.purge, got, tt.want)
		}
		for _, s := range scripts {
			if err := s.Validate(); err != nil || s.Program == nil {
				t.Errorf("%s: %v, program %v", s.Name, err, s.Program != nil)
			}
		}
	}
}

// TestOptionErrors: each bad option is one line naming it as a study does.
func TestOptionErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    sbtpcc.RunOptions
		want string
	}{
		{"no tables", sbtpcc.RunOptions{Scale: 1, TrxLevel: "RR"}, "tables must be between 1 and 9999, got 0"},
		{"scale", sbtpcc.RunOptions{Tables: 1, Scale: 40000, TrxLevel: "RR"}, "scale must be between 1 and 32767, got 40000"},
		{"level", sbtpcc.RunOptions{Tables: 1, Scale: 1, TrxLevel: "RU"}, `trx_level "RU" is unknown: use RR, RC or SER`},
		{"schema", sbtpcc.RunOptions{Tables: 1, Scale: 1, TrxLevel: "RR", Schema: "My Schema"}, `schema "My Schema" is not a plain lower-case identifier`},
	} {
		_, err := sbtpcc.Scripts(tt.o)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line starting %q", tt.name, err, tt.want)
		}
	}
	for _, tt := range []struct {
		name string
		o    sbtpcc.LoadOptions
		want string
	}{
		{"no warehouses", sbtpcc.LoadOptions{Tables: 1}, "scale must be between 1 and 32767 (warehouse ids are smallint), got 0"},
		{"too many sets", sbtpcc.LoadOptions{Tables: 10000, Scale: 1}, "tables must be between 1 and 9999, got 10000"},
		{"schema", sbtpcc.LoadOptions{Tables: 1, Scale: 1, Schema: "1x"}, `schema "1x" is not a plain lower-case identifier`},
	} {
		err := tt.o.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// run runs the scripts on dsn, each client n transactions, and fails t if any
// failed.
func run(t *testing.T, dsn string, scripts []*driver.Script, clients, n int) *driver.Result {
	t.Helper()
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: scripts, Clients: clients, Transactions: n, MaxTries: 100})
	if err != nil {
		t.Fatal(err)
	}
	var done int64
	for _, r := range res.Scripts {
		if r.Failed != 0 {
			t.Errorf("%s: %d failed", r.Name, r.Failed)
		}
		done += r.Committed + r.RolledBack
	}
	if done != int64(clients*n) {
		t.Errorf("%d transactions ended, want %d", done, clients*n)
	}
	return res
}

// only is the one script named, weighted alone.
func only(t *testing.T, o sbtpcc.RunOptions, name string) []*driver.Script {
	t.Helper()
	scripts, err := sbtpcc.Scripts(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		if s.Name == name {
			return []*driver.Script{s}
		}
	}
	t.Fatalf("no script %s", name)
	return nil
}

// TestTransactions runs the mix on pgbakeoff's data at each isolation level,
// and purge: the checks pass after each but purge, which removes orders and
// history. Transactions of one client count the statements tpcc_run.lua sends.
func TestTransactions(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	dsn := loaded(t, sbtpcc.LoadOptions{Tables: 2, Scale: 2, UseFK: true, Sharding: load.Sharding{Workers: 2}})
	o := sbtpcc.RunOptions{Tables: 2, Scale: 2, TrxLevel: "RR"}

	// stocklevel: BEGIN, two SELECTs, COMMIT. delivery of a warehouse with new
	// orders in every district: per district three SELECTs, a DELETE and three
	// UPDATEs.
	if r := run(t, dsn, only(t, o, sbtpcc.StockLevel), 1, 20).Scripts[0]; r.Queries != (driver.Queries{Read: 40, Other: 40}) {
		t.Errorf("20 stocklevels counted %+v", r.Queries)
	}
	if r := run(t, dsn, only(t, o, sbtpcc.Delivery), 1, 20).Scripts[0]; r.Queries != (driver.Queries{Read: 600, Write: 800, Other: 40}) {
		t.Errorf("20 deliveries counted %+v", r.Queries)
	}

	for _, level := range []string{"RR", "RC", "SER"} {
		t.Run("trx-level="+level, func(t *testing.T) {
			o := o
			o.TrxLevel = level
			scripts, err := sbtpcc.Scripts(o)
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, dsn, scripts, 4, 60)
			for _, r := range res.Scripts {
				t.Logf("%s: %d committed, %d rolled back, %d retries, %+v", r.Name, r.Committed, r.RolledBack, r.Retries, r.Queries)
			}
			check(t, dsn, "public", 2)
		})
	}

	// The run's order lines carry tpcc_run.lua's amounts, whole units.
	if got := pgtest.Query(t, dsn, "select count(*) filter (where ol_amount <> trunc(ol_amount)) || ' ' || (count(*) > 0) from order_line1 where ol_o_id > 3000"); got != "0 true" {
		t.Errorf("fractional amounts and lines of new orders: %s", got)
	}

	// Purge finds nothing to remove until a customer has two delivered orders
	// past the loaded ones: give one customer, whose first order is order 1, the
	// last two delivered orders of district 1. On the first table set's first
	// warehouse, each purge then sends per transaction BEGIN, two SELECTs and
	// COMMIT, and once three DELETEs of an order, its lines and ten history rows.
	pgtest.Query(t, dsn, `update orders1 set o_c_id = (select o_c_id from orders1 where o_w_id = 1 and o_d_id = 1 and o_id = 1)
		where o_w_id = 1 and o_d_id = 1 and o_id in (select min(no_o_id) - k from new_orders1, generate_series(1, 2) k where no_w_id = 1 and no_d_id = 1 group by k)`)
	before := pgtest.Query(t, dsn, "select count(*) from history1")
	one := o
	one.Tables, one.Scale, one.Purge = 1, 1, true
	r := run(t, dsn, only(t, one, sbtpcc.Purge), 1, 5).Scripts[0]
	if after := pgtest.Query(t, dsn, "select count(*) from history1"); after == before || r.Queries.Read != 100 || r.Queries.Other != 100 || r.Queries.Write == 0 {
		t.Errorf("history1 %s rows before 5 purges, %s after; counted %+v", before, after, r.Queries)
	}

	// The whole mix with purge, and customers and items drawn from another
	// distribution.
	d, _ := keydist.Parse("special")
	o.Dist, o.Purge = &d, true
	scripts, err := sbtpcc.Scripts(o)
	if err != nil {
		t.Fatal(err)
	}
	run(t, dsn, scripts, 2, 30)
}
