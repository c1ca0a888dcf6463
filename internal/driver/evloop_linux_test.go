package driver_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestEventLoop runs scripts of statements on event loops: answers far larger than
// the read buffer, arriving over many reads, and a script mix drawn by weight. A
// script with a COPY, which a loop would have to refuse in a round trip of its own,
// runs on goroutines, and its COPY fails.
func TestEventLoop(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table sink(v text)")
	scripts := []*driver.Script{
		{Name: "big", Weight: 2, Vars: []driver.Var{{Name: "n", Min: 100_000, Max: 300_000}},
			Commands: []driver.Command{{SQL: "SELECT repeat('x', $1::int), $1::int", Params: []int{0}}}},
		{Name: "block", Weight: 2, Vars: []driver.Var{{Name: "v", Min: 1, Max: 1000}},
			Commands: []driver.Command{{SQL: "BEGIN"}, {SQL: "INSERT INTO sink VALUES ($1::text)", Params: []int{0}}, {SQL: "COMMIT"}}},
	}
	const clients, perClient, loops = 5, 40, 2
	procs := runtime.GOMAXPROCS(0)
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: scripts, Clients: clients,
		Transactions: perClient, Loops: loops})
	if err != nil {
		t.Fatal(err)
	}
	if res.EventLoops != loops {
		t.Errorf("%d event loops, want %d", res.EventLoops, loops)
	}
	if runtime.GOMAXPROCS(0) != procs {
		t.Errorf("GOMAXPROCS is %d after the run, was %d before", runtime.GOMAXPROCS(0), procs)
	}
	big, block := res.Scripts[0], res.Scripts[1]
	if n := big.Committed + block.Committed; n != clients*perClient || big.Failed+block.Failed != 0 {
		t.Fatalf("big %+v, block %+v: want %d transactions committed", big, block, clients*perClient)
	}
	if big.Committed == 0 || block.Committed == 0 {
		t.Errorf("committed big %d, block %d: both scripts should have run", big.Committed, block.Committed)
	}
	if big.Queries.Read != big.Committed {
		t.Errorf("big answers counted as %d reads for %d transactions", big.Queries.Read, big.Committed)
	}
	if block.Queries.Write != block.Committed || block.Queries.Other != 2*block.Committed {
		t.Errorf("block queries %+v for %d transactions, want a write and two others each", block.Queries, block.Committed)
	}
	if got := pgtest.Query(t, dsn, "select count(*) from sink"); got != strconv.FormatInt(block.Committed, 10) {
		t.Errorf("%s rows inserted, %d transactions committed", got, block.Committed)
	}

	scripts = append(scripts, &driver.Script{Name: "copy", Weight: 1, Commands: []driver.Command{{SQL: " copy sink FROM STDIN"}}})
	res, err = driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: scripts, Clients: 2, Transactions: 10})
	if err != nil {
		t.Fatal(err)
	}
	cp := res.Scripts[2]
	if res.EventLoops != 0 || cp.Failed == 0 || cp.Committed != 0 {
		t.Errorf("with a COPY: %d event loops, COPY %+v; want none, and every COPY failed", res.EventLoops, cp)
	}
	if len(res.Errors) != 1 || res.Errors[0].SQLState != "57014" || res.Errors[0].Count != cp.Failed {
		t.Errorf("errors %+v, want every COPY failed with 57014", res.Errors)
	}
}

