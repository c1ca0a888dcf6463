package load_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestSerialBuilds checks that the sessions SerialBuilds opens build indexes without
// the server's parallel workers, which a plain session of the same server has.
func TestSerialBuilds(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	const show = "show max_parallel_maintenance_workers"
	if plain := pgtest.Query(t, dsn, show); plain == "0" {
		t.Fatalf("a plain session already has %s = 0; the check would prove nothing", show)
	}
	ctx := context.Background()
	conn, err := load.SerialBuilds(func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) })(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	res, err := conn.Exec(ctx, show).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res[0].Rows[0][0]); got != "0" {
		t.Errorf("%s = %s in a SerialBuilds session, want 0", show, got)
	}
}
