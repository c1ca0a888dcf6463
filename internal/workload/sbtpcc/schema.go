package sbtpcc

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// Cardinalities of tpcc_common.lua.
const (
	Items                = 100_000 // MAXITEMS, per table set
	Districts            = 10      // DIST_PER_WARE
	CustomersPerDistrict = 3000    // CUST_PER_DIST
	OrdersPerDistrict    = 3000
	// FirstNewOrder is the first undelivered order of a district at load: orders
	// from it on have no carrier and a new_orders row.
	FirstNewOrder     = 2101
	StockPerWarehouse = Items
)

// Limits of the options: warehouse ids are smallint columns, and table set
// numbers are kept within what Detect reads.
const (
	MaxScale  = 32767
	MaxTables = 9999
)

// base names of a table set's tables, in the order prepare creates them.
var bases = [...]string{"warehouse", "district", "customer", "history", "orders", "new_orders", "order_line", "stock", "item"}

// schemaRe: a schema name as sysbench-tpcc's --pgsql_schema takes it, an unquoted
// identifier (written into SET search_path), lower case as PostgreSQL folds it.
var schemaRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// checkSchema refuses a schema name that is not a plain identifier.
func checkSchema(s string) error {
	if !schemaRe.MatchString(s) {
		return engine.FieldErrorf("schema", "%q is not a plain lower-case identifier (letters, digits and _, not starting with a digit)", s)
	}
	return nil
}

// names gives the tables of one schema their qualified names.
type names string

// t is table set n's table base: "public.customer3".
func (s names) t(base string, n int) string { return string(s) + "." + base + strconv.Itoa(n) }

// createSQL creates table set n as tpcc_common.lua's create_tables does on
// PostgreSQL (smallint for its tinyint, timestamp for its datetime), without the
// primary keys, which keySQL adds once the rows are in. forcePK gives history
// the key column --force_pk asks for, as PostgreSQL spells an auto-increment.
func createSQL(s names, n int, forcePK bool) []string {
	histID := ""
	if forcePK {
		histID = "id serial not null, "
	}
	return []string{
		"create table " + s.t("warehouse", n) + ` (w_id smallint not null, w_name varchar(10), w_street_1 varchar(20),
	w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4,2), w_ytd decimal(12,2))`,
		"create table " + s.t("district", n) + ` (d_id smallint not null, d_w_id smallint not null, d_name varchar(10),
	d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,2),
	d_ytd decimal(12,2), d_next_o_id int)`,
		"create table " + s.t("customer", n) + ` (c_id int not null, c_d_id smallint not null, c_w_id smallint not null,
	c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20),
	c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp, c_credit char(2),
	c_credit_lim bigint, c_discount decimal(4,2), c_balance decimal(12,2), c_ytd_payment decimal(12,2),
	c_payment_cnt smallint, c_delivery_cnt smallint, c_data text)`,
		"create table " + s.t("history", n) + ` (` + histID + `h_c_id int, h_c_d_id smallint, h_c_w_id smallint, h_d_id smallint,
	h_w_id smallint, h_date timestamp, h_amount decimal(6,2), h_data varchar(24))`,
		"create table " + s.t("orders", n) + ` (o_id int not null, o_d_id smallint not null, o_w_id smallint not null,
	o_c_id int, o_entry_d timestamp, o_carrier_id smallint, o_ol_cnt smallint, o_all_local smallint)`,
		"create table " + s.t("new_orders", n) + ` (no_o_id int not null, no_d_id smallint not null, no_w_id smallint not null)`,
		"create table " + s.t("order_line", n) + ` (ol_o_id int not null, ol_d_id smallint not null, ol_w_id smallint not null,
	ol_number smallint not null, ol_i_id int, ol_supply_w_id smallint, ol_delivery_d timestamp, ol_quantity smallint,
	ol_amount decimal(6,2), ol_dist_info char(24))`,
		"create table " + s.t("stock", n) + ` (s_i_id int not null, s_w_id smallint not null, s_quantity smallint,
	s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),
	s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24),
	s_ytd decimal(8,0), s_order_cnt smallint, s_remote_cnt smallint, s_data varchar(50))`,
		"create table " + s.t("item", n) + ` (i_id int not null, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50))`,
	}
}

