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

// TestQueriesCount: the server's own command tags are counted as sysbench counts
// results: a result set, even empty, is a read (and so is INSERT ... RETURNING);
// changed rows make a write; BEGIN, DDL and a write that changed nothing are other.
func TestQueriesCount(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := conn.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	w := newWire(hc.Conn, false)
	defer w.close()
	var q Queries
	w.stmts = &q
	w.appendQuery([]byte(`BEGIN; SELECT 1 WHERE false; CREATE TEMP TABLE x (a int); INSERT INTO x VALUES (1), (2);
		UPDATE x SET a = 3 WHERE a = 9; DELETE FROM x; INSERT INTO x SELECT 1 RETURNING a; COMMIT`))
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.await(); err != nil || w.err != nil {
		t.Fatal(err, w.err)
	}
	if want := (Queries{Read: 2, Write: 2, Other: 4}); q != want {
		t.Errorf("counted %+v, want %+v", q, want)
	}
}
