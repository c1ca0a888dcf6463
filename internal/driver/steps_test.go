package driver_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// counter is a transaction of Steps: BEGIN, an increment of the client's row, then
// COMMIT. Even clients fail their first try with a serialization failure inside the
// block, odd ones roll back on purpose every fourth transaction, and with pause set
// each transaction pauses before its COMMIT.
type counter struct {
	stage, txs []int // per client: the request awaited, the transactions begun
	pause      time.Duration
}

func (c *counter) Start(s *driver.Session) (driver.Step, error) {
	c.stage[s.Client()] = 0
	if s.Attempt() == 1 {
		c.txs[s.Client()]++
	}
	s.RequestText([]byte("BEGIN"), false)
	return driver.Await, nil
}

func (c *counter) Resume(s *driver.Session, answer error) (driver.Step, error) {
	id := s.Client()
	if answer != nil {
		return driver.Finished, answer
	}
	c.stage[id]++
	switch c.stage[id] {
	case 1:
		s.Int(int64(id)).RequestPrepared(0, true)
		return driver.Await, nil
	case 2:
		if s.Results() != 1 || s.Rows() != 1 {
			return driver.Finished, &driver.Abort{Err: fmt.Errorf("client %d: %d results, %d rows", id, s.Results(), s.Rows())}
		}
		if c.pause > 0 {
			s.Pause(c.pause)
			return driver.Pause, nil
		}
		c.stage[id]++
		fallthrough
	case 3:
		switch {
		case id%2 == 0 && s.Attempt() == 1:
			s.RequestText([]byte("DO $$ BEGIN RAISE EXCEPTION 'try again' USING ERRCODE = '40001'; END $$"), false)
		case id%2 == 1 && c.txs[id]%4 == 0:
			s.RequestText([]byte("DO $$ BEGIN RAISE EXCEPTION 'on purpose' USING ERRCODE = 'P0001'; END $$"), false)
		default:
			s.RequestText([]byte("COMMIT"), false)
		}
		return driver.Await, nil
	}
	return driver.Finished, nil
}

// TestSteps runs a transaction of Steps on every transport (event loops, with and
// without pauses, goroutines on Go's poller, threads of their own): answers read
// with their rows, a failure inside a block rolled back and retried from the start,
// a rollback on purpose counted as one, and every commit counted as the server
// counts it.
func TestSteps(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	const clients, perClient = 4, 50
	for _, mode := range []struct {
		name              string
		pause             time.Duration
		thread, goroutine bool
	}{{name: "loop"}, {name: "pause", pause: time.Millisecond}, {name: "goroutine", goroutine: true}, {name: "thread", thread: true}} {
		t.Run(mode.name, func(t *testing.T) {
			if mode.goroutine {
				defer driver.SetNoLoops()()
			}
			pgtest.Query(t, dsn, "drop table if exists counts; create table counts(id int primary key, n int not null default 0)")
			pgtest.Query(t, dsn, fmt.Sprintf("insert into counts(id) select generate_series(0, %d)", clients-1))
			st := &counter{stage: make([]int, clients), txs: make([]int, clients), pause: mode.pause}
			script := &driver.Script{Name: "counter", Weight: 1, Statements: []string{"UPDATE counts SET n = n + 1 WHERE id = $1 RETURNING n"},
				Steps: st, RollbackState: "P0001"}
			res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
				Clients: clients, Transactions: perClient, MaxTries: 2, ThreadPerClient: mode.thread, Loops: 2})
			if err != nil {
				t.Fatal(err)
			}
			if want := 2; !mode.thread && !mode.goroutine && res.EventLoops != want {
				t.Errorf("%d event loops, want %d", res.EventLoops, want)
			}
			s := res.Scripts[0]
			if s.Committed+s.RolledBack != clients*perClient || s.Failed != 0 {
				t.Fatalf("%+v: want %d transactions, none failed", s, clients*perClient)
			}
			// Even clients retry every transaction once; odd ones roll back one in
			// four of theirs, whose increments the server then undoes.
			if s.Retried != clients/2*perClient || s.Retries != s.Retried {
				t.Errorf("%d retried in %d retries, want %d once each", s.Retried, s.Retries, clients/2*perClient)
			}
			if s.RolledBack != clients/2*(perClient/4) {
				t.Errorf("%d rolled back on purpose, want a quarter of the %d of odd clients", s.RolledBack, clients/2*perClient)
			}
			if got := pgtest.Query(t, dsn, "select sum(n) from counts"); got != fmt.Sprint(s.Committed) {
				t.Errorf("the server counted %s increments, the run %d commits", got, s.Committed)
			}
			if res.CommitsTotal < s.Committed {
				t.Errorf("%d commits counted as they completed, want at least the %d committed", res.CommitsTotal, s.Committed)
			}
			if mode.pause > 0 {
				if low := time.Duration(s.Latency.Min()) * time.Microsecond; low < mode.pause {
					t.Errorf("shortest transaction %s, shorter than its %s pause", low, mode.pause)
				}
			}
		})
	}
}