// indexes are prepare's keys and indexes of a table set, the costliest to build
// first; a primary key has no name here, and history has one only with
// --force-pk.
var indexes = [...]struct{ base, name, cols string }{
	{"order_line", "fkey_order_line_2", "ol_supply_w_id, ol_i_id"},
	{"order_line", "", "ol_w_id, ol_d_id, ol_o_id, ol_number"},
	{"stock", "", "s_w_id, s_i_id"},
	{"stock", "fkey_stock_2", "s_i_id"},
	{"customer", "", "c_w_id, c_d_id, c_id"},
	{"customer", "idx_customer", "c_w_id, c_d_id, c_last, c_first"},
	{"orders", "", "o_w_id, o_d_id, o_id"},
	{"orders", "idx_orders", "o_w_id, o_d_id, o_c_id, o_id"},
	{"history", "fkey_history_1", "h_c_w_id, h_c_d_id, h_c_id"},
	{"history", "fkey_history_2", "h_w_id, h_d_id"},
	{"history", "", "id"},
	{"item", "", "i_id"},
	{"new_orders", "", "no_w_id, no_d_id, no_o_id"},
	{"district", "", "d_w_id, d_id"},
	{"warehouse", "", "w_id"},
}

// keySQL builds table set n's indexes, each a step of its own, so that the
// connections share out one table's as well as different tables' (CREATE INDEX
// locks the table against writes, not against another CREATE INDEX). A primary
// key's is a unique index named as PostgreSQL names the key's, which pkSQL then
// makes the key.
func keySQL(s names, n int, forcePK bool) []string {
	var sql []string
	for _, ix := range indexes {
		switch {
		case ix.base == "history" && ix.name == "" && !forcePK:
		case ix.name == "":
			sql = append(sql, "create unique index "+s.pkey(ix.base, n)+" on "+s.t(ix.base, n)+" ("+ix.cols+")")
		default:
			sql = append(sql, "create index "+ix.name+strconv.Itoa(n)+" on "+s.t(ix.base, n)+" ("+ix.cols+")")
		}
	}
	return sql
}

// pkSQL makes table set n's unique indexes of keySQL its primary keys: in the
// catalog the same as a key added with its columns, without reading a row (the
// columns are NOT NULL), but under a lock that waits for every other command on
// the table, so once every index is built.
func pkSQL(s names, n int, forcePK bool) []string {
	var sql []string
	for _, ix := range indexes {
		if ix.name == "" && (ix.base != "history" || forcePK) {
			sql = append(sql, "alter table "+s.t(ix.base, n)+" add primary key using index "+s.pkey(ix.base, n))
		}
	}
	return sql
}

// pkey is the name of table set n's table base's primary key (and its index),
// unqualified: "order_line3_pkey".
func (s names) pkey(base string, n int) string { return base + strconv.Itoa(n) + "_pkey" }

// foreignKeys are prepare's foreign keys (--use_fk) of a table set, named
// fkey_<name>_<set>.
var foreignKeys = [...]struct{ base, name, cols, ref, refCols string }{
	{"order_line", "fkey_order_line_1", "ol_w_id, ol_d_id, ol_o_id", "orders", "o_w_id, o_d_id, o_id"},
	{"order_line", "fkey_order_line_2", "ol_supply_w_id, ol_i_id", "stock", "s_w_id, s_i_id"},
	{"stock", "fkey_stock_1", "s_w_id", "warehouse", "w_id"},
	{"stock", "fkey_stock_2", "s_i_id", "item", "i_id"},
	{"customer", "fkey_customer_1", "c_w_id, c_d_id", "district", "d_w_id, d_id"},
	{"history", "fkey_history_1", "h_c_w_id, h_c_d_id, h_c_id", "customer", "c_w_id, c_d_id, c_id"},
	{"history", "fkey_history_2", "h_w_id, h_d_id", "district", "d_w_id, d_id"},
	{"orders", "fkey_orders_1", "o_w_id, o_d_id, o_c_id", "customer", "c_w_id, c_d_id, c_id"},
	{"new_orders", "fkey_new_orders_1", "no_w_id, no_d_id, no_o_id", "orders", "o_w_id, o_d_id, o_id"},
	{"district", "fkey_district_1", "d_w_id", "warehouse", "w_id"},
}

// fkSQL adds table set n's foreign keys without checking the rows (NOT VALID):
// each locks two tables of the set against the others (SHARE ROW EXCLUSIVE),
// so they go one after the other, and none reads a row. checkSQL checks them
// then.
func fkSQL(s names, n int) []string {
	i := strconv.Itoa(n)
	var add []string
	for _, fk := range foreignKeys {
		add = append(add, "alter table "+s.t(fk.base, n)+" add constraint "+fk.name+"_"+i+
			" foreign key ("+fk.cols+") references "+s.t(fk.ref, n)+" ("+fk.refCols+") not valid")
	}
	return add
}

