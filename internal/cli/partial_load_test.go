package cli_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestInterruptedLoad: data left by a load stopped halfway is never taken for a
// dataset; loading again makes it whole.
func TestInterruptedLoad(t *testing.T) {
	tests := []struct {
		kind string
		init []string
	}{
		{"tpcb", []string{"--scale", "40"}},
		{"tpcc", []string{"--warehouses", "5"}},
		{"sysbench", []string{"--tables", "2", "--table-size", "1000000"}},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			dsn := pgtest.NewDatabase(t)
			args := append([]string{"init", tc.kind, "--dsn", dsn}, tc.init...)
			var stdout, stderr bytes.Buffer
			env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv, Now: time.Now, Args: args,
				Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
					return context.WithTimeout(ctx, 600*time.Millisecond) // Ctrl-C during the copy
				}}
			if code := cli.Main(env); code != cli.ExitInterrupted {
				t.Fatalf("interrupted init: exit %d, want %d\n%s%s", code, cli.ExitInterrupted, stdout.String(), stderr.String())
			}
			code, out, errOut := run(t, "run", tc.kind, "--duration", "1s", "--results", t.TempDir()+"/r.db", "--dsn", dsn)
			if code == 0 || !strings.Contains(errOut, "did not finish") {
				t.Errorf("run on an interrupted load: exit %d, want an error saying the load did not finish\n%s%s", code, out, errOut)
			}
			if code, out, errOut := run(t, args...); code != 0 || !strings.Contains(errOut, "did not finish; loading it again") {
				t.Fatalf("init again: exit %d, want a note that the previous load did not finish\n%s%s", code, out, errOut)
			}
			if code, out, errOut := run(t, "run", tc.kind, "--duration", "1s", "--results", t.TempDir()+"/r.db", "--dsn", dsn); code != 0 {
				t.Errorf("run after loading again: exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}
