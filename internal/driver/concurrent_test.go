package driver_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// Two runs at once in one process, with different numbers of event loops: each
// has the loops it asked for, counts exactly its own transactions, and neither
// changes the process's GOMAXPROCS.
func TestTwoRunsAtOnce(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	procs := runtime.GOMAXPROCS(0)
	type one struct {
		loops, clients int
		table          string
		res            *driver.Result
		err            error
		procsSeen      []int
	}
	runs := []*one{{loops: 1, clients: 3, table: "a"}, {loops: 2, clients: 4, table: "b"}}
	for _, r := range runs {
		pgtest.Query(t, dsn, "create table "+r.table+" (client int)")
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			script := &driver.Script{Name: "insert", Weight: 1, Vars: []driver.Var{{Name: "x", Min: 1, Max: 9}},
				Commands: []driver.Command{{SQL: "insert into " + r.table + " values ($1)", Params: []int{0}}}}
			r.res, r.err = driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{script},
				Clients: r.clients, Loops: r.loops, Transactions: 300, Interval: 50 * time.Millisecond,
				OnInterval: func(driver.Interval) { r.procsSeen = append(r.procsSeen, runtime.GOMAXPROCS(0)) }})
		}()
	}
	wg.Wait()
	for _, r := range runs {
		t.Run(fmt.Sprintf("loops=%d", r.loops), func(t *testing.T) {
			if r.err != nil {
				t.Fatal(r.err)
			}
			rows, _ := strconv.ParseInt(pgtest.Query(t, dsn, "select count(*) from "+r.table), 10, 64)
			done := r.res.Committed // with Transactions and no warm-up, all of them are in the window
			if want := int64(300 * r.clients); done != want || rows != want {
				t.Errorf("committed %d, %d rows in %s; want %d of each", done, rows, r.table, want)
			}
			if r.res.EventLoops != r.loops {
				t.Errorf("%d event loops, want %d", r.res.EventLoops, r.loops)
			}
			for _, p := range r.procsSeen {
				if p != procs {
					t.Errorf("GOMAXPROCS was %d during the run, want it left at %d", p, procs)
					break
				}
			}
		})
	}
	if p := runtime.GOMAXPROCS(0); p != procs {
		t.Errorf("GOMAXPROCS is %d after the runs, want %d", p, procs)
	}
}
