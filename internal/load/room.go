package load

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
)

// CheckRoom refuses a load whose data cannot fit where the server keeps it: for
// a server on this machine whose data directory the session may read, the
// dataset's estimated size against the free space of that file system. Elsewhere
// it cannot tell, and says nothing.
func CheckRoom(ctx context.Context, conn *pgconn.PgConn, ds Dataset) error {
	rr := conn.ExecParams(ctx, "select current_setting('data_directory', true)", nil, nil, nil, nil).Read()
	if rr.Err != nil || len(rr.Rows) != 1 || rr.Rows[0][0] == nil {
		return nil
	}
	dir := string(rr.Rows[0][0])
	free, ok := localpg.FreeBytes(dir)
	if need := ds.Bytes(); ok && need > free {
		return fmt.Errorf("%s needs about %s on disk and the server's data directory %s has %s free: load less, or free some space",
			ds.Describe(), engine.FormatBytes(need), dir, engine.FormatBytes(free))
	}
	return nil
}
