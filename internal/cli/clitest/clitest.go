// Package clitest runs pgbakeoff's command line inside a test, as a user would
// in a shell, and returns what they would see:
//
//	code, stdout, stderr := clitest.Run(t, "run", "tpcb", "--duration", "1s", "--dsn", dsn)
package clitest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/schema"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// Run executes the command line with args and returns its exit code and output.
// Ctrl-C never comes: the context ends only with the command. JSON it prints
// (--json, --format json) must fit its schema (FitsSchema).
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
	if name := cli.OutputSchema(args); name != "" && len(bytes.TrimSpace(out.Bytes())) > 0 {
		FitsSchema(t, name, out.Bytes())
	}
	return code, out.String(), errOut.String()
}

// Loaded returns the DSN of a database of the test's own holding what
// `pgbakeoff init` with args loads: a copy of one such load made for the first
// test of the binary that asked (pgtest.Loaded), for tests that need the data
// and not the load.
func Loaded(t testing.TB, args ...string) string {
	t.Helper()
	return pgtest.Loaded(t, strings.Join(args, " "), func(dsn string) error {
		if code, out, errOut := Run(t, append(append([]string{"init"}, args...), "--dsn", dsn)...); code != 0 {
			return fmt.Errorf("init %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return nil
	})
}

// FitsSchema fails the test when doc, one JSON document, does not fit the named
// schema (`pgbakeoff schema NAME`).
func FitsSchema(t testing.TB, name string, doc []byte) {
	t.Helper()
	if err := schema.Validate(name, doc); err != nil {
		t.Errorf("the JSON does not fit `pgbakeoff schema %s`: %v\n%s", name, err, doc)
	}
}

// WriteFile writes text to path, failing the test if it cannot.
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// StudyRuns is what the results store at results holds of the named study's
// runs, by key.
func StudyRuns(t testing.TB, results, study string) map[string]store.StudyRun {
	t.Helper()
	st, err := store.OpenReadOnly(t.Context(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.FindStudy(t.Context(), study)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.StudyRuns(t.Context(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}
