// Package clitest runs pgbakeoff's command line inside a test, as a user would
// in a shell, and returns what they would see:
//
//	code, stdout, stderr := clitest.Run(t, "run", "tpcb", "--duration", "1s", "--dsn", dsn)
package clitest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
)

// Run executes the command line with args and returns its exit code and output.
// Ctrl-C never comes: the context ends only with the command.
func Run(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return RunInput(t, "", args...)
}

// RunInput is Run with stdin as the command's standard input.
func RunInput(t testing.TB, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut, Getenv: os.Getenv, Now: time.Now, Args: args,
		Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }}
	code = cli.Main(env)
	return code, out.String(), errOut.String()
}
