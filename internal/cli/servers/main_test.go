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

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
)

// Four at a time: the tests wait on servers more than they use the CPU.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m, 4)) }

// run executes the command line as a user would and returns exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, args...)
}
