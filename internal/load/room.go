package load

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
)

// maxBytes is more data than any server holds: a load this large is a typo.
const maxBytes = 1 << 50

// CheckRoom refuses a load whose data cannot fit where the server keeps it: for
// a server on this machine (local) whose data directory the session may read, one
// larger than the free space of that file system; of a server elsewhere it can
// only tell one larger than maxBytes.
func CheckRoom(ctx context.Context, conn *pgconn.PgConn, ds Dataset, local bool) error {
	need := ds.Bytes()
	if local {
		rr := conn.ExecParams(ctx, "select current_setting('data_directory', true)", nil, nil, nil, nil).Read()
		if rr.Err == nil && len(rr.Rows) == 1 && rr.Rows[0][0] != nil {
			dir := string(rr.Rows[0][0])
			if free, ok := localpg.FreeBytes(dir); ok && need > free {
				return fmt.Errorf("%s needs about %s on disk and the server's data directory %s has %s free: load less, or free some space",
					ds.Describe(), engine.FormatBytes(need), dir, engine.FormatBytes(free))
			}
		}
	}
	if need > maxBytes {
		return fmt.Errorf("%s needs about %s on disk, more than any server holds: load less", ds.Describe(), engine.FormatBytes(need))
	}
	return nil
}
