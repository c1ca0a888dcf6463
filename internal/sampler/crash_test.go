//go:build unix

package sampler_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
)

// backendPID is the process of conn's backend, as the server reports it.
func backendPID(t *testing.T, conn *pgconn.PgConn) int {
	t.Helper()
	rows, err := conn.Exec(context.Background(), "select pg_backend_pid()").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(rows[0].Rows[0][0]))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// crash kills a backend of srv with SIGKILL, which makes the postmaster end
// every other and recover: the server keeps its postmaster and start time and
// discards its statistics. With hold, another backend is stopped (SIGSTOP) for
// that long first: the postmaster waits for it to exit before it recovers, so
// the server refuses connections (57P03) for at least that long. It returns
// once the server accepts connections again.
func crash(t *testing.T, dsn string, hold time.Duration) {
	t.Helper()
	pid := backendPID(t, connect(t, dsn, "sampler-test-victim"))
	witness := connect(t, dsn, "sampler-test-witness")
	held := 0
	if hold > 0 {
		held = backendPID(t, connect(t, dsn, "sampler-test-held"))
		if err := syscall.Kill(held, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The postmaster ends the other sessions as it notices the crash: the
	// witness's first.
	for deadline := time.Now().Add(30 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := witness.Exec(ctx, "select 1").ReadAll()
		cancel()
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not end the other sessions after a backend was killed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if held != 0 {
		time.Sleep(hold) // the outage's length, not a wait for something
		if err := syscall.Kill(held, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	waitUp(t, dsn)
}

// TestCrash: a backend killed makes the server end every session and recover,
// keeping its postmaster and start time but not its statistics. Held, the
// recovery lasts a second, and the sampler's readings fail meanwhile: the first
// that succeeds after it must still be compared with the last before the crash.
// Either way the sampler says the statistics were reset, and that the server
// crashed, not restarted.
func TestCrash(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	for _, hold := range []time.Duration{0, time.Second} {
		t.Run("hold="+hold.String(), func(t *testing.T) {
			srv := pgtest.OwnServer(t).Server()
			dsn := srv.TCPDSN()
			ctl := connect(t, dsn, "sampler-test-ctl")
			for range 20 {
				execSQL(t, ctl, "select 1") // commits the crash takes away
			}
			var rec recorder
			s, err := sampler.Start(t.Context(), sampler.Config{
				Connect:  connector(t, dsn, "sampler-test-monitor"),
				AppName:  "sampler-test-nobody",
				Interval: 100 * time.Millisecond,
				OnSample: rec.add,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			waitSamples(t, &rec, func(sm sampler.Sample) bool { return !sm.ServerStarted.IsZero() }, 2)
			crashed := time.Now()
			crash(t, dsn, hold)
			up := time.Now()
			// Two samples of the recovered server: the first may have begun before it was up.
			waitSamples(t, &rec, func(sm sampler.Sample) bool { return sm.Start.After(up) && !sm.ServerStarted.IsZero() }, 2)
			res := s.Stop()
			failed := 0
			for _, sm := range rec.all() {
				if sm.ServerStarted.IsZero() {
					failed++
				}
			}
			t.Logf("%d samples failed; result %+v", failed, res)
			if !res.Reset || !res.Crashed || res.Restarted {
				t.Errorf("Reset %v, Crashed %v, Restarted %v; want a reset by a crash, not a restart", res.Reset, res.Crashed, res.Restarted)
			}
			if res.ResetAt.Before(crashed.Add(-time.Second)) || res.ResetAt.After(time.Now()) {
				t.Errorf("ResetAt %v, want between the crash at %v and now", res.ResetAt, crashed)
			}
			if hold == 0 {
				return
			}
			if failed == 0 {
				t.Errorf("no sample failed while the server recovered for %s", hold)
			}
			if res.Down == nil || res.Down.Code != "57P03" {
				t.Errorf("Down = %v, want the 57P03 of a server in recovery", res.Down)
			}
		})
	}
}

// waitUp waits until the server at dsn accepts connections.
func waitUp(t *testing.T, dsn string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgconn.Connect(ctx, dsn)
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not come back after the crash: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