// unread are the wide text columns that no transaction or check filters, joins
// or sorts on, and where most of an ANALYZE's time goes: the load's skips them
// (statistics 0), then sets them back to the server's default target for
// autovacuum's next analyze to fill in.
var unread = []struct{ base, cols string }{
	{"stock", "s_dist_01 s_dist_02 s_dist_03 s_dist_04 s_dist_05 s_dist_06 s_dist_07 s_dist_08 s_dist_09 s_dist_10 s_data"},
	{"customer", "c_street_1 c_street_2 c_city c_state c_zip c_phone c_data"},
	{"item", "i_name i_data"},
	{"history", "h_data"},
	{"order_line", "ol_dist_info"},
}

// statsSQL sets the statistics target of table set n's unread columns: 0 to
// leave them out of ANALYZE, -1 for the server's default.
func statsSQL(s names, n, target int) []string {
	var sql []string
	for _, u := range unread {
		var alter []string
		for _, c := range strings.Fields(u.cols) {
			alter = append(alter, "alter column "+c+" set statistics "+strconv.Itoa(target))
		}
		sql = append(sql, "alter table "+s.t(u.base, n)+" "+strings.Join(alter, ", "))
	}
	return sql
}

// checkOrder is the order in which the tables are vacuumed and checked
// (checkSQL): the costliest first, so that the connections run out of work
// together.
var checkOrder = [...]string{"order_line", "stock", "customer", "item", "history", "orders", "new_orders", "district", "warehouse"}

// checkSQL validates table set n's table base against its foreign keys, in one
// statement group, or is "" when it has none. The groups of different tables
// run in parallel: VALIDATE CONSTRAINT locks the table it checks against
// another on it (SHARE UPDATE EXCLUSIVE), and the table it looks the keys up in
// only against ALTER and DROP (ROW SHARE). A key validated so is in the catalog
// what prepare's, added valid, is.
func checkSQL(s names, n int, base string) string {
	var stmts []string
	for _, fk := range foreignKeys {
		if fk.base == base {
			stmts = append(stmts, "alter table "+s.t(base, n)+" validate constraint "+fk.name+"_"+strconv.Itoa(n))
		}
	}
	return strings.Join(stmts, ";\n")
}

// ErrNotLoaded means the schema has no sysbench-tpcc tables.
var ErrNotLoaded = errors.New("no sysbench-tpcc tables")

// Layout is what Detect finds: table sets 1..Tables, each with warehouses
// 1..Scale.
type Layout struct{ Tables, Scale int }

// Detect finds the table sets in schema: sets 1..N with all nine tables, and the
// warehouses of the first. A load that did not finish, a set with tables missing
// or an empty warehouse1 is an error saying what to do.
func Detect(ctx context.Context, conn *pgconn.PgConn, schema string) (Layout, error) {
	res, err := conn.Exec(ctx, `select coalesce(max(n), 0), count(*) from (
		select substring(c.relname from '[0-9]+$')::int as n, count(*) as tables
		from pg_class c join pg_namespace s on s.oid = c.relnamespace
		where s.nspname = '`+schema+`' and c.relkind in ('r', 'p')
			and c.relname ~ '^(warehouse|district|customer|history|orders|new_orders|order_line|stock|item)[1-9][0-9]{0,3}$'
		group by 1) t where tables = 9`).ReadAll()
	if err != nil {
		return Layout{}, fmt.Errorf("look for the sysbench-tpcc tables: %w", err)
	}
	hi, _ := strconv.Atoi(string(res[0].Rows[0][0]))
	count, _ := strconv.Atoi(string(res[0].Rows[0][1]))
	if count == 0 {
		return Layout{}, ErrNotLoaded
	}
	s := names(schema)
	if unfinished, err := load.Unfinished(ctx, conn, s.t("warehouse", 1)); err != nil {
		return Layout{}, err
	} else if unfinished {
		return Layout{}, fmt.Errorf("%w: the sysbench-tpcc tables were being loaded when the load stopped; load them again with `pgbakeoff init sysbench-tpcc`", load.ErrUnfinished)
	}
	if hi != count {
		return Layout{}, fmt.Errorf("the sysbench-tpcc table sets are not 1..%d: %d of them are missing or incomplete; load them again", hi, hi-count)
	}
	res, err = conn.Exec(ctx, "select coalesce(max(w_id), 0), count(*) from "+s.t("warehouse", 1)).ReadAll()
	if err != nil {
		return Layout{}, fmt.Errorf("read the warehouses: %w", err)
	}
	scale, _ := strconv.Atoi(string(res[0].Rows[0][0]))
	rows, _ := strconv.Atoi(string(res[0].Rows[0][1]))
	if scale == 0 || rows != scale {
		return Layout{}, fmt.Errorf("%s holds %d warehouses numbered up to %d, not 1..N: load the tables again", s.t("warehouse", 1), rows, scale)
	}
	return Layout{Tables: count, Scale: scale}, nil
}
