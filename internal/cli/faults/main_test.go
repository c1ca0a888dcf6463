// Package faults_test runs pgbakeoff's command line through what goes wrong in a
// benchmark: the process killed or interrupted mid-load and mid-study, servers
// stopped, sessions terminated, two runs on one database, shards of one run in
// processes of their own. They are apart from internal/cli's tests so that each
// package's tests stay well inside go test's ten minutes.
package faults_test

import (
	"os"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
)

// The parallel sub-tests wait on servers of their own being stopped and started
// again: all four of a test at once, not one a core.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m, 4)) }

// run executes the command line as a user would and returns exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, args...)
}
