package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// Cardinalities of the initial database, TPC-C clause 1.2.1 and 4.3.3.1.
const (
	DistrictsPerWarehouse = 10
	CustomersPerDistrict  = 3000
	Items                 = 100_000
	StockPerWarehouse     = 100_000
	OrdersPerDistrict     = 3000
	// FirstNewOrder is the first undelivered order of each district: orders from
	// it on have no carrier and a row in new_order (900 per district).
	FirstNewOrder = 2101
	// NewOrdersPerDistrict is the number of new_order rows per district at load.
	NewOrdersPerDistrict = OrdersPerDistrict - FirstNewOrder + 1
)

// CLoadLast is the constant C of NURand(255, 0, 999) that chose C_LAST at load
// (clause 2.1.6). A run must use a C_RUN for which CRunLastOK holds.
const CLoadLast = 157

// CRunLastOK reports whether c may be the run-time C for C_LAST: clause 2.1.6.1
// wants |C_RUN - C_LOAD| within [65, 119] and neither 96 nor 112, so that the
// last names used at run time are neither the same nor unrelated to those loaded.
func CRunLastOK(c int) bool {
	d := c - CLoadLast
	if d < 0 {
		d = -d
	}
	return c >= 0 && c <= 255 && d >= 65 && d <= 119 && d != 96 && d != 112
}

// syllables build C_LAST from a number's three digits, clause 4.3.2.3.
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName is the customer last name for num in [0, 999], clause 4.3.2.3: one
// syllable per decimal digit, so 371 is PRICALLYOUGHT.
func LastName(num int) string {
	return syllables[num/100%10] + syllables[num/10%10] + syllables[num%10]
}

// appendLastName appends LastName(num) without allocating.
func appendLastName(buf []byte, num int) []byte {
	buf = append(buf, syllables[num/100%10]...)
	buf = append(buf, syllables[num/10%10]...)
	return append(buf, syllables[num%10]...)
}

// The tables as HammerDB's PostgreSQL TPROC-C builder declares them (pgoltp.tcl,
// CreateTables and CreateIndexes): the same column order, types, NOT NULL and
// constraint names, so that a database built by either tool has the same shape.
// HammerDB declares the primary keys inline; here they are added after the data
// (see keys), which gives the same constraints and indexes.
var tableDDL = []struct{ name, columns string }{
	{"customer", `c_since timestamp with time zone not null, c_id integer not null, c_w_id integer not null,
		c_d_id smallint not null, c_payment_cnt smallint not null, c_delivery_cnt smallint not null,
		c_first character varying(16) not null, c_middle character(2) not null, c_last character varying(16) not null,
		c_street_1 character varying(20) not null, c_street_2 character varying(20) not null,
		c_city character varying(20) not null, c_state character(2) not null, c_zip character(9) not null,
		c_phone character(16) not null, c_credit character(2) not null, c_credit_lim numeric(12,2) not null,
		c_discount numeric(4,4) not null, c_balance numeric(12,2) not null, c_ytd_payment numeric(12,2) not null,
		c_data character varying(500) not null`},
	{"district", `d_w_id integer not null, d_next_o_id integer not null, d_id smallint not null,
		d_ytd numeric(12,2) not null, d_tax numeric(4,4) not null, d_name character varying(10) not null,
		d_street_1 character varying(20) not null, d_street_2 character varying(20) not null,
		d_city character varying(20) not null, d_state character(2) not null, d_zip character(9) not null`},
	{"history", `h_date timestamp with time zone not null, h_c_id integer, h_c_w_id integer not null,
		h_w_id integer not null, h_c_d_id smallint not null, h_d_id smallint not null,
		h_amount numeric(6,2) not null, h_data character varying(24) not null`},
	{"item", `i_id integer not null, i_im_id integer not null, i_name character varying(24) not null,
		i_price numeric(5,2) not null, i_data character varying(50) not null`},
	{"warehouse", `w_id integer not null, w_name character varying(10) not null,
		w_street_1 character varying(20) not null, w_street_2 character varying(20) not null,
		w_city character varying(20) not null, w_state character(2) not null, w_zip character(9) not null,
		w_tax numeric(4,4) not null, w_ytd numeric(16,2) not null`},
	{"stock", `s_i_id integer not null, s_w_id integer not null, s_ytd integer not null,
		s_quantity smallint not null, s_order_cnt smallint not null, s_remote_cnt smallint not null,
		s_dist_01 character(24) not null, s_dist_02 character(24) not null, s_dist_03 character(24) not null,
		s_dist_04 character(24) not null, s_dist_05 character(24) not null, s_dist_06 character(24) not null,
		s_dist_07 character(24) not null, s_dist_08 character(24) not null, s_dist_09 character(24) not null,
		s_dist_10 character(24) not null, s_data character varying(50) not null`},
	{"new_order", `no_w_id integer not null, no_o_id integer not null, no_d_id smallint not null`},
	{"orders", `o_entry_d timestamp with time zone not null, o_id integer not null, o_w_id integer not null,
		o_c_id integer not null, o_d_id smallint not null, o_carrier_id smallint,
		o_ol_cnt smallint not null, o_all_local smallint not null`},
	{"order_line", `ol_delivery_d timestamp with time zone, ol_o_id integer not null, ol_w_id integer not null,
		ol_i_id integer not null, ol_supply_w_id integer not null, ol_d_id smallint not null,
		ol_number smallint not null, ol_quantity smallint not null, ol_amount numeric(6,2),
		ol_dist_info character(24)`},
}

