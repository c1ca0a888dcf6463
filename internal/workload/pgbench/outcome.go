package pgbench

import (
	"sync/atomic"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
)

// Outcome is what a finished run adds for pgbench's own report (`pgbakeoff
// pgbench`): figures a summary does not keep.
type Outcome struct {
	// InitialConnect is how long connecting every client took before the run.
	InitialConnect time.Duration
	// Aborted and Lost are, for each script in the run's order, its failed
	// transactions that stopped their client (a script error) and those lost with
	// their connection: pgbench aborts such clients and counts neither as failed.
	Aborted, Lost []int64
	// Retries are each script's extra tries, and Skipped its transactions skipped
	// under a rate and a latency limit, in the window.
	Retries, Skipped []int64
	// The partitioning of pgbench_accounts, when builtin scripts found it
	// partitioned: "range" or "hash", and the number of partitions.
	PartitionMethod string
	Partitions      int
}

// Outcome is the last run's, once it has finished.
func (r *Run) Outcome() Outcome { return r.outcome }

// add takes the run's result: the failures that ended a client or its
// connection, the retries and the skipped transactions, by script.
func (o *Outcome) add(res *driver.Result, scripts []*driver.Script, skipped []atomic.Int64) {
	o.InitialConnect = res.ConnectTime
	o.Aborted = make([]int64, len(scripts))
	o.Lost = make([]int64, len(scripts))
	o.Skipped = make([]int64, len(scripts))
	for i := range skipped {
		o.Skipped[i] = skipped[i].Load()
	}
	for _, s := range res.Scripts {
		o.Retries = append(o.Retries, s.Retries)
	}
	for _, e := range res.Errors {
		if e.Cause == "" || e.Retried {
			continue // a failure pgbench counts, or a try that was retried
		}
		for i, s := range scripts {
			if s.Name != e.Script {
				continue
			}
			if e.Cause == driver.CauseAborted {
				o.Aborted[i] += e.Count
			} else {
				o.Lost[i] += e.Count
			}
			break
		}
	}
}
