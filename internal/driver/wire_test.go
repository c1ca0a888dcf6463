package driver

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestWriteAfterTerminate: a request written to a backend that was terminated
// between transactions fails with a broken pipe, but the server said why before it
// left, and that is what the client reports: 57P01, in both ways of waiting.
func TestWriteAfterTerminate(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	for _, blocking := range []bool{false, true} {
		t.Run("blocking="+strconv.FormatBool(blocking), func(t *testing.T) {
			ctx := context.Background()
			conn, err := pgconn.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			pid := conn.PID()
			hc, err := conn.Hijack()
			if err != nil {
				t.Fatal(err)
			}
			w := newWire(hc.Conn, blocking)
			defer w.close()
			w.waits, w.waitCount = &waitChooser{}, new(atomic.Int64)
			p := strconv.Itoa(int(pid))
			pgtest.Query(t, dsn, "select pg_terminate_backend("+p+")")
			for deadline := time.Now().Add(5 * time.Second); pgtest.Query(t, dsn, "select count(*) from pg_stat_activity where pid = "+p) != "0"; {
				if time.Now().After(deadline) {
					t.Fatal("the terminated backend is still there after 5 s")
				}
				time.Sleep(10 * time.Millisecond)
			}
			w.appendQuery([]byte("SELECT 1"))
			err = w.flush()
			if err == nil {
				err = w.await()
			}
			if got := Cause(err); got != "57P01" {
				t.Errorf("cause %q (%v), want 57P01: the server's last words before the broken pipe", got, err)
			}
		})
	}
}
