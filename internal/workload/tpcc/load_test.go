package tpcc

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// loadTime is the load time of the test loads, so that two loads are comparable.
var loadTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

func connector(dsn string) load.Connector {
	return func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
}

func connect(t *testing.T, dsn string) *pgconn.PgConn {
	t.Helper()
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func loadInto(t *testing.T, dsn string, opt LoadOptions) load.Phases {
	t.Helper()
	var out strings.Builder
	p := load.NewProgress(&out, false, "tpcc", 0, "rows")
	phases, err := Load(context.Background(), connector(dsn), opt, p)
	if err != nil {
		t.Fatalf("Load(%+v): %v", opt, err)
	}
	if !strings.Contains(out.String(), "100.0%") {
		t.Errorf("progress %q lacks the final state", out.String())
	}
	return phases
}

// check runs each query and compares its first value with the wanted one.
func check(t *testing.T, dsn string, want map[string]string) {
	t.Helper()
	for q, w := range want {
		if got := pgtest.Query(t, dsn, q); got != w {
			t.Errorf("%s\n= %q, want %q", q, got, w)
		}
	}
}

// TestLoad loads two warehouses twice, once with order_line partitioned over an
// earlier load, and checks row counts, the population rules of clause 4.3.3.1, the
// schema, and that both loads hold the same data.
func TestLoad(t *testing.T) {
	pgtest.Long(t)
	plain, parted := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	phases := loadInto(t, plain, LoadOptions{Warehouses: 2, Time: loadTime})
	for _, step := range []string{"copy", "keys", "vacuum analyze", "procedures"} {
		if !strings.Contains(phases.String(), step) {
			t.Errorf("phases %q lack %s", phases, step)
		}
	}
	// The partitioned load replaces a smaller one, partitioned differently.
	loadInto(t, parted, LoadOptions{Warehouses: 1, Partition: true, Time: loadTime, Sharding: load.Sharding{Workers: 1}})
	loadInto(t, parted, LoadOptions{Warehouses: 2, Partition: true, Time: loadTime, Sharding: load.Sharding{Workers: 3}})

	counts := map[string]string{
		"select count(*) from warehouse": "2",
		"select count(*) from district":  "20",
		"select count(*) from customer":  "60000",
		"select count(*) from history":   "60000",
		"select count(*) from item":      "100000",
		"select count(*) from stock":     "200000",
		"select count(*) from orders":    "60000",
		"select count(*) from new_order": "18000",
		"select (select count(*) from order_line) = (select sum(o_ol_cnt) from orders)": "t",
		"select count(*) between 590000 and 610000 from order_line":                     "t",
		// Vacuumed and analyzed, partitions too: autovacuum has nothing to do in the first run.
		"select count(*) filter (where last_vacuum is null or last_analyze is null) from pg_stat_user_tables where relname <> 'order_line'": "0",
	}
	for _, dsn := range []string{plain, parted} {
		check(t, dsn, counts)
	}

	t.Run("population", func(t *testing.T) {
		check(t, plain, map[string]string{
			// Warehouse and district.
			"select string_agg(distinct w_ytd::text, ',') from warehouse":                                 "300000.00",
			"select string_agg(distinct d_ytd || ' ' || d_next_o_id, ',') from district":                  "30000.00 3001",
			"select bool_and(w_tax between 0 and 0.2 and length(w_name) between 6 and 10) from warehouse": "t",
			"select bool_and(d_tax between 0 and 0.2 and length(d_name) between 6 and 10) from district":  "t",
			"select count(*) from district where d_zip !~ '^[0-9]{4}11111$' or d_state !~ '^[A-Z]{2}$'":   "0",
			"select count(*) from warehouse where w_zip !~ '^[0-9]{4}11111$'":                             "0",
			// Customer and history.
			"select string_agg(distinct c_balance || ' ' || c_ytd_payment || ' ' || c_credit_lim || ' ' || c_payment_cnt || ' ' || c_delivery_cnt || ' ' || c_middle, ',') from customer": "-10.00 10.00 50000.00 1 0 OE",
			"select abs(avg((c_credit = 'BC')::int) - 0.1) < 0.01 from customer":                                                                          "t",
			"select count(*) from customer where c_credit not in ('BC', 'GC')":                                                                            "0",
			"select count(*) from customer where c_zip !~ '^[0-9]{4}11111$' or c_phone !~ '^[0-9]{16}$'":                                                  "0",
			"select count(*) from customer where c_last !~ '^(BAR|OUGHT|ABLE|PRI|PRES|ESE|ANTI|CALLY|ATION|EING){3}$'":                                    "0",
			"select c_last from customer where c_w_id = 2 and c_d_id = 3 and c_id = 372":                                                                  "PRICALLYOUGHT",
			"select count(distinct c_last) from customer where c_w_id = 1 and c_d_id = 1 and c_id <= 1000":                                                "1000",
			"select min(length(c_data)) >= 300 and max(length(c_data)) <= 500 and min(length(c_first)) >= 8 and max(length(c_first)) <= 16 from customer": "t",
			"select min(c_discount) >= 0 and max(c_discount) <= 0.5 and max(c_discount) > 0.45 from customer":                                             "t",
			"select string_agg(distinct c_since::text, ',') from customer":                                                                                "2024-05-06 07:08:09+00",
			"select count(*) from customer c join history h on (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id) = (c_id, c_d_id, c_w_id, c_d_id, c_w_id)":     "60000",
			"select string_agg(distinct h_amount::text, ',') from history":                                                                                "10.00",
			"select min(length(h_data)) >= 12 and max(length(h_data)) <= 24 from history":                                                                 "t",
			// Item and stock.
			"select abs(avg((i_data like '%ORIGINAL%')::int) - 0.1) < 0.01 from item":                                                                 "t",
			"select abs(avg((s_data like '%ORIGINAL%')::int) - 0.1) < 0.01 from stock":                                                                "t",
			"select min(i_price) >= 1 and max(i_price) <= 100 and min(i_im_id) >= 1 and max(i_im_id) <= 10000 from item":                              "t",
			"select min(length(i_data)) || ' ' || max(length(i_data)) || ' ' || min(length(i_name)) || ' ' || max(length(i_name)) from item":          "26 50 14 24",
			"select min(s_quantity) || ' ' || max(s_quantity) || ' ' || max(s_ytd) || ' ' || max(s_order_cnt) || ' ' || max(s_remote_cnt) from stock": "10 100 0 0 0",
			"select count(*) from stock where s_dist_01 !~ '^[0-9A-Za-z]{24}$' or s_dist_10 !~ '^[0-9A-Za-z]{24}$'":                                   "0",
			// Orders, order lines and new orders.
			"select count(*) from orders where (o_carrier_id is null) <> (o_id > 2100)":                                                                              "0",
			"select min(o_carrier_id) || ' ' || max(o_carrier_id) || ' ' || min(o_ol_cnt) || ' ' || max(o_ol_cnt) from orders":                                       "1 10 5 15",
			"select string_agg(distinct o_all_local::text || ' ' || o_entry_d, ',') from orders":                                                                     "1 2024-05-06 07:08:09+00",
			"select count(*) from (select 1 from orders group by o_w_id, o_d_id having count(distinct o_c_id) <> 3000 or min(o_c_id) <> 1 or max(o_c_id) <> 3000) x": "0",
			`select count(*) from orders o left join (select ol_w_id, ol_d_id, ol_o_id, count(*) n, max(ol_number) m from order_line group by 1, 2, 3) l
				on (l.ol_w_id, l.ol_d_id, l.ol_o_id) = (o.o_w_id, o.o_d_id, o.o_id) where l.n is distinct from o.o_ol_cnt or l.m <> l.n`: "0",
			"select sum(ol_amount) from order_line where ol_o_id <= 2100":                                                             "0.00",
			"select count(*) from order_line where ol_o_id > 2100 and not ol_amount between 0.01 and 9999.99":                         "0",
			"select count(*) from order_line where (ol_delivery_d is null) <> (ol_o_id > 2100)":                                       "0",
			"select string_agg(distinct ol_delivery_d::text, ',') from order_line":                                                    "2024-05-06 07:08:09+00",
			"select count(*) from order_line where ol_supply_w_id <> ol_w_id or ol_quantity <> 5 or ol_i_id not between 1 and 100000": "0",
			"select string_agg(distinct n::text, ',') from (select count(*) n from new_order group by no_w_id, no_d_id) x":            "900",
			"select min(no_o_id) || ' ' || max(no_o_id) from new_order":                                                               "2101 3000",
		})
	})

	t.Run("schema", func(t *testing.T) {
		const columns = `select string_agg(format('%s.%s %s%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
				case when a.attnotnull then ' not null' end), E'\n' order by c.relname, a.attnum)
			from pg_attribute a join pg_class c on c.oid = a.attrelid
			where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and c.relname !~ '^ol_'
				and a.attnum > 0 and not a.attisdropped`
		const indexes = `select string_agg(format('%s %s %s', conname, contype, pg_get_indexdef(conindid)), E'\n' order by conname)
			from pg_constraint where connamespace = 'public'::regnamespace and contype in ('p', 'u')`
		for _, dsn := range []string{plain, parted} {
			if got := pgtest.Query(t, dsn, columns); got != hammerDBColumns {
				t.Errorf("columns:\n%s\nwant HammerDB's:\n%s", got, hammerDBColumns)
			}
		}
		if got := pgtest.Query(t, plain, indexes); got != hammerDBKeys {
			t.Errorf("keys:\n%s\nwant HammerDB's:\n%s", got, hammerDBKeys)
		}
		check(t, plain, map[string]string{
			"select string_agg(indexname, ',' order by indexname) from pg_indexes where schemaname = 'public' and indexname like '%_i2'": "customer_i2,orders_i2",
			"select pg_get_indexdef('customer_i2'::regclass)":           "CREATE UNIQUE INDEX customer_i2 ON public.customer USING btree (c_w_id, c_d_id, c_last, c_first, c_id)",
			"select pg_get_indexdef('orders_i2'::regclass)":             "CREATE UNIQUE INDEX orders_i2 ON public.orders USING btree (o_w_id, o_d_id, o_c_id, o_id)",
			"select count(*) from pg_class where relname like 'ol\\_%'": "0",
		})
		check(t, parted, map[string]string{
			"select string_agg(c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid), ', ' order by c.relname) from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'order_line'::regclass": "ol_0 FOR VALUES WITH (modulus 2, remainder 0), ol_1 FOR VALUES WITH (modulus 2, remainder 1)",
			"select pg_get_partkeydef('order_line'::regclass)":                                                                                                   "HASH (ol_w_id)",
			"select indisvalid from pg_index where indexrelid = 'order_line_i1'::regclass":                                                                       "t",
			"select string_agg(conname, ',' order by conname) from pg_constraint where contype = 'p' and conrelid::regclass::text like 'ol\\_%'":                 "ol_0_pkey,ol_1_pkey",
			"select count(*) from pg_class where relname like 'ol\\_%' and relkind = 'r'":                                                                        "2",
			"select count(*) > 0 from pg_stats where tablename = 'order_line' and inherited":                                                                     "t",
			"select count(*) = (select count(distinct tableoid) from order_line) from pg_stats where tablename like 'ol\\_%' and attname = 'ol_i_id'":            "t",
			"select string_agg(relname || ' ' || reltuples, ',' order by relname) from pg_class where relname like 'ol\\_%' and relkind = 'r' and reltuples < 0": "",
		})
	})

	t.Run("same data partitioned or not", func(t *testing.T) {
		for _, table := range tableNames() {
			q := "select count(*) || ' ' || sum(hashtext(t::text)::bigint) from " + table + " t"
			if a, b := pgtest.Query(t, plain, q), pgtest.Query(t, parted, q); a != b {
				t.Errorf("%s differs: %s and %s", table, a, b)
			}
		}
	})

	// COPY FREEZE (PostgreSQL 14 on) leaves every page that holds rows all-visible, so
	// no VACUUM is due. (Bulk extension can leave a few empty pages at the end.)
	t.Run("frozen", func(t *testing.T) {
		want := map[string]string{}
		for _, table := range []string{"stock", "customer", "order_line", "new_order"} {
			want["select relallvisible = (select count(distinct (ctid::text::point)[0]) from "+table+") from pg_class where relname = '"+table+"'"] = "t"
		}
		check(t, plain, want)
	})

	t.Run("procedures", func(t *testing.T) {
		missing, err := MissingProcedures(context.Background(), connect(t, plain))
		if err != nil || missing != nil {
			t.Errorf("MissingProcedures = %v, %v; want none", missing, err)
		}
	})

	t.Run("DetectWarehouses", func(t *testing.T) {
		ctx := context.Background()
		if w, err := DetectWarehouses(ctx, connect(t, parted)); err != nil || w != 2 {
			t.Errorf("DetectWarehouses = %d, %v; want 2", w, err)
		}
		empty := pgtest.NewDatabase(t)
		if _, err := DetectWarehouses(ctx, connect(t, empty)); !errors.Is(err, ErrNotLoaded) || !strings.Contains(err.Error(), "pgbakeoff init tpcc") {
			t.Errorf("DetectWarehouses on an empty database: %v, want ErrNotLoaded naming pgbakeoff init tpcc", err)
		}
		pgtest.Query(t, parted, "delete from district where d_w_id = 2 and d_id = 10")
		if _, err := DetectWarehouses(ctx, connect(t, parted)); err == nil || errors.Is(err, ErrNotLoaded) || !strings.Contains(err.Error(), "incomplete") {
			t.Errorf("DetectWarehouses on a half-loaded database: %v, want an error saying it is incomplete", err)
		}
	})
}

// hammerDBColumns and hammerDBKeys are the shape of a database built by HammerDB's
// PostgreSQL TPROC-C (pgoltp.tcl, CreateTables and CreateIndexes), as the catalog
// describes it.
const hammerDBColumns = `customer.c_since timestamp with time zone not null
customer.c_id integer not null
customer.c_w_id integer not null
customer.c_d_id smallint not null
customer.c_payment_cnt smallint not null
customer.c_delivery_cnt smallint not null
customer.c_first character varying(16) not null
customer.c_middle character(2) not null
customer.c_last character varying(16) not null
customer.c_street_1 character varying(20) not null
customer.c_street_2 character varying(20) not null
customer.c_city character varying(20) not null
customer.c_state character(2) not null
customer.c_zip character(9) not null
customer.c_phone character(16) not null
customer.c_credit character(2) not null
customer.c_credit_lim numeric(12,2) not null
customer.c_discount numeric(4,4) not null
customer.c_balance numeric(12,2) not null
customer.c_ytd_payment numeric(12,2) not null
customer.c_data character varying(500) not null
district.d_w_id integer not null
district.d_next_o_id integer not null
district.d_id smallint not null
district.d_ytd numeric(12,2) not null
district.d_tax numeric(4,4) not null
district.d_name character varying(10) not null
district.d_street_1 character varying(20) not null
district.d_street_2 character varying(20) not null
district.d_city character varying(20) not null
district.d_state character(2) not null
district.d_zip character(9) not null
history.h_date timestamp with time zone not null
history.h_c_id integer
history.h_c_w_id integer not null
history.h_w_id integer not null
history.h_c_d_id smallint not null
history.h_d_id smallint not null
history.h_amount numeric(6,2) not null
history.h_data character varying(24) not null
item.i_id integer not null
item.i_im_id integer not null
item.i_name character varying(24) not null
item.i_price numeric(5,2) not null
item.i_data character varying(50) not null
new_order.no_w_id integer not null
new_order.no_o_id integer not null
new_order.no_d_id smallint not null
order_line.ol_delivery_d timestamp with time zone
order_line.ol_o_id integer not null
order_line.ol_w_id integer not null
order_line.ol_i_id integer not null
order_line.ol_supply_w_id integer not null
order_line.ol_d_id smallint not null
order_line.ol_number smallint not null
order_line.ol_quantity smallint not null
order_line.ol_amount numeric(6,2)
order_line.ol_dist_info character(24)
orders.o_entry_d timestamp with time zone not null
orders.o_id integer not null
orders.o_w_id integer not null
orders.o_c_id integer not null
orders.o_d_id smallint not null
orders.o_carrier_id smallint
orders.o_ol_cnt smallint not null
orders.o_all_local smallint not null
stock.s_i_id integer not null
stock.s_w_id integer not null
stock.s_ytd integer not null
stock.s_quantity smallint not null
stock.s_order_cnt smallint not null
stock.s_remote_cnt smallint not null
stock.s_dist_01 character(24) not null
stock.s_dist_02 character(24) not null
stock.s_dist_03 character(24) not null
stock.s_dist_04 character(24) not null
stock.s_dist_05 character(24) not null
stock.s_dist_06 character(24) not null
stock.s_dist_07 character(24) not null
stock.s_dist_08 character(24) not null
stock.s_dist_09 character(24) not null
stock.s_dist_10 character(24) not null
stock.s_data character varying(50) not null
warehouse.w_id integer not null
warehouse.w_name character varying(10) not null
warehouse.w_street_1 character varying(20) not null
warehouse.w_street_2 character varying(20) not null
warehouse.w_city character varying(20) not null
warehouse.w_state character(2) not null
warehouse.w_zip character(9) not null
warehouse.w_tax numeric(4,4) not null
warehouse.w_ytd numeric(16,2) not null`

const hammerDBKeys = `customer_i1 p CREATE UNIQUE INDEX customer_i1 ON public.customer USING btree (c_w_id, c_d_id, c_id)
district_i1 p CREATE UNIQUE INDEX district_i1 ON public.district USING btree (d_w_id, d_id)
item_i1 p CREATE UNIQUE INDEX item_i1 ON public.item USING btree (i_id)
new_order_i1 p CREATE UNIQUE INDEX new_order_i1 ON public.new_order USING btree (no_w_id, no_d_id, no_o_id)
order_line_i1 p CREATE UNIQUE INDEX order_line_i1 ON public.order_line USING btree (ol_w_id, ol_d_id, ol_o_id, ol_number)
orders_i1 p CREATE UNIQUE INDEX orders_i1 ON public.orders USING btree (o_w_id, o_d_id, o_id)
stock_i1 p CREATE UNIQUE INDEX stock_i1 ON public.stock USING btree (s_i_id, s_w_id)
warehouse_i1 p CREATE UNIQUE INDEX warehouse_i1 ON public.warehouse USING btree (w_id)`

func TestValidate(t *testing.T) {
	cases := []struct {
		name        string
		opt         LoadOptions
		wantErr     string
		wantWorkers int
	}{
		{"warehouses=0", LoadOptions{}, "warehouses must be at least 1, got 0", 0},
		{"warehouses=-3", LoadOptions{Warehouses: -3}, "warehouses must be at least 1, got -3", 0},
		{"warehouses=1/workers=0", LoadOptions{Warehouses: 1}, "", 2},
		{"warehouses=5/workers=8", LoadOptions{Warehouses: 5, Sharding: load.Sharding{Workers: 8}}, "", 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opt.Validate()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Validate() = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || tc.opt.Workers != tc.wantWorkers {
				t.Errorf("Validate() = %v with %d workers, want nil and %d", err, tc.opt.Workers, tc.wantWorkers)
			}
		})
	}
}

