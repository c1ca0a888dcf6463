package clitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// childArgsEnv carries a child's command line, JSON-encoded, from Command to
// ServeChild.
const childArgsEnv = "PGBAKEOFF_TEST_CHILD_ARGS"

// served is set by ServeChild: a test binary without it would run a child as
// no tests at all and exit 0, and the test would fail later for a reason far
// from this one.
var served bool

// ServeChild makes a test binary a pgbakeoff process when Command started it:
// it runs the command line it was given and exits with its code. Call it in
// TestMain before m.Run, after what the child must share (time.Local); in the
// test binary proper it returns at once. Tests that kill pgbakeoff, or run two
// at once as two users would, need a process of its own.
func ServeChild() {
	served = true
	raw := os.Getenv(childArgsEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintf(os.Stderr, "clitest: %s: %v\n", childArgsEnv, err)
		os.Exit(2)
	}
	env := cli.NewEnv()
	env.Args = args
	os.Exit(cli.Main(env))
}

// Command is the test binary run as pgbakeoff with args (see ServeChild), not
// yet started; env is added to the test's own environment.
func Command(t testing.TB, args []string, env ...string) *exec.Cmd {
	t.Helper()
	if !served {
		t.Fatal("clitest.Command: the test binary does not serve children; call clitest.ServeChild from TestMain")
	}
	encoded, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childArgsEnv+"="+string(encoded)), env...)
	return cmd
}

// Start starts pgbakeoff with args in a child process and returns it with a
// scanner of its standard output.
func Start(t testing.TB, args []string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := Command(t, args)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// Main is the TestMain of a package that runs the command line: times print in
// UTC (as golden files hold them), here and in the pgbakeoff processes the tests
// start; the test binary serves as such a process when Command started it; and
// the tests run on the test server of pgtest. parallel, when above 0, is how
// many parallel tests run at once (pgtest.Parallel), for tests that wait on
// servers more than they use the CPU.
func Main(m *testing.M, parallel int) int {
	time.Local = time.UTC
	ServeChild()
	if parallel > 0 {
		pgtest.Parallel(parallel)
	}
	return pgtest.Run(m)
}
