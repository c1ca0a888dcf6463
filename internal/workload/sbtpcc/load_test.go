package sbtpcc_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sbtpcc"
)

// TestLoadValues loads two table sets of two warehouses in a schema of their own
// and checks the rows against tpcc_common.lua's prepare: counts, the ranges and
// shapes of its values, and tpcc_check.lua's conditions.
func TestLoadValues(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	start := time.Now()
	dsn := loaded(t, sbtpcc.LoadOptions{Tables: 2, Scale: 2, UseFK: true, Schema: "sb", Sharding: load.Sharding{Workers: 2}})
	t.Logf("loaded 2 table sets of 2 warehouses in %s", time.Since(start).Round(time.Millisecond))
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	found, err := sbtpcc.Detect(context.Background(), conn, "sb")
	conn.Close(context.Background())
	if err != nil || found != (sbtpcc.Layout{Tables: 2, Scale: 2}) {
		t.Fatalf("Detect = %+v, %v; want 2 table sets of 2 warehouses", found, err)
	}
	// one(x): x is one letter repeated.
	pgtest.Query(t, dsn, "create function one(x text) returns bool language sql immutable as $$ select x = repeat(left(x, 1), length(x)) and left(x, 1) between 'a' and 'z' $$")
	for _, tt := range []struct{ name, sql, want string }{
		{"counts", `select (select count(*) from sb.warehouse2) || ' ' || (select count(*) from sb.district2) || ' ' ||
			(select count(*) from sb.customer2) || ' ' || (select count(*) from sb.history2) || ' ' || (select count(*) from sb.orders2) || ' ' ||
			(select count(*) from sb.new_orders2) || ' ' || (select count(*) from sb.stock2) || ' ' || (select count(*) from sb.item2)`,
			"2 20 60000 60000 60000 18000 200000 100000"},
		{"order lines", "select count(*) = (select sum(o_ol_cnt) from sb.orders1) from sb.order_line1", "t"},
		{"warehouses", `select bool_and(w_name ~ '^name-[a-z]{5}$' and w_street_1 ~ '^street1-[a-z]{10}$' and w_street_2 ~ '^street2-[a-z]{10}$'
			and w_city ~ '^city-[a-z]{10}$' and w_state ~ '^[a-z]{2}$' and w_zip ~ '^zip-[0-9]{5}$' and w_tax between 0 and 0.2 and w_ytd = 300000) from sb.warehouse1`, "t"},
		{"districts", `select bool_and(d_name ~ '^name-[a-z]{5}$' and d_zip ~ '^zip-[0-9]{5}$' and d_tax between 0 and 0.2 and d_ytd = 30000 and d_next_o_id = 3001)
			|| ' ' || count(distinct (d_w_id, d_id)) from sb.district1`, "true 20"},
		{"customers", `select bool_and(c_first ~ '^first-[a-z]{2,10}$' and c_middle = 'OE' and c_phone ~ '^[0-9]{16}$' and c_credit in ('GC', 'BC')
			and c_credit_lim = 50000 and c_discount between 0 and 0.5 and c_balance = -10 and c_ytd_payment = 10 and c_payment_cnt = 1
			and c_delivery_cnt = 0 and one(c_data) and length(c_data) between 300 and 500 and c_since is not null) from sb.customer1`, "t"},
		{"last names", `select count(distinct c_last) filter (where c_id <= 1000) || ' ' || bool_and(c_last ~ '^(BAR|OUGHT|ABLE|PRI|PRES|ESE|ANTI|CALLY|ATION|EING){3}$')
			from sb.customer1 where c_w_id = 1 and c_d_id = 1`, "1000 true"},
		{"bad credit", "select round(100.0 * count(*) filter (where c_credit = 'BC') / count(*)) between 8 and 12 from sb.customer1", "t"},
		{"history", `select bool_and(h_amount = 10 and one(h_data) and length(h_data) between 12 and 24 and h_c_w_id = h_w_id and h_c_d_id = h_d_id)
			from sb.history2`, "t"},
		{"orders", `select bool_and(o_ol_cnt between 5 and 15 and o_all_local = 1 and (o_carrier_id between 1 and 10) = (o_id < 2101)
			and (o_carrier_id is null) = (o_id >= 2101)) || ' ' || count(distinct (o_w_id, o_d_id, o_c_id)) from sb.orders1`, "true 60000"},
		{"new orders", "select min(no_o_id) || ' ' || max(no_o_id) from sb.new_orders1", "2101 3000"},
		{"order lines' values", `select bool_and(ol_i_id between 1 and 100000 and ol_supply_w_id = ol_w_id and ol_quantity = 5
			and one(ol_dist_info) and length(ol_dist_info) = 24 and case when ol_o_id < 2101 then ol_delivery_d is not null and ol_amount = 0
			else ol_delivery_d is null and ol_amount between 0 and 9999.99 end) from sb.order_line2`, "t"},
		{"stock", `select bool_and(s_quantity between 10 and 100 and one(s_dist_01) and length(s_dist_01) = 24 and one(s_dist_10) and length(s_dist_10) = 24
			and s_ytd = 0 and s_order_cnt = 0 and s_remote_cnt = 0 and one(s_data) and length(s_data) between 26 and 50) from sb.stock1`, "t"},
		{"items", `select bool_and(i_im_id between 1 and 10000 and i_price >= 1 and i_price <= 101
			and i_name ~ '^item-[0-9]+-[0-9]+\.[0-9]{0,6}' and length(i_name) <= 24 and i_name like 'item-' || i_im_id || '-%'
			and i_data like 'data-' || i_name || '%' and i_data ~ '-[a-z]{5}-[a-z]{5}$' and length(i_data) <= 50) || ' ' || min(i_id) || ' ' || max(i_id) from sb.item2`, "true 1 100000"},
		{"item price in name", "select bool_and(round(split_part(i_name, '-', 3)::numeric, 2) = i_price) from sb.item1 where length(split_part(i_name, '-', 3)) = 9", "t"},
		{"keys", "select count(*) || ' ' || bool_and(convalidated) from pg_constraint where connamespace = 'sb'::regnamespace and contype = 'f'", "20 true"},
		// Vacuumed and analyzed: autovacuum has nothing to do in the first run.
		{"vacuumed", "select count(*) filter (where last_vacuum is not null and last_analyze is not null) || ' ' || count(*) from pg_stat_user_tables where schemaname = 'sb'", "18 18"},
		// The load's ANALYZE skips the unread columns, whose targets are the
		// default again after it (an autovacuum that came first may have left
		// them statistics); the keys' columns have statistics.
		{"statistics", `select (select count(*) from pg_attribute a join pg_class c on c.oid = a.attrelid
			where c.relnamespace = 'sb'::regnamespace and a.attnum > 0 and a.attstattarget = 0) || ' ' ||
			(select count(*) from pg_stats where schemaname = 'sb' and attname in ('s_i_id', 'c_last', 'ol_i_id', 'o_c_id'))`, "0 8"},
		// Eight primary keys (history has none without --force-pk) and six indexes a set.
		{"indexes", "select count(*) from pg_indexes where schemaname = 'sb'", "28"},
	} {
		if got := pgtest.Query(t, dsn, tt.sql); got != tt.want {
			t.Errorf("%s: %s\n= %q, want %q", tt.name, tt.sql, got, tt.want)
		}
	}
	start = time.Now()
	check(t, dsn, "sb", 2)
	t.Logf("checked in %s", time.Since(start).Round(time.Millisecond))
}

