package driver_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestThreadPerClient runs clients that each wait in the kernel on a thread of their
// own: while all of them wait for a slow statement, the process has a thread per
// client and GOMAXPROCS raised by the clients, and a garbage collection, which must
// stop every goroutine, still completes at once instead of waiting for the answers.
func TestThreadPerClient(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	kvTable(t, dsn)
	const clients = 12
	script := &driver.Script{Name: "slow", Weight: 1, Vars: []driver.Var{{Name: "k", Min: 1, Max: 100}},
		Commands: []driver.Command{{SQL: "SELECT v, pg_sleep(1) FROM kv WHERE k = $1", Params: []int{0}}}}
	before := runtime.GOMAXPROCS(0)
	type result struct {
		res *driver.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
			Clients: clients, Duration: 1500 * time.Millisecond, ThreadPerClient: true})
		done <- result{res, err}
	}()
	// Once every client is inside its first pg_sleep(1), as the server shows.
	sleeping := fmt.Sprintf("select count(*) >= %d from pg_stat_activity where datname = current_database() and state = 'active'"+
		" and query like '%%pg_sleep(1)%%' and pid <> pg_backend_pid()", clients)
	for deadline := time.Now().Add(30 * time.Second); pgtest.Query(t, dsn, sleeping) != "t"; time.Sleep(5 * time.Millisecond) {
		select {
		case r := <-done:
			t.Fatalf("the run ended (error %v) before its clients were all seen inside pg_sleep(1)", r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the clients were not all inside their pg_sleep(1) within 30 s")
		}
	}
	procs := runtime.GOMAXPROCS(0)
	threads := countThreads(t)
	start := time.Now()
	runtime.GC()
	gcTook := time.Since(start)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if res := r.res; res.Committed < clients || res.Failed != 0 {
		t.Errorf("committed %d, failed %d; want every client's transactions committed", res.Committed, res.Failed)
	}
	if procs != before+clients {
		t.Errorf("GOMAXPROCS during the run %d, want %d + %d clients", procs, before, clients)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS after the run %d, want it back at %d", after, before)
	}
	if threads < clients {
		t.Errorf("%d threads while the clients waited, want one per client (%d) at least", threads, clients)
	}
	if took := gcTook; took > 300*time.Millisecond {
		t.Errorf("a garbage collection took %s while the clients waited, want it to interrupt their waits", took)
	}
}

// countThreads reads how many threads the process has.
func countThreads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Error(err)
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n
		}
	}
	return 0
}

// TestThreadPerClientReadsAtOnce: over a Unix-domain socket the clients poll first,
// then try reading their answers at once, so a run does some of each; over TCP
// there is nothing to choose, as reads are only woken by data there.
func TestThreadPerClientReadsAtOnce(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	kvTable(t, dsn)
	srv := pgtest.Server(t)
	for _, tr := range []struct {
		name, dsn string
		some      bool
	}{
		{"unix", dsn, true},
		{"tcp", dsn + " host=127.0.0.1 port=" + strconv.Itoa(srv.Port), false},
	} {
		t.Run(tr.name, func(t *testing.T) {
			res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, tr.dsn), Scripts: []*driver.Script{readScript()},
				Clients: 2, Duration: 1200 * time.Millisecond, ThreadPerClient: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Committed == 0 || res.Failed != 0 {
				t.Fatalf("committed %d, failed %d", res.Committed, res.Failed)
			}
			if tr.some && (res.ReadAtOnce <= 0 || res.ReadAtOnce >= 1) {
				t.Errorf("%.3f of the answers read at once, want some but not all: both ways measured", res.ReadAtOnce)
			}
			if !tr.some && res.ReadAtOnce != 0 {
				t.Errorf("%.3f of the answers read at once over TCP, want 0", res.ReadAtOnce)
			}
		})
	}
}

// TestThreadPerClientNotPreempted runs clients whose answers come quickly, each
// waiting in the kernel on a thread of its own, and counts the runtime's preemption
// signals (SIGURG), once as built and once with the yields turned off. Clients that
// yield to their own processor within the runtime's 10 ms are left alone; without
// the yields the runtime preempts them, each time sending the client to the global
// run queue and often to another thread. The limit is relative to the run without
// the yields, since whatever else runs on the machine adds preemptions of its own.
func TestThreadPerClientNotPreempted(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	kvTable(t, dsn)
	const clients, d = 4, 1500 * time.Millisecond
	// Garbage collections signal each running client too: none during the runs.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	signals := func() int {
		urg := make(chan os.Signal, 4096)
		signal.Notify(urg, syscall.SIGURG)
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{readScript()},
			Clients: clients, Duration: d, ThreadPerClient: true})
		signal.Stop(urg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Committed < 1000 {
			t.Fatalf("committed %d in %s, want a busy run", res.Committed, d)
		}
		return len(urg)
	}
	with := signals()
	restore := driver.SetYieldEvery(time.Hour)
	without := signals()
	restore()
	if with*2 >= without {
		t.Errorf("%d preemption signals in %s at %d clients yielding every 2 ms, %d without the yields; want under half: waiting clients should yield before the runtime preempts them", with, d, clients, without)
	}
	t.Logf("preemption signals in %s: %d with the yields, %d without", d, with, without)
}
