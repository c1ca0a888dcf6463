package load

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// SerialBuilds connects as connect does, with the server's parallel index builds
// (max_parallel_maintenance_workers, PostgreSQL 11 and later) off for the session;
// older servers lack the setting and are left as they are. A load that keeps each of
// its connections building an index of its own already uses as much of the server
// as it was given, and the server's workers would only crowd the same cores. Where
// there are fewer indexes than connections, the idle ones leave room for the
// server's workers, and the plain connector is the better one.
//
// Measured on 2 cores, PostgreSQL 18, 2 connections: the keys of 4 sysbench tables
// of 1,000,000 rows took 2.00-2.28 s without the workers and 2.17-2.67 s with the
// default 2 (5 alternating rounds); `pgbakeoff init tpcc --warehouses 10` built its
// keys in a median of 1.53 s against 1.99 s (4 alternating rounds each).
func SerialBuilds(connect Connector) Connector {
	return func(ctx context.Context) (*pgconn.PgConn, error) {
		conn, err := connect(ctx)
		if err != nil {
			return nil, err
		}
		err = ExecSQL(ctx, conn, `select set_config('max_parallel_maintenance_workers', '0', false)
			where current_setting('max_parallel_maintenance_workers', true) is not null`)
		if err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("turn off parallel index builds: %w", err)
		}
		return conn, nil
	}
}
