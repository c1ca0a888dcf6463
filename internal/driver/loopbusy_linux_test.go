package driver_test

import (
	"context"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// Each event loop says how busy it was: one whose clients never wait for a
// server (Steps that send nothing) nearly all the time, one whose clients wait
// for a server that sleeps a while hardly at all. A loop's life takes in its
// start and its end, where it waits, a tenth of a one-second run on a loaded
// machine; what matters is that each side is clear of the 70% that adds a loop.
func TestLoopBusy(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	for _, tc := range []struct {
		name     string
		script   *driver.Script
		min, max float64
	}{
		{"never waits", &driver.Script{Name: "idle", Weight: 1, Steps: idle{}}, 0.8, 1},
		{"waits for the server", &driver.Script{Name: "sleep", Weight: 1, Commands: []driver.Command{{SQL: "SELECT pg_sleep(0.02)"}}}, 0, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{tc.script},
				Clients: 4, Loops: 2, Duration: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.LoopBusy) != 2 {
				t.Fatalf("busy shares %v of %d loops, want 2", res.LoopBusy, res.EventLoops)
			}
			for _, b := range res.LoopBusy {
				if b < tc.min || b > tc.max {
					t.Errorf("loops busy %v, want each from %.1f to %.1f", res.LoopBusy, tc.min, tc.max)
					break
				}
			}
		})
	}
}
