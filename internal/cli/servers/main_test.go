// Package servers_test runs pgbakeoff's local servers through the command line:
// server start, list, prune and stop, clusters with standbys, and studies that
// start, fail over and remove servers of their own. Each test has a servers
// directory of its own and spends most of its time waiting on the servers in it
// (initdb, promotion, a failover's window), so the tests run in parallel, apart
// from internal/cli's, whose runs are judged by this process's CPU time.
package servers_test

import (
	"os"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) {
	// Times print in UTC, as in internal/cli's tests.
	time.Local = time.UTC
	clitest.ServeChild()
	// Four at a time: the tests wait on servers more than they use the CPU.
	pgtest.Parallel(4)
	os.Exit(pgtest.Run(m))
}

// run executes the command line as a user would and returns exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, args...)
}
