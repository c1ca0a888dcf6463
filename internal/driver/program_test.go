package driver_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestProgram runs Go-coded transactions that read results, decide from them, and
// sometimes roll back on purpose, both in the client and on the server, dealt from a
// deck; the table, the counts and the deck's proportions must all agree.
func TestProgram(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table ledger(client int, n int, note text, primary key (client, n))")
	pgtest.Query(t, dsn, `create function checked_insert(c int, n int) returns int language plpgsql as $$
		begin
			if n % 5 = 0 then raise exception 'refused' using errcode = 'TPC99'; end if;
			insert into ledger values (c, n, 'server'); return n;
		end $$`)
	var mu sync.Mutex
	var wrong []string
	client := &driver.Script{Name: "client", Weight: 3, Statements: []string{
		"select coalesce(max(n), 0) + 1, $2::text from ledger where client = $1",
		"insert into ledger values ($1, $2, $3)",
	}, Program: func(s *driver.Session) error {
		if err := s.Query([]byte("BEGIN")); err != nil {
			return err
		}
		c := int64(s.Client())
		if err := s.Int(c).Text([]byte("echo")).Exec(0); err != nil {
			return err
		}
		if s.Rows() != 1 || !bytes.Equal(s.Value(0, 1), []byte("echo")) || s.Value(0, 2) != nil {
			mu.Lock()
			wrong = append(wrong, fmt.Sprintf("rows %d, value %q", s.Rows(), s.Value(0, 1)))
			mu.Unlock()
		}
		next := s.IntValue(0, 0)
		if err := s.Int(c).Int(next).Null().Exec(1); err != nil {
			return err
		}
		if s.Uniform(1, 10) == 1 {
			if err := s.Query([]byte("ROLLBACK")); err != nil {
				return err
			}
			return driver.ErrRollback
		}
		return s.Query([]byte("COMMIT"))
	}}
	server := &driver.Script{Name: "server", Weight: 1, RollbackState: "TPC99",
		Statements: []string{"select checked_insert($1, $2)"},
		Program: func(s *driver.Session) error {
			return s.Int(int64(1000 + s.Client())).Int(s.Uniform(1, 1_000_000_000)).Exec(0)
		}}
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{client, server},
		Clients: 2, Transactions: 400, Deck: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(wrong) > 0 {
		t.Fatalf("results read wrongly: %v", wrong[0])
	}
	byName := map[string]driver.ScriptResult{}
	for _, s := range res.Scripts {
		byName[s.Name] = s
	}
	cl, sv := byName["client"], byName["server"]
	// The deck deals exactly 3:1 over whole decks: 400 per client is 100 decks.
	if n := cl.Committed + cl.RolledBack; n != 600 {
		t.Errorf("client program ran %d times, want 600", n)
	}
	if n := sv.Committed + sv.RolledBack + sv.Failed; n != 200 {
		t.Errorf("server program ran %d times, want 200", n)
	}
	if cl.Failed != 0 || cl.RolledBack < 20 || cl.RolledBack > 110 {
		t.Errorf("client program: %d failed, %d rolled back; want 0 and about 60", cl.Failed, cl.RolledBack)
	}
	if sv.RolledBack < 10 || sv.RolledBack > 80 {
		t.Errorf("server program: %d rolled back on TPC99, want about 40", sv.RolledBack)
	}
	rows := func(where string) int64 {
		n, _ := strconv.ParseInt(pgtest.Query(t, dsn, "select count(*) from ledger where "+where), 10, 64)
		return n
	}
	if got := rows("note is null"); got != cl.Committed {
		t.Errorf("%d client rows in the table, %d counted as committed", got, cl.Committed)
	}
	if got := rows("note = 'server'"); got != sv.Committed {
		t.Errorf("%d server rows in the table, %d counted as committed", got, sv.Committed)
	}
	// Rollbacks are not server commits; each of the 2 connections' starts and the 3
	// statements prepared on each are.
	if want := cl.Committed + sv.Committed + 2*(1+3); res.CommitsTotal != want {
		t.Errorf("CommitsTotal %d, want %d", res.CommitsTotal, want)
	}
}

