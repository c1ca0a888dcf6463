// Package faults_test runs pgbakeoff's command line through what goes wrong in a
// benchmark: the process killed or interrupted mid-load and mid-study, servers
// stopped, sessions terminated, two runs on one database, shards of one run in
// processes of their own. They are apart from internal/cli's tests so that each
// package's tests stay well inside go test's ten minutes.
package faults_test

import (
	"os"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) {
	// Times print in UTC, here and in the pgbakeoff processes the tests start.
	time.Local = time.UTC
	clitest.ServeChild()
	// The parallel sub-tests wait on servers of their own being stopped and
	// started again: all four of a test at once, not one a core.
	pgtest.Parallel(4)
	os.Exit(pgtest.Run(m))
}

// run executes the command line as a user would and returns exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, args...)
}
