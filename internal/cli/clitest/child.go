package clitest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
)

// childArgsEnv carries a child's command line, JSON-encoded, from Command to
// ServeChild.
const childArgsEnv = "PGBAKEOFF_TEST_CHILD_ARGS"

// ServeChild makes a test binary a pgbakeoff process when Command started it:
// it runs the command line it was given and exits with its code. Call it first
// in TestMain; in the test binary proper it returns at once. Tests that kill
// pgbakeoff, or run two at once as two users would, need a process of its own.
func ServeChild() {
	raw := os.Getenv(childArgsEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Stderr.WriteString("clitest: " + childArgsEnv + ": " + err.Error() + "\n")
		os.Exit(2)
	}
	env := cli.NewEnv()
	env.Args = args
	os.Exit(cli.Main(env))
}

// Command is the test binary run as pgbakeoff with args (see ServeChild), not
// yet started; env is added to the test's own environment.
func Command(args []string, env ...string) *exec.Cmd {
	encoded, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childArgsEnv+"="+string(encoded)), env...)
	return cmd
}

// Start starts pgbakeoff with args in a child process and returns it with a
// scanner of its standard output.
func Start(t testing.TB, args []string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := Command(args)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}
