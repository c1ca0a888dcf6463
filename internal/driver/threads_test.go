package driver_test

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestThreadPerClientLimit refuses more clients than threads are given for.
func TestThreadPerClientLimit(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	_, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{readScript()},
		Clients: driver.MaxThreadClients + 1, Duration: time.Second, ThreadPerClient: true})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("--thread-per-client=false")) {
		t.Errorf("error %v, want the limit and what to do", err)
	}
}

// TestThreadPerClientOverlap overlaps two runs with a thread per client, the first
// ending first, as parallel tests or a program running targets side by side would:
// GOMAXPROCS follows the clients still running and ends where it began.
func TestThreadPerClientOverlap(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	kvTable(t, dsn)
	before := runtime.GOMAXPROCS(0)
	run := func(clients int, d time.Duration, onWindow func(open bool)) error {
		_, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{readScript()},
			Clients: clients, Duration: d, ThreadPerClient: true, OnWindow: onWindow})
		return err
	}
	// The second run begins once the first one's window has.
	first := make(chan error, 1)
	running := make(chan struct{})
	go func() {
		first <- run(2, time.Second, func(open bool) {
			if open {
				close(running)
			}
		})
	}()
	select {
	case <-running:
	case err := <-first:
		t.Fatalf("the first run ended before its window opened: %v", err)
	}
	second := make(chan error, 1)
	go func() { second <- run(3, 2*time.Second, nil) }()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != before+3 {
		t.Errorf("GOMAXPROCS %d with the second run's 3 clients left, want %d", got, before+3)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after both runs, want it back at %d", got, before)
	}
}

// TestThreadPerClientTimeout cuts off transactions that outlast the transaction
// timeout while their clients wait in the kernel, over a Unix-domain socket (where
// the wait is in poll) and over TCP (where it is in read).
func TestThreadPerClientTimeout(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	srv := pgtest.Server(t)
	for _, tr := range []struct{ name, dsn string }{
		{"unix", dsn},
		{"tcp", dsn + " host=127.0.0.1 port=" + strconv.Itoa(srv.Port)},
	} {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel() // both transports wait out their timeouts at once
			script := &driver.Script{Name: "slow", Weight: 1, Commands: []driver.Command{{SQL: "SELECT pg_sleep(3)"}}}
			res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, tr.dsn), Scripts: []*driver.Script{script},
				Clients: 2, Duration: 2 * time.Second, TxTimeout: 300 * time.Millisecond, ThreadPerClient: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Committed != 0 {
				t.Errorf("committed %d, want none: every statement outlasts the timeout", res.Committed)
			}
			if !slices.ContainsFunc(res.Errors, func(e driver.ErrorCount) bool { return e.Cause == "timeout" && e.Count >= 4 }) {
				t.Errorf("errors %+v, want at least 2 timeouts per client in 2 s", res.Errors)
			}
			earliest := map[int]time.Duration{}
			for _, o := range res.Outages {
				if o.Cause != "timeout" {
					t.Errorf("client %d: outage for %q, want timeouts", o.Client, o.Cause)
				}
				if took, seen := earliest[o.Client]; !seen || o.Start.Sub(res.Start) < took {
					earliest[o.Client] = o.Start.Sub(res.Start)
				}
			}
			for client, took := range earliest {
				if took > 1500*time.Millisecond {
					t.Errorf("client %d: first outage %s after the start, want it at about 300 ms", client, took)
				}
			}
		})
	}
}