func TestLastName(t *testing.T) {
	for num, want := range map[int]string{0: "BARBARBAR", 1: "BARBAROUGHT", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 520: "ESEABLEBAR"} {
		if got := LastName(num); got != want {
			t.Errorf("LastName(%d) = %q, want %q", num, got, want)
		}
		if got := string(appendLastName(nil, num)); got != want {
			t.Errorf("appendLastName(%d) = %q, want %q", num, got, want)
		}
	}
}

func TestCRunLastOK(t *testing.T) {
	for c, want := range map[int]bool{
		CLoadLast: false, CLoadLast + 64: false, CLoadLast + 65: true, CLoadLast - 65: true,
		CLoadLast + 96: false, CLoadLast - 112: false, CLoadLast + 119: false /* > 255 */, CLoadLast - 119: true,
		CLoadLast - 120: false,
	} {
		if got := CRunLastOK(c); got != want {
			t.Errorf("CRunLastOK(%d) = %v, want %v (C_LOAD %d)", c, got, want, CLoadLast)
		}
	}
}

// TestGenerate checks what the database tests cannot see: a batch is the same
// however many warehouses are loaded, depends on the seed, and allocates nothing.
func TestGenerate(t *testing.T) {
	a, b := newPopulation(0, loadTime).sources(1), newPopulation(0, loadTime).sources(3)
	other := newPopulation(42, loadTime).sources(1)
	for i, s := range a {
		batch := s.Batches() - 1 // the last batch of warehouse 1
		first, last := batch*s.BatchRows, min(batch*s.BatchRows+s.BatchRows, s.Rows)
		x, y, z := s.Append(nil, first, last), b[i].Append(nil, first, last), other[i].Append(nil, first, last)
		if !bytes.Equal(x, y) {
			t.Errorf("%s: batch %d differs between 1 and 3 warehouses", s.Table, batch)
		}
		if bytes.Equal(x, z) && s.Table != "new_order" {
			t.Errorf("%s: batch %d is the same with seed 42 as with the default seed", s.Table, batch)
		}
		buf := make([]byte, 0, 4*len(x))
		if n := testing.AllocsPerRun(3, func() { buf = s.Append(buf[:0], first, last) }); n != 0 {
			t.Errorf("%s: %.0f allocations per batch, want 0", s.Table, n)
		}
	}
}

// TestSerialKeys: the server's parallel index builds are turned off for the keys
// only while every job has an index to build and order_line's key is not so large
// that the other jobs would idle through most of it.
func TestSerialKeys(t *testing.T) {
	rows := map[string]int64{}
	for _, task := range copyTasks(newPopulation(1, loadTime).sources(10)) {
		rows[task.Table] = task.Source.Rows
	}
	for _, tc := range []struct {
		workers int
		want    bool
	}{{1, false}, {2, true}, {3, true}, {4, false}, {11, false}} {
		sql, serial := keySQL(rows, 0, tc.workers)
		if serial != tc.want {
			t.Errorf("%d jobs: serial builds %v, want %v", tc.workers, serial, tc.want)
		}
		if len(sql) != len(keys) || !strings.Contains(sql[0], "order_line") {
			t.Errorf("%d jobs: %d statements, order_line's first: want %d, order_line's key first\n%s", tc.workers, len(sql), len(keys), strings.Join(sql, "\n"))
		}
	}
}