// tableNames lists the nine tables in creation order.
func tableNames() []string {
	names := make([]string, len(tableDDL))
	for i, t := range tableDDL {
		names[i] = t.name
	}
	return names
}

// index is a primary key or secondary index, built after the data.
type index struct {
	table   string
	name    string
	primary bool
	columns string
}

// keys are HammerDB's primary keys (constraint names table_i1) and its two unique
// secondary indexes (table_i2).
var keys = []index{
	{"customer", "customer_i1", true, "c_w_id, c_d_id, c_id"},
	{"customer", "customer_i2", false, "c_w_id, c_d_id, c_last, c_first, c_id"},
	{"district", "district_i1", true, "d_w_id, d_id"},
	{"item", "item_i1", true, "i_id"},
	{"warehouse", "warehouse_i1", true, "w_id"},
	{"stock", "stock_i1", true, "s_i_id, s_w_id"},
	{"new_order", "new_order_i1", true, "no_w_id, no_d_id, no_o_id"},
	{"orders", "orders_i1", true, "o_w_id, o_d_id, o_id"},
	{"orders", "orders_i2", false, "o_w_id, o_d_id, o_c_id, o_id"},
	{"order_line", "order_line_i1", true, "ol_w_id, ol_d_id, ol_o_id, ol_number"},
}

// sql builds the index on table, which is the index's table or one of its partitions.
func (ix index) sql(table, name string) string {
	if ix.primary {
		return "alter table " + table + " add constraint " + name + " primary key (" + ix.columns + ")"
	}
	return "create unique index " + name + " on " + table + " using btree (" + ix.columns + ")"
}

// orderLinePartitions is how many hash partitions order_line gets with
// --partition. HammerDB makes warehouses/100 partitions from 200 warehouses on and
// none below; here smaller databases get two (one for a single warehouse) so that
// the option always partitions. Hashing spreads a few warehouses unevenly (of 10,
// 2 and 8 land in the two partitions), many evenly.
func orderLinePartitions(warehouses int) int {
	if warehouses >= 200 {
		return warehouses / 100
	}
	return min(warehouses, 2)
}

// createSQL returns the statements that create the empty tables (and order_line's
// partitions, named ol_0, ol_1, ... as HammerDB names them).
func createSQL(partitions int) []string {
	var stmts []string
	for _, t := range tableDDL {
		s := "create table " + t.name + " (" + t.columns + ")"
		if t.name == "order_line" && partitions > 0 {
			s += " partition by hash (ol_w_id)"
		}
		stmts = append(stmts, s)
	}
	for r := range partitions {
		stmts = append(stmts, fmt.Sprintf("create table ol_%d partition of order_line for values with (modulus %d, remainder %d)", r, partitions, r))
	}
	return stmts
}

// dropSQL drops the tables of an earlier load; dropping order_line drops its partitions.
const dropSQL = "drop table if exists customer, district, history, item, warehouse, stock, new_order, orders, order_line"

// ErrNotLoaded means the TPC-C tables are missing.
var ErrNotLoaded = errors.New(`the TPC-C tables are missing: run "pgbakeoff init tpcc" first`)

// DetectWarehouses returns the number of warehouses of a loaded database, after
// checking that the other tables agree, so that a half-finished load is not taken
// for a good one.
func DetectWarehouses(ctx context.Context, conn *pgconn.PgConn) (int, error) {
	if unfinished, err := load.Unfinished(ctx, conn, "warehouse"); err != nil {
		return 0, err
	} else if unfinished {
		return 0, fmt.Errorf("%w: the TPC-C tables were being loaded when the load stopped; run init again", load.ErrUnfinished)
	}
	res, err := conn.Exec(ctx, `select (select count(*) from warehouse), (select count(*) from district),
		exists (select 1 from item where i_id = `+strconv.Itoa(Items)+`)`).ReadAll()
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
			return 0, ErrNotLoaded
		}
		return 0, fmt.Errorf("detect warehouses: %w", err)
	}
	row := res[0].Rows[0]
	warehouses, _ := strconv.Atoi(string(row[0])) // count(*) is always an integer
	districts, _ := strconv.Atoi(string(row[1]))
	if warehouses == 0 {
		return 0, fmt.Errorf(`the warehouse table is empty: the load did not finish; run "pgbakeoff init tpcc" again`)
	}
	if districts != warehouses*DistrictsPerWarehouse || string(row[2]) != "t" {
		return 0, fmt.Errorf(`the TPC-C tables are incomplete (%d warehouses, %d districts): the load did not finish; run "pgbakeoff init tpcc" again`, warehouses, districts)
	}
	return warehouses, nil
}
