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

// TestSteps runs a transaction of Steps on event loops as a small state (and on
// coroutines when it pauses, and on threads of its own): answers read with their
// rows, a failure inside a block rolled back and retried from the start, a rollback
// on purpose counted as one, and every commit counted as the server counts it.
func TestSteps(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	const clients, perClient = 4, 50
	for _, mode := range []struct {
		name   string
		pause  time.Duration
		thread bool
	}{{name: "loop"}, {name: "coroutine", pause: time.Millisecond}, {name: "thread", thread: true}} {
		t.Run(mode.name, func(t *testing.T) {
			pgtest.Query(t, dsn, "drop table if exists counts; create table counts(id int primary key, n int not null default 0)")
			pgtest.Query(t, dsn, fmt.Sprintf("insert into counts(id) select generate_series(0, %d)", clients-1))
			st := &counter{stage: make([]int, clients), txs: make([]int, clients), pause: mode.pause}
			script := &driver.Script{Name: "counter", Weight: 1, Statements: []string{"UPDATE counts SET n = n + 1 WHERE id = $1 RETURNING n"},
				Steps: st, Pauses: mode.pause > 0, RollbackState: "P0001"}
			res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
				Clients: clients, Transactions: perClient, MaxTries: 2, ThreadPerClient: mode.thread})
			if err != nil {
				t.Fatal(err)
			}
			if want := min(runtime.GOMAXPROCS(0), clients); !mode.thread && res.EventLoops != want {
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

// TestStepsAbort: a Stepper's Abort stops its client, after rolling back the block
// it left open, and counts the transaction as failed.
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
	if got := pgtest.Query(t, dsn, "select count(*) from pg_stat_activity where state like 'idle in transaction%'"); got != "0" {
		t.Errorf("%s sessions left in a transaction block", got)
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
