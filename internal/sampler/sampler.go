package sampler

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// DatabaseCounters are the pg_stat_database columns stored for each run.
var DatabaseCounters = []string{"xact_commit", "xact_rollback", "blks_read", "blks_hit",
	"tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted", "conflicts", "deadlocks"}

// Database reads pg_stat_database for the connection's database, from a fresh
// statistics snapshot.
func Database(ctx context.Context, conn *pgconn.PgConn) (map[string]int64, error) {
	sql := "select "
	for i, c := range DatabaseCounters {
		if i > 0 {
			sql += ", "
		}
		sql += c
	}
	sql += " from pg_stat_database where datname = current_database()"
	// A snapshot taken earlier in the session would be reused; clear it first.
	rows, err := target.Query(ctx, conn, "select pg_stat_clear_snapshot(); "+sql)
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_database: %w", err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("read pg_stat_database: no row for the current database")
	}
	out := make(map[string]int64, len(DatabaseCounters))
	for i, c := range DatabaseCounters {
		out[c], _ = strconv.ParseInt(rows[1][i], 10, 64)
	}
	return out, nil
}

// WaitGone waits until no backend with the given application_name is left, so that
// every benchmark backend has flushed its statistics on exit; then it waits for the
// statistics to settle (before PostgreSQL 15 they travel to a collector process).
func WaitGone(ctx context.Context, conn *pgconn.PgConn, appName string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := target.Query(ctx, conn, "select count(*) from pg_stat_activity where application_name = '"+appName+"'")
		if err != nil {
			return err
		}
		if rows[0][0] == "0" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s backends still connected after 30s", rows[0][0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Read until two consecutive readings agree.
	prev, err := Database(ctx, conn)
	if err != nil {
		return err
	}
	for i := 0; i < 20; i++ {
		time.Sleep(100 * time.Millisecond)
		cur, err := Database(ctx, conn)
		if err != nil {
			return err
		}
		if cur["xact_commit"]-prev["xact_commit"] <= 2 { // our own reads commit too
			return nil
		}
		prev = cur
	}
	return nil
}