// TestSend queues statements ahead of a round trip: their answers are read with it,
// results are the last statement's, the first error of all is returned, and a
// transaction whose queued statement failed is not committed by the queued COMMIT.
func TestSend(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table queue(client int, n int, primary key (client, n))")
	var mu sync.Mutex
	var wrong []string
	note := func(f string, a ...any) {
		mu.Lock()
		wrong = append(wrong, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
	script := &driver.Script{Name: "queued", Statements: []string{
		"insert into queue values ($1, $2)",
		"select count(*), max(n) from queue where client = $1",
	}, Program: func(s *driver.Session) error {
		c, n := int64(s.Client()), s.Uniform(1, 1_000_000_000)
		// BEGIN, the insert and the count in one round trip: the count sees the insert.
		if err := s.SendQuery([]byte("BEGIN")).Int(c).Int(n).Send(0).Int(c).Exec(1); err != nil {
			return err
		}
		if s.Rows() != 1 {
			note("%d rows from the count, want 1", s.Rows())
		}
		count := s.IntValue(0, 0)
		if s.Uniform(1, 4) == 1 {
			// The same key again fails; the queued COMMIT then rolls back, and the
			// insert's error is what the round trip returns.
			err := s.Int(c).Int(n).Send(0).Query([]byte("COMMIT"))
			if err == nil {
				note("a duplicate key did not fail")
			}
			return err
		}
		if err := s.Int(c).Int(n + 1).Send(0).Query([]byte("COMMIT")); err != nil {
			return err
		}
		if s.Rows() != 0 {
			note("%d rows after COMMIT, want those of COMMIT: 0", s.Rows())
		}
		if count < 1 {
			note("count %d inside the transaction, want at least 1", count)
		}
		return nil
	}}
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
		Clients: 2, Transactions: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(wrong) > 0 {
		t.Fatalf("%d wrong results, first: %s", len(wrong), wrong[0])
	}
	r := res.Scripts[0]
	if r.Failed < 20 || r.Committed < 250 || r.Committed+r.Failed != 400 {
		t.Errorf("%d committed, %d failed; want about 300 and 100 of 400", r.Committed, r.Failed)
	}
	// Every committed transaction left two rows; failed ones none.
	got, _ := strconv.ParseInt(pgtest.Query(t, dsn, "select count(*) from queue"), 10, 64)
	if got != 2*r.Committed {
		t.Errorf("%d rows in the table, want 2 per committed transaction: %d", got, 2*r.Committed)
	}
}

// A shard's clients are numbered as in the whole run, and see its client count,
// so that what a program derives from them (TPC-C's terminal to warehouse mapping)
// is a single process's; their random streams are that process's too.
func TestShardClientNumbers(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	draws := func(first, clients, all int) map[int][]int64 {
		var mu sync.Mutex
		out := map[int][]int64{}
		script := &driver.Script{Name: "numbers", Program: func(s *driver.Session) error {
			if s.Clients() != all {
				return fmt.Errorf("Clients() = %d, want %d", s.Clients(), all)
			}
			mu.Lock()
			out[s.Client()] = append(out[s.Client()], s.Uniform(1, 1<<40))
			mu.Unlock()
			return nil
		}}
		if _, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
			Clients: clients, FirstClient: first, AllClients: all, Transactions: 5, Seed: 42}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole := draws(0, 5, 5)
	shard := draws(3, 2, 5)
	if len(shard) != 2 || shard[3] == nil || shard[4] == nil {
		t.Fatalf("shard clients %v, want 3 and 4", shard)
	}
	for c, d := range shard {
		if fmt.Sprint(d) != fmt.Sprint(whole[c]) {
			t.Errorf("client %d drew %v in the shard, %v in the whole run", c, d, whole[c])
		}
	}
	if _, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{{Name: "x", Program: func(*driver.Session) error { return nil }}},
		Clients: 2, FirstClient: 4, AllClients: 5, Transactions: 1}); err == nil {
		t.Errorf("clients 4 and 5 of 5 were accepted")
	}
}
