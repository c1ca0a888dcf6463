package localpg_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestCrashTakesBackends: a crash takes a backend busy in a long statement with
// the postmaster, one that would not notice its postmaster's death before the
// statement ends, and the server starts again at once.
func TestCrashTakesBackends(t *testing.T) {
	own := pgtest.OwnServer(t)
	srv := own.Server()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	// A sort of many rows, checking for no interrupt or postmaster death for seconds.
	busy := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "select count(*) from (select g from generate_series(1, 300000000) g order by g desc) s")
		busy <- err
	}()
	waitUntil(t, func() bool {
		var active bool
		c, err := pgx.Connect(ctx, srv.DSN())
		if err != nil {
			return false
		}
		defer c.Close(ctx)
		_ = c.QueryRow(ctx, "select state = 'active' from pg_stat_activity where pid = $1", pid).Scan(&active)
		return active
	})
	if err := srv.Crash(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return os.IsNotExist(err)
	})
	if err := <-busy; err == nil {
		t.Fatal("the statement of a crashed server's backend succeeded")
	}
	start := time.Now()
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the server took %v to start after the crash", d)
	}
}

// waitUntil polls cond until it holds, failing the test after 10 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("gave up waiting after 10 s")
		}
	}
}
