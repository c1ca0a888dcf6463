package engine

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Workload is what a workload adds to the common run: its scripts, built after
// the data was inspected, and its own figures.
type Workload struct {
	Name string
	// Check validates every option that can be judged without the data, so that a
	// mistake is found before anything connects, loads or runs.
	Check func() error
	// Setup inspects the data on the control session and builds the scripts.
	Setup func(ctx context.Context, t *target.Target, ctl *pgconn.PgConn) (*Setup, error)
}

// Setup is a workload ready to run on the data it found.
type Setup struct {
	Scripts []*driver.Script
	Scale   int            // TPC-B scale or TPC-C warehouses
	Size    string         // the scale for people: "scale 100", "10 warehouses"
	Params  map[string]any // stored with the run
	Deck    bool           // deal scripts from a deck (driver.Config.Deck)
	// Window, when set, samples workload figures at the window's edges on the control
	// connection; Finish then adds them to the summary.
	// own is how many transactions pgbakeoff's sampler has committed so far, so the
	// workload's counts can leave them out.
	Window func(ctx context.Context, ctl *pgconn.PgConn, open bool, own int64) error
	Finish func(sum *Summary, res *driver.Result)
}
