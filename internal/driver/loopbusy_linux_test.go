package driver_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// Each event loop says how busy its thread was on the CPU. Loops whose clients
// never wait for a server (Steps that send nothing) account for the process's CPU
// time during the run, however much of the cores other work leaves them; loops whose
// clients wait for a server that sleeps a while hardly use any.
func TestLoopBusy(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	for _, tc := range []struct {
		name   string
		script *driver.Script
		spins  bool
	}{
		{"never waits", &driver.Script{Name: "idle", Weight: 1, Steps: idle{}}, true},
		{"waits for the server", &driver.Script{Name: "sleep", Weight: 1, Commands: []driver.Command{{SQL: "SELECT pg_sleep(0.02)"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cpu0 := processCPU()
			res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{tc.script},
				Clients: 4, Loops: 2, Duration: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			cpu := processCPU() - cpu0
			if len(res.LoopBusy) != 2 {
				t.Fatalf("busy shares %v of %d loops, want 2", res.LoopBusy, res.EventLoops)
			}
			loops := 0.0
			for _, b := range res.LoopBusy {
				loops += b * res.End.Sub(res.Start).Seconds()
			}
			if tc.spins && (loops < 0.6*cpu || loops > 1.1*cpu) {
				t.Errorf("loops busy %v: %.2f s on the CPU, the process %.2f s; want most of it", res.LoopBusy, loops, cpu)
			}
			if !tc.spins && (res.LoopBusy[0] > 0.05 || res.LoopBusy[1] > 0.05) {
				t.Errorf("loops busy %v, want each under 5%%", res.LoopBusy)
			}
		})
	}
}

// processCPU is the process's CPU time so far, in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