// TestShardedLoad loads two warehouses as two shards and a finish: the same rows
// as one load (the same seed), and the checks pass.
func TestShardedLoad(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	whole := loaded(t, sbtpcc.LoadOptions{Tables: 1, Scale: 2, Sharding: load.Sharding{Workers: 2}})
	dsn := pgtest.NewDatabase(t)
	for _, o := range []sbtpcc.LoadOptions{{Sharding: load.Sharding{Shard: 1, Shards: 2}}, {Sharding: load.Sharding{Shard: 0, Shards: 2}}, {Sharding: load.Sharding{Finish: true}}} {
		o.Tables, o.Scale, o.Workers = 1, 2, 2
		if _, err := sbtpcc.Load(context.Background(), connector(dsn), o, nil); err != nil {
			t.Fatalf("load %+v: %v", o, err)
		}
	}
	check(t, dsn, "public", 1)
	const rows = `select md5(string_agg(x, ',' order by x)) from (
		select (select count(*) || ':' || sum(c_balance) || ':' || md5(string_agg(c_last || c_data, '' order by c_w_id, c_d_id, c_id)) from customer1)
		union all select (select count(*) || ':' || md5(string_agg(ol_i_id || ':' || ol_amount, '' order by ol_w_id, ol_d_id, ol_o_id, ol_number)) from order_line1)
		union all select (select md5(string_agg(i_name || i_price, '' order by i_id)) from item1)
		union all select (select md5(string_agg(s_quantity || s_data, '' order by s_w_id, s_i_id)) from stock1)) t(x)`
	if a, b := pgtest.Query(t, whole, rows), pgtest.Query(t, dsn, rows); a != b {
		t.Errorf("the sharded load's rows differ from a single load's")
	}
}
