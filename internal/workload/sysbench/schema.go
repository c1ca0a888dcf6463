package sysbench

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// Column sizes of sbtest's c and pad, CHAR(120) and CHAR(60), and the shapes
// sysbench fills them with: groups of 11 random digits joined by '-', ten groups
// for c (119 characters) and five for pad (59); the server pads the last blank.
const (
	cGroups   = 10
	padGroups = 5
	groupLen  = 11
)

// tableName is sysbench's name for table n, counted from 1.
func tableName(n int) string { return "sbtest" + strconv.Itoa(n) }

// createSQL creates table n as sysbench does on PostgreSQL with its default
// --auto_inc: id SERIAL, so that oltp_insert can leave the id to the sequence. The
// primary key and the secondary index k_n come after the data (keySQL).
func createSQL(n int) string {
	t := tableName(n)
	return "create table " + t + ` (
	id serial not null,
	k integer default '0' not null,
	c char(120) default '' not null,
	pad char(60) default '' not null)`
}

// keySQL adds table n's primary key and secondary index, and moves its id sequence
// past the loaded ids.
func keySQL(n int, rows int64) []string {
	t := tableName(n)
	return []string{
		"alter table " + t + " add primary key (id)",
		fmt.Sprintf("create index k_%d on %s (k)", n, t),
		fmt.Sprintf("select setval(pg_get_serial_sequence('%s', 'id'), %d)", t, max(rows, 1)),
	}
}

// ErrNotLoaded means the database has no sbtest tables.
var ErrNotLoaded = errors.New("no sysbench tables")

// sizeComment marks a table loaded by pgbakeoff with its size. A table that oltp_insert
// has grown since still says how large it was made, which is the range sysbench draws
// ids from.
const sizeComment = "pgbakeoff sysbench table-size "

var sizeRe = regexp.MustCompile(`^` + sizeComment + `(\d+)$`)

// Layout is what Detect finds.
type Layout struct {
	Tables int   // sbtest1..Tables
	Size   int64 // rows per table, as loaded
	// SizeFromIDs is set for tables pgbakeoff did not load. Size is then sbtest1's
	// largest id, which is the size sysbench prepared only until its oltp_insert
	// adds rows past it.
	SizeFromIDs bool
}

// Detect finds the sbtest tables in the connection's search path: how many there are
// (sbtest1..N without gaps) and the table size, from the comment the load leaves on
// sbtest1 or, for tables sysbench prepared, from sbtest1's largest id.
func Detect(ctx context.Context, conn *pgconn.PgConn) (Layout, error) {
	res, err := conn.Exec(ctx, `select coalesce(max(n), 0), count(*), coalesce(obj_description(to_regclass('sbtest1'), 'pg_class'), '')
		from (select substr(c.relname, 7)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace
			where c.relname ~ '^sbtest[1-9][0-9]{0,5}$' and c.relkind in ('r', 'p')
			and s.nspname = any (current_schemas(false))) t`).ReadAll()
	if err != nil {
		return Layout{}, fmt.Errorf("look for the sysbench tables: %w", err)
	}
	row := res[0].Rows[0]
	hi, _ := strconv.Atoi(string(row[0]))
	count, _ := strconv.Atoi(string(row[1]))
	if count == 0 {
		return Layout{}, ErrNotLoaded
	}
	if unfinished, err := load.Unfinished(ctx, conn, "sbtest1"); err != nil {
		return Layout{}, err
	} else if unfinished {
		return Layout{}, fmt.Errorf("%w: the sbtest tables were being loaded when the load stopped; load them again with `pgbakeoff init sysbench`", load.ErrUnfinished)
	}
	if hi != count {
		return Layout{}, fmt.Errorf("the sysbench tables are not sbtest1..sbtest%d: %d of them are missing; load them again with `pgbakeoff init sysbench`", hi, hi-count)
	}
	if m := sizeRe.FindSubmatch(row[2]); m != nil {
		size, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return Layout{Tables: count, Size: size}, nil
	}
	res, err = conn.Exec(ctx, "select coalesce(max(id), 0) from sbtest1").ReadAll()
	if err != nil {
		return Layout{}, fmt.Errorf("read the size of sbtest1: %w", err)
	}
	size, _ := strconv.ParseInt(string(res[0].Rows[0][0]), 10, 64)
	if size == 0 {
		return Layout{}, fmt.Errorf("sbtest1 is empty: load the tables with `pgbakeoff init sysbench` or `sysbench ... prepare`")
	}
	return Layout{Tables: count, Size: size, SizeFromIDs: true}, nil
}
