package driver_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// A server paused for 2 s mid-run (SIGSTOP, then SIGCONT, of all its processes):
// open-loop, the arrivals during the pause wait for it and p99.9 shows the stall;
// closed-loop, the clients stop sending while they wait, only their one
// transaction each is slow, and p99.9 does not show it (coordinated omission).
func TestRateShowsStall(t *testing.T) {
	pgtest.Long(t)
	s := pgtest.OwnServer(t)
	run := func(rate float64) histogram.Summary {
		srv := s.Server()
		paused := make(chan error, 1)
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, srv.DSN()), Scripts: []*driver.Script{selectOne()},
			Clients: 4, Duration: 6 * time.Second, Rate: rate, Seed: 3,
			OnWindow: func(open bool) {
				if !open {
					return
				}
				go func() {
					time.Sleep(2 * time.Second) // into the window: the pause's place
					if err := srv.SignalAll(syscall.SIGSTOP); err != nil {
						paused <- err
						return
					}
					time.Sleep(2 * time.Second) // the pause's length
					paused <- srv.SignalAll(syscall.SIGCONT)
				}()
			}})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-paused; err != nil {
			t.Fatal(err)
		}
		return histogram.Summarize(res.Scripts[0].Latency)
	}
	closed := run(0)
	open := run(1000)
	t.Logf("closed loop: %d tx, p99.9 %.1f ms, max %.0f ms; open loop: %d tx, p99.9 %.1f ms, max %.0f ms",
		closed.Count, closed.P999, closed.Max, open.Count, open.P999, open.Max)
	if closed.Max < 1500 || closed.P999 > 500 {
		t.Errorf("closed loop: max %.0f ms, p99.9 %.1f ms; want the stall in the max only", closed.Max, closed.P999)
	}
	if open.P999 < 1500 {
		t.Errorf("open loop: p99.9 %.1f ms; want the 2 s stall in it", open.P999)
	}
}
