package driver_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"

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
	const clients, perClient = 5, 40
	procs := runtime.GOMAXPROCS(0)
	loops := min(procs, clients)
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: scripts, Clients: clients,
		Transactions: perClient})
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
