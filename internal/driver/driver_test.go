package driver_test

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

func parse(t *testing.T, dsn string) *target.Target {
	t.Helper()
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// counterScript increments one row in a REPEATABLE READ transaction, so concurrent
// clients collide with serialization failures (SQLSTATE 40001).
func counterScript() *driver.Script {
	return &driver.Script{Name: "bump", Weight: 1,
		Vars: []driver.Var{{Name: "id", Min: 1, Max: 1}},
		Commands: []driver.Command{
			{SQL: "BEGIN ISOLATION LEVEL REPEATABLE READ"},
			{SQL: "SELECT v FROM counter WHERE id = $1", Params: []int{0}},
			{SQL: "SELECT pg_sleep(0.001)"},
			{SQL: "UPDATE counter SET v = v + 1 WHERE id = $1", Params: []int{0}},
			{SQL: "COMMIT"},
		}}
}

func TestRetriesSerializationFailures(t *testing.T) {
	cases := []struct {
		name     string
		maxTries int
	}{
		{"max-tries=1", 1},
		{"max-tries=100", 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dsn := pgtest.NewDatabase(t)
			pgtest.Query(t, dsn, "create table counter(id int primary key, v int); insert into counter values (1, 0)")
			res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{counterScript()},
				Clients: 4, Transactions: 25, MaxTries: tc.maxTries})
			if err != nil {
				t.Fatal(err)
			}
			v, _ := strconv.ParseInt(pgtest.Query(t, dsn, "select v from counter"), 10, 64)
			if v != res.Committed {
				t.Errorf("counter is %d but %d transactions were counted as committed", v, res.Committed)
			}
			var serialization int64
			for _, e := range res.Errors {
				if e.SQLState == "40001" {
					serialization += e.Count
				}
			}
			if serialization == 0 {
				t.Fatalf("no serialization failure was provoked: %+v", res.Errors)
			}
			s := res.Scripts[0]
			if tc.maxTries == 1 {
				if s.Failed == 0 || s.Retries != 0 || s.Committed+s.Failed != 100 {
					t.Errorf("without retries: committed %d failed %d retries %d; want failures, no retries, 100 in all", s.Committed, s.Failed, s.Retries)
				}
			} else if s.Failed != 0 || s.Retries == 0 || s.Retried == 0 || s.Committed != 100 {
				t.Errorf("with retries: committed %d failed %d retried %d retries %d; want 100 committed after retries", s.Committed, s.Failed, s.Retried, s.Retries)
			}
		})
	}
}

// TestReconnectAfterTerminate kills the clients' backends mid-run: the run goes on,
// records the outage and the lost transactions, and ends on time, whether the
// clients run statements, a Program (a coroutine on an event loop) or have a thread
// each.
func TestReconnectAfterTerminate(t *testing.T) {
	for _, perClient := range []bool{false, true} {
		t.Run(threadsName("terminate", perClient), func(t *testing.T) {
			t.Parallel()
			testReconnectAfterTerminate(t, perClient, false)
		})
	}
	t.Run("terminate/program", func(t *testing.T) {
		t.Parallel()
		testReconnectAfterTerminate(t, false, true)
	})
}

func testReconnectAfterTerminate(t *testing.T, perClient, program bool) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table kv(k int primary key, v int); insert into kv select g, 0 from generate_series(1, 100) g")
	tg := parse(t, dsn)
	app := "reconnect-test-" + strconv.FormatBool(perClient) + "-" + strconv.FormatBool(program)
	tg.Config.RuntimeParams["application_name"] = app
	script := &driver.Script{Name: "read", Weight: 1, Vars: []driver.Var{{Name: "k", Min: 1, Max: 100}},
		Commands: []driver.Command{{SQL: "SELECT v, pg_sleep(0.002) FROM kv WHERE k = $1", Params: []int{0}}}}
	if program {
		script = &driver.Script{Name: "read", Weight: 1, Statements: []string{"SELECT v, pg_sleep(0.002) FROM kv WHERE k = $1"},
			Program: func(s *driver.Session) error { return s.Int(s.Uniform(1, 100)).Exec(0) }}
	}
	var ivs series
	var terminated atomic.Int64
	onWindow, done := inWindow(func() {
		time.Sleep(time.Second) // into the window: the fault's place, not a wait for something
		pgtest.Query(t, dsn, "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = '"+app+"'")
		terminated.Store(time.Now().UnixNano())
	})
	start := time.Now()
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{script}, Clients: 3, Duration: 3 * time.Second,
		ThreadPerClient: perClient, OnInterval: ivs.add, OnWindow: onWindow})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if elapsed := time.Since(start); elapsed > 6*time.Second {
		t.Errorf("run took %s, want about 3s", elapsed)
	}
	// The clients' statements take milliseconds: a run that ends later than that
	// after its window waited for its end timer (clients that hold their threads must
	// leave the runtime a way to fire timers on idle processors).
	if late := res.End.Sub(res.WindowEnd); late > time.Second {
		t.Errorf("the run ended %s after its window", late)
	}
	if len(res.Outages) != 3 {
		t.Errorf("outages %d, want one per client (3): %+v", len(res.Outages), res.Outages)
	}
	if res.Failed < 1 || res.Failed > 3 {
		t.Errorf("failed %d, want 1 to 3 (the transactions in flight): %+v", res.Failed, res.Errors)
	}
	if ivs.committedAfter(time.Unix(0, terminated.Load())) == 0 {
		t.Error("no transaction committed after the reconnect")
	}
	if o := res.OutageSeconds(); o <= 0 || o > 2 {
		t.Errorf("outage %.3fs, want a short positive span", o)
	}
	// Each client lost its connection once, to the server's FATAL 57P01 (or to the
	// connection closing under a read), and got it back at the first attempt.
	clients := map[int]bool{}
	lost := 0
	for _, o := range res.Outages {
		clients[o.Client] = true
		lost += o.FailedTx
		if o.Cause != "57P01" && o.Cause != "EOF" && o.Cause != "connection reset" {
			t.Errorf("client %d: outage cause %q (%s), want 57P01", o.Client, o.Cause, o.Error)
		}
		if !o.Recovered || o.Attempts < 1 || o.End.Before(o.Start) {
			t.Errorf("client %d: outage %+v, want recovered after at least one attempt", o.Client, o)
		}
	}
	if len(clients) != 3 {
		t.Errorf("outages of clients %v, want one for each of 3", clients)
	}
	if int64(lost) != res.Failed {
		t.Errorf("outages lost %d transactions, the run counted %d failed", lost, res.Failed)
	}
	for _, e := range res.Errors {
		if e.Cause == "" {
			t.Errorf("error %+v: a transaction lost with its connection has no cause", e)
		}
	}
	if len(res.ConnectErrors) != 0 {
		t.Errorf("connect errors %+v, want none: the server stayed up", res.ConnectErrors)
	}
}

// TestWindowCountsOnlyMeasured: warm-up transactions are not measured, but they are
// part of the commits the server sees.
func TestWindowCountsOnlyMeasured(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	script := &driver.Script{Name: "one", Weight: 1, Commands: []driver.Command{{SQL: "SELECT 1"}}}
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
		Clients: 2, Warmup: time.Second, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed == 0 || res.CommitsTotal <= res.Committed {
		t.Errorf("measured %d, total %d: want warm-up commits outside the window", res.Committed, res.CommitsTotal)
	}
	if w := res.WindowEnd.Sub(res.WindowStart); w < 990*time.Millisecond || w > 1100*time.Millisecond {
		t.Errorf("window %s, want 1s", w)
	}
}
