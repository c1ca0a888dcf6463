package load

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A load marks the table its workload is detected by from the moment it is created
// until the load has finished, so that data left by an interrupted load is never
// taken for a dataset.
const loadingComment = "pgbakeoff: loading; if this stays, the load did not finish"

// ErrUnfinished is returned by Unfinished's callers for data of an interrupted load.
var ErrUnfinished = errors.New("the data is from a load that did not finish")

// qualified quotes table, which may be schema-qualified (schema.table).
func qualified(table string) string { return pgx.Identifier(strings.Split(table, ".")).Sanitize() }

// MarkLoading marks table as being loaded.
func MarkLoading(ctx context.Context, conn *pgconn.PgConn, table string) error {
	return ExecSQL(ctx, conn, MarkLoadingSQL(table))
}

// MarkLoadingSQL is the statement MarkLoading runs, for a load that makes its tables
// and the mark in one journalled step.
func MarkLoadingSQL(table string) string {
	return "comment on table " + qualified(table) + " is '" + loadingComment + "'"
}

// MarkLoaded ends the mark, leaving comment on the table ("" for none), and removes
// the load's journal (which may be nil) in the same transaction.
func MarkLoaded(ctx context.Context, conn *pgconn.PgConn, table, comment string, j *Journal) error {
	value := "null"
	if comment != "" {
		value = "'" + strings.ReplaceAll(comment, "'", "''") + "'"
	}
	sql := "comment on table " + qualified(table) + " is " + value
	if j != nil {
		sql = "begin;\n" + sql + ";\n" + j.finishSQL() + ";\ncommit"
	}
	if err := ExecSQL(ctx, conn, sql); err != nil {
		_ = ExecSQL(context.Background(), conn, "rollback")
		return fmt.Errorf("mark %s loaded: %w", table, err)
	}
	return nil
}

// Unfinished reports whether table carries the mark of a load that did not finish.
// A table that does not exist is not unfinished.
func Unfinished(ctx context.Context, conn *pgconn.PgConn, table string) (bool, error) {
	sql := "select coalesce(obj_description(to_regclass(" + quoteLiteral(qualified(table)) + "), 'pg_class') = '" + loadingComment + "', false)"
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return false, fmt.Errorf("read the load mark of %s: %w", table, err)
	}
	if len(res) == 0 || len(res[0].Rows) == 0 {
		return false, nil
	}
	return string(res[0].Rows[0][0]) == "t", nil
}