// TestStepsAbort: a Stepper's Abort stops its client and closes its connection,
// which ends the block it left open, and counts the transaction as failed.
func TestStepsAbort(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	script := &driver.Script{Name: "abort", Weight: 1, Steps: aborter{}}
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
		Clients: 2, Duration: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Scripts[0]
	if s.Failed != 2 || s.Committed != 0 || res.Aborted != 2 {
		t.Errorf("%+v, %d aborted: want both clients' first transaction failed and both aborted", s, res.Aborted)
	}
	if took := res.End.Sub(res.Start); took > 3*time.Second {
		t.Errorf("the run took %s: it should end once both clients stopped", took)
	}
	// Its connection closed, the server rolls the block back as the session ends.
	left := ""
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if left = pgtest.Query(t, dsn, "select count(*) from pg_stat_activity where state like 'idle in transaction%'"); left == "0" {
			break
		}
	}
	if left != "0" {
		t.Errorf("%s sessions still in a transaction block 5 s after the run", left)
	}
}

type aborter struct{}

func (aborter) Start(s *driver.Session) (driver.Step, error) {
	s.RequestText([]byte("BEGIN"), false)
	return driver.Await, nil
}

func (aborter) Resume(s *driver.Session, answer error) (driver.Step, error) {
	if answer != nil || !s.InTransaction() {
		return driver.Finished, answer
	}
	return driver.Finished, &driver.Abort{Err: errors.New("the script cannot go on")}
}

// idle is a transaction of Steps that sends nothing.
type idle struct{}

func (idle) Start(*driver.Session) (driver.Step, error)         { return driver.Finished, nil }
func (idle) Resume(*driver.Session, error) (driver.Step, error) { return driver.Finished, nil }

// big asks for an answer of many reads, rows of 100 bytes, and checks it.
type big struct{ rows int }

func (b big) Start(s *driver.Session) (driver.Step, error) {
	s.Int(int64(b.rows)).RequestPrepared(0, true)
	return driver.Await, nil
}

func (b big) Resume(s *driver.Session, answer error) (driver.Step, error) {
	if answer == nil && (s.Rows() != b.rows || len(s.Value(b.rows-1, 0)) != 100) {
		answer = &driver.Abort{Err: fmt.Errorf("%d rows, want %d of 100 bytes", s.Rows(), b.rows)}
	}
	return driver.Finished, answer
}

// TestStepsOnTheLoops: transactions of Steps that send nothing run one after another
// on an event loop without growing its stack, and beside others that wait for
// answers of many megabytes they do not crowd those out; the large answers arrive
// whole.
func TestStepsOnTheLoops(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	const procs = 2 // event loops
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn),
		Scripts: []*driver.Script{{Name: "idle", Weight: 1, Steps: idle{}}}, Clients: procs, Duration: time.Second, Loops: procs})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// A loop that began each transaction from the end of the one before would have
	// grown its stack by hundreds of megabytes in that second.
	if grown := int64(after.StackSys) - int64(before.StackSys); grown > 64<<20 {
		t.Errorf("goroutine stacks grew by %d MiB during the run", grown>>20)
	}
	if s := res.Scripts[0]; s.Committed < 10_000 || s.Failed != 0 || res.EventLoops != procs {
		t.Fatalf("%+v on %d event loops: want at least 10,000 transactions sending nothing, none failed, on %d", s, res.EventLoops, procs)
	}

	scripts := []*driver.Script{
		{Name: "idle", Weight: 1000, Steps: idle{}},
		{Name: "big", Weight: 1, Statements: []string{"select repeat('x', 100) from generate_series(1, $1::int)"}, Steps: big{rows: 30_000}},
	}
	res, err = driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: scripts, Clients: 2 * procs,
		Duration: 2 * time.Second, Loops: procs})
	if err != nil {
		t.Fatal(err)
	}
	if res.EventLoops != procs {
		t.Errorf("%d event loops, want %d, two clients each", res.EventLoops, procs)
	}
	i, b := res.Scripts[0], res.Scripts[1]
	if i.Failed+b.Failed != 0 || res.Aborted != 0 {
		t.Fatalf("idle %+v, big %+v, aborted %d (%s): want no failure", i, b, res.Aborted, res.Abort)
	}
	if i.Committed < 10_000 || b.Committed < 10 {
		t.Errorf("%d transactions sending nothing and %d answers of 3 MB in 2 s: want at least 10,000 and 10", i.Committed, b.Committed)
	}
}