// TestEventLoopPauses runs Programs and pausing scripts on the event loops: a pause
// lasts what it asks, every pause ends as the run stops, and a transaction past the
// timeout is cut off and its client connects again.
func TestEventLoopPauses(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	const loops = 2

	t.Run("pauses", func(t *testing.T) {
		const pause = 3 * time.Millisecond
		script := &driver.Script{Name: "pause", Weight: 1, Statements: []string{"select $1::int"}, Program: func(s *driver.Session) error {
			if !s.Sleep(pause) {
				return nil
			}
			if err := s.Int(7).Exec(0); err != nil {
				return err
			}
			if s.IntValue(0, 0) != 7 {
				return errors.New("wrong answer")
			}
			return nil
		}}
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
			Clients: 3, Duration: time.Second, Loops: loops})
		if err != nil {
			t.Fatal(err)
		}
		if res.EventLoops != loops {
			t.Errorf("%d event loops, want %d", res.EventLoops, loops)
		}
		s := res.Scripts[0]
		// The ceiling is the pauses' own; the floor leaves a loaded machine 50 ms a
		// transaction for the wake-ups around each pause.
		if s.Failed != 0 || s.Committed < 60 || s.Committed > 3*333 {
			t.Fatalf("%+v: want no failure and, at one transaction per 3 ms pause or more, 60 to 999 committed", s)
		}
		if low := time.Duration(s.Latency.Min()) * time.Microsecond; low < pause {
			t.Errorf("shortest transaction %s, shorter than its %s pause", low, pause)
		}
	})

	t.Run("stop", func(t *testing.T) {
		// A Program that pauses for a minute, and a script of statements with a
		// think time of a minute: both end when the run does.
		long := &driver.Script{Name: "long", Weight: 1, Statements: []string{"select 1"}, Program: func(s *driver.Session) error {
			if err := s.Exec(0); err != nil {
				return err
			}
			s.Sleep(time.Minute)
			return nil
		}}
		think := &driver.Script{Name: "think", Weight: 1, ThinkMean: time.Minute, Commands: []driver.Command{{SQL: "SELECT 1"}}}
		for _, script := range []*driver.Script{long, think} {
			start := time.Now()
			res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
				Clients: 3, Duration: 500 * time.Millisecond, Loops: loops})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 5*time.Second || res.EventLoops != loops {
				t.Errorf("%s: the run took %s on %d event loops, want about 500 ms on %d", script.Name, took, res.EventLoops, loops)
			}
		}
	})

	t.Run("tx-timeout", func(t *testing.T) {
		slow := &driver.Script{Name: "slow", Weight: 1, Statements: []string{"select pg_sleep(3)"},
			Program: func(s *driver.Session) error { return s.Exec(0) }}
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{slow},
			Clients: 2, Duration: 2 * time.Second, TxTimeout: 300 * time.Millisecond, Loops: loops})
		if err != nil {
			t.Fatal(err)
		}
		if res.EventLoops != min(loops, 2) || res.Committed != 0 {
			t.Errorf("%d event loops, %d committed: want %d, and none committed", res.EventLoops, res.Committed, min(loops, 2))
		}
		if !slices.ContainsFunc(res.Errors, func(e driver.ErrorCount) bool { return e.Cause == "timeout" && e.Count >= 4 }) {
			t.Errorf("errors %+v, want at least 2 timeouts per client in 2 s", res.Errors)
		}
		for _, o := range res.Outages {
			// One that began as the window closed ended with the run, not recovered.
			if o.Cause != "timeout" || !o.Recovered && o.Start.Before(res.WindowEnd.Add(-200*time.Millisecond)) {
				t.Errorf("client %d: outage %+v, want a timeout it recovered from (the window ended at %s)", o.Client, o, res.WindowEnd)
			}
		}
	})
}

// TestLoopsAdded: with Loops 0 a run starts on one event loop and adds one, up to
// the cores, while every loop is busy. Clients whose transactions cost the client
// a millisecond of CPU keep each loop busy, so the run ends on as many loops as
// cores, its clients spread over them, each transaction counted once and the
// server's counter the same; clients that wait for their server keep one loop.
func TestLoopsAdded(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table n(v int); insert into n values (0)")
	spin := &driver.Script{Name: "spin", Weight: 1, Statements: []string{"update n set v = v + 1"}, Program: func(s *driver.Session) error {
		for end := time.Now().Add(time.Millisecond); time.Now().Before(end); {
		}
		return s.Exec(0)
	}}
	const clients = 8
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{spin}, Clients: clients,
		Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := min(runtime.NumCPU(), clients)
	if res.EventLoops != want || len(res.LoopBusy) != want {
		t.Errorf("%d event loops, busy %v: want %d, one a core", res.EventLoops, res.LoopBusy, want)
	}
	for i, b := range res.LoopBusy[1:] {
		// The loops added later spun for their clients; one that none came to
		// would have waited in epoll all along.
		if b < 0.5 {
			t.Errorf("loop %d was busy %.1f%% of its life: no clients came to it", i+1, 100*b)
		}
	}
	all := res.Scripts[0].Committed + res.Scripts[0].Failed
	if res.Scripts[0].Failed != 0 || all == 0 {
		t.Errorf("%+v: want transactions and no failure", res.Scripts[0])
	}
	total, _ := strconv.ParseInt(pgtest.Query(t, dsn, "select v from n"), 10, 64)
	// Every update committed: the window's, the warm-up's (none) and those that
	// ended after it, counted with the commits of the session starts.
	if prep := int64(2 * clients); res.CommitsTotal-prep != total {
		t.Errorf("the server has %d updates, the clients counted %d commits besides the %d of starting their sessions", total, res.CommitsTotal-prep, prep)
	}

	idle := &driver.Script{Name: "idle", Weight: 1, Commands: []driver.Command{{SQL: "SELECT pg_sleep(0.01)"}}}
	res, err = driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{idle}, Clients: clients,
		Duration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.EventLoops != 1 || res.LoopBusy[0] > 0.5 {
		t.Errorf("%d event loops, busy %v: want one, mostly idle", res.EventLoops, res.LoopBusy)
	}
}
