package driver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestAbortOnLost: with Config.AbortOnLost a client whose session ends stops
// there, aborted as pgbench aborts it, on every transport: its transaction counts
// as lost, it does not connect again, and the run ends with its clients.
func TestAbortOnLost(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	onTransports(func(transport string) {
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{suicide()},
			Clients: 2, Transactions: 5, AbortOnLost: true, ThreadPerClient: transport == "thread"})
		if err != nil {
			t.Fatal(err)
		}
		// Each client's commit and its one session start: no second connection.
		if s := res.Scripts[0]; s.Failed != 2 || s.Committed != 0 || res.CommitsTotal != 2+2 {
			t.Errorf("%s: %+v, %d commits counted: want each client's first transaction lost after one commit, and no reconnection", transport, s, res.CommitsTotal)
		}
		if res.Aborted != 2 || !strings.Contains(res.Abort, "lost its connection") || len(res.Outages) != 0 {
			t.Errorf("%s: %d clients aborted (%q), %d outages: want both aborted for their lost connections, and no outage", transport, res.Aborted, res.Abort, len(res.Outages))
		}
	})
}
