package sbtpcc_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sbtpcc"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

func connector(dsn string) func(context.Context) (*pgconn.PgConn, error) {
	return func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
}

// loaded is a new database loaded by pgbakeoff with opt.
func loaded(t *testing.T, opt sbtpcc.LoadOptions) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	if _, err := sbtpcc.Load(context.Background(), connector(dsn), opt, nil); err != nil {
		t.Fatalf("load: %v", err)
	}
	return dsn
}

// check runs pgbakeoff's checks on dsn's table sets and fails t for each that
// does not pass.
func check(t *testing.T, dsn, schema string, tables int) {
	t.Helper()
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	results, err := sbtpcc.Check(context.Background(), conn, schema, tables)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 10 {
		t.Errorf("%d checks, want tpcc_check.lua's 10", len(results))
	}
	for _, r := range results {
		if !r.Passed {
			t.Errorf("check %d (%s) failed: %s", r.Number, r.Name, r.Detail)
		}
	}
}