// texts sends its statements with the simple protocol in one write, and awaits all
// of their answers.
type texts []string

func (t texts) Start(s *driver.Session) (driver.Step, error) {
	for _, sql := range t[:len(t)-1] {
		s.SendQuery([]byte(sql))
	}
	s.RequestText([]byte(t[len(t)-1]), false)
	return driver.Await, nil
}

func (texts) Resume(_ *driver.Session, answer error) (driver.Step, error) {
	return driver.Finished, answer
}

// TestStepsCommitsBeforeLoss: the commits of an answer cut off by a lost connection
// are counted, on every transport.
func TestStepsCommitsBeforeLoss(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	onTransports(func(transport string) {
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{suicide()},
			Clients: 2, Transactions: 1, ThreadPerClient: transport == "thread"})
		if err != nil {
			t.Fatal(err)
		}
		if (transport == "loop") != (res.EventLoops > 0) {
			t.Errorf("%s: %d event loops", transport, res.EventLoops)
		}
		// Each client's commit, and a session start for each of its two connections
		// (the first, and the one that replaced it before the client ended).
		if s := res.Scripts[0]; s.Failed != 2 || res.CommitsTotal != 2+2*2 {
			t.Errorf("%s: %+v, %d commits counted: want both transactions lost, each after one commit, and four session starts", transport, s, res.CommitsTotal)
		}
	})
}

// suicide is a script of a commit and the end of its own session.
func suicide() *driver.Script {
	return &driver.Script{Name: "suicide", Weight: 1, Steps: texts{"select 1", "select pg_terminate_backend(pg_backend_pid())"}}
}

// onTransports calls f on each transport in turn: the event loop, a goroutine
// per client (no loops) and a thread per client (f gives ThreadPerClient).
func onTransports(f func(transport string)) {
	for _, transport := range []string{"loop", "goroutine", "thread"} {
		func() {
			if transport == "goroutine" {
				defer driver.SetNoLoops()() // restored even when f fails the test
			}
			f(transport)
		}()
	}
}

// TestStepsTerminatedBetween: sessions ended by the server while their clients run
// transactions that send nothing, between ones that do: each such client notices
// when it next sends, counts one transaction lost, connects again and goes on.
func TestStepsTerminatedBetween(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	tg := parse(t, dsn)
	tg.Config.RuntimeParams["application_name"] = "steps-terminated"
	scripts := []*driver.Script{{Name: "idle", Weight: 200, Steps: idle{}}, {Name: "one", Weight: 1, Steps: texts{"select 1"}}}
	onWindow, done := inWindow(func() {
		time.Sleep(time.Second) // into the window: the fault's place, not a wait for something
		pgtest.Query(t, dsn, "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = 'steps-terminated'")
	})
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: scripts, Clients: 4, Duration: 3 * time.Second, OnWindow: onWindow})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if res.EventLoops == 0 {
		t.Errorf("no event loop")
	}
	o := res.Scripts[1]
	if o.Failed < 1 || o.Failed > 4 || res.Scripts[0].Failed != 0 {
		t.Errorf("idle %+v, one %+v: want one lost transaction of one for each client whose session ended, and no other failure", res.Scripts[0], o)
	}
	if o.Committed < 100 || res.End.Sub(res.WindowEnd) > time.Second {
		t.Errorf("%d statements committed, the run ended %s after its window: want the clients back at work and the run on time", o.Committed, res.End.Sub(res.WindowEnd))
	}
}
