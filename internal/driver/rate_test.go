package driver_test

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func selectOne() *driver.Script {
	return &driver.Script{Name: "one", Weight: 1, Commands: []driver.Command{{SQL: "SELECT 1"}}}
}

// An open-loop run holds its rate when the server has room, and its arrivals are a
// Poisson process: the gaps between them fit the exponential distribution. On Linux
// the clients wait for their arrivals on event loops; with a connection per
// transaction they are goroutines a pacer wakes, and hold a lower rate as well (with
// clients enough for connections slowed by a busy machine).
func TestRateHeld(t *testing.T) {
	pgtest.Long(t)
	t.Run("loops", func(t *testing.T) { testRateHeld(t, 1000, 4, false) })
	t.Run("pacer", func(t *testing.T) { testRateHeld(t, 100, 16, true) })
}

func testRateHeld(t *testing.T, rate float64, clients int, connectPerTx bool) {
	const secs = 4
	var mu sync.Mutex
	var arrivals []time.Time
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, pgtest.DSN(t)), Scripts: []*driver.Script{selectOne()},
		Clients: clients, Duration: secs * time.Second, Rate: rate, Seed: 42, ConnectPerTx: connectPerTx,
		OnTransaction: func(ev driver.TxEvent) {
			mu.Lock()
			arrivals = append(arrivals, ev.Start)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	if loops := runtime.GOOS == "linux" && !connectPerTx; (res.EventLoops > 0) != loops {
		t.Errorf("%d event loops, want them %v", res.EventLoops, loops)
	}
	f := res.Rate
	// The window's arrivals are Poisson: within five standard deviations of rate x time.
	if want := rate * secs; math.Abs(float64(f.Scheduled)-want) > 5*math.Sqrt(want) {
		t.Errorf("%d arrivals scheduled in %d s at %g/s", f.Scheduled, secs, rate)
	}
	// Held within 2%, besides the transactions still in flight as the window closed
	// (at most one a client), which are not counted in it.
	done := float64(res.Committed)
	if math.Abs(done-float64(f.Scheduled)) > 0.02*float64(f.Scheduled)+float64(clients) || f.Untaken > f.Scheduled/50 || res.Failed > 0 {
		t.Errorf("%d committed of %d scheduled (%d not begun, %d failed): the rate was not held", res.Committed, f.Scheduled, f.Untaken, res.Failed)
	}
	if f.LagAvg <= 0 || f.LagMax < f.LagAvg {
		t.Errorf("schedule lag avg %s, max %s", f.LagAvg, f.LagMax)
	}
	// Kolmogorov-Smirnov: the largest distance between the gaps' empirical
	// distribution and the exponential one of mean 1/rate, against its critical
	// value at the 0.1% level. The seed makes the schedule the same every time.
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	var gaps []float64
	for i := 1; i < len(arrivals); i++ {
		gaps = append(gaps, arrivals[i].Sub(arrivals[i-1]).Seconds())
	}
	slices.Sort(gaps)
	n := float64(len(gaps))
	d := 0.0
	for i, g := range gaps {
		cdf := 1 - math.Exp(-rate*g)
		d = max(d, math.Abs(cdf-float64(i)/n), math.Abs(cdf-float64(i+1)/n))
	}
	if crit := 1.95 / math.Sqrt(n); n < 0.75*rate*secs || d > crit {
		t.Errorf("gaps between %d arrivals: KS distance %.4f from the exponential, critical %.4f", len(gaps), d, crit)
	}
}

// With a latency limit, arrivals that cannot begin within it are skipped and
// those that end later are counted late: two clients that take 20 ms each cannot
// carry 500 transactions a second.
func TestRateLatencyLimit(t *testing.T) {
	pgtest.Long(t)
	slow := &driver.Script{Name: "slow", Weight: 1, Commands: []driver.Command{{SQL: "SELECT pg_sleep(0.02)"}}}
	var mu sync.Mutex
	skipped := 0
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, pgtest.DSN(t)), Scripts: []*driver.Script{slow},
		Clients: 2, Duration: 2 * time.Second, Rate: 500, LatencyLimit: 30 * time.Millisecond, Seed: 7,
		OnTransaction: func(ev driver.TxEvent) {
			if ev.Skipped {
				mu.Lock()
				skipped++
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Rate
	// About 100 tx/s get done of 500 due: most are skipped, and none waits long,
	// only those that arrived in the window's last 50 ms or so were not begun.
	if f.Skipped < f.Scheduled/2 || res.Committed > 150*2 || f.Untaken > 40 || skipped < int(f.Skipped) {
		t.Errorf("%d committed, %d skipped (%d events), %d not begun, of %d scheduled", res.Committed, f.Skipped, skipped, f.Untaken, f.Scheduled)
	}
	if f.Late == 0 || f.Late > res.Committed || f.LagMax > 30*time.Millisecond+10*time.Millisecond {
		t.Errorf("%d late of %d committed; lag max %s", f.Late, res.Committed, f.LagMax)
	}
}
