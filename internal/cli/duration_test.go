package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
)

// TestDurationFlags: every duration flag of every command takes a plain number of
// seconds, as pgbench's -T and -P do, as well as a Go duration.
func TestDurationFlags(t *testing.T) {
	cases := []struct {
		cmd  []string
		args []string
		flag string
		want string
	}{
		{[]string{"run", "tpcb"}, []string{"-T", "60"}, "duration", "1m0s"},
		{[]string{"run", "tpcb"}, []string{"--duration", "5m"}, "duration", "5m0s"},
		{[]string{"run", "tpcb"}, []string{"-P", "5"}, "progress", "5s"},
		{[]string{"run", "tpcb"}, []string{"--warmup", "30"}, "warmup", "30s"},
		{[]string{"run", "tpcb"}, []string{"--warmup", "0"}, "warmup", "0"},
		{[]string{"run", "tpcc"}, []string{"--duration", "1.5"}, "duration", "1.5s"},
		{[]string{"run", "tpcc"}, []string{"--outage-timeout", "90"}, "outage-timeout", "1m30s"},
		{[]string{"run", "sysbench"}, []string{"--tx-timeout", "120"}, "tx-timeout", "2m0s"},
		{[]string{"run", "sysbench"}, []string{"--connect-timeout", "2.5"}, "connect-timeout", "2.5s"},
		{[]string{"demo"}, []string{"--warmup", "3", "--duration", "20"}, "duration", "20s"},
		{[]string{"demo"}, []string{"--warmup", "3"}, "warmup", "3s"},
		{[]string{"study", "run"}, []string{"--progress", "15"}, "progress", "15s"},
	}
	for _, c := range cases {
		t.Run(strings.Join(append(append([]string{}, c.cmd...), c.args...), " "), func(t *testing.T) {
			env := &cli.Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: os.Getenv, Now: time.Now}
			cmd, _, err := cli.NewRoot(env).Find(c.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(c.args); err != nil {
				t.Fatalf("%v", err)
			}
			if got := cmd.Flags().Lookup(c.flag).Value.String(); got != c.want {
				t.Errorf("--%s = %s, want %s", c.flag, got, c.want)
			}
		})
	}
}

// TestDurationTooLong: a duration whose deadlines would overflow is refused with
// the limit in one line, before anything is connected or stored.
func TestDurationTooLong(t *testing.T) {
	dsn := "host=127.0.0.1 port=1 user=nobody" // never reached
	results := filepath.Join(t.TempDir(), "untouched.db")
	study := filepath.Join(t.TempDir(), "s.yaml")
	var cases []badInput
	for _, f := range []struct{ flag, value string }{
		{"--duration", "2100000h"}, {"-T", "2100000h"}, {"--duration", "3000000h"}, {"--warmup", "87601h"}, {"--progress", "9999999999"},
		{"--outage-timeout", "1e300"}, {"--tx-timeout", "300000h"}, {"--connect-timeout", "Inf"},
	} {
		name := "--" + strings.TrimLeft(f.flag, "-")
		if f.flag == "-T" {
			name = "--duration"
		}
		cases = append(cases, badInput{"run tpcb " + f.flag + "=" + f.value,
			[]string{"run", "tpcb", f.flag, f.value, "--dsn", dsn, "--results", results},
			fmt.Sprintf("%s %s is too long: at most 87600h (10 years)", name, f.value), cli.ExitUsage})
	}
	cases = append(cases,
		// --scale 0 stops the demo before it starts servers, should the duration pass.
		badInput{"demo --duration", []string{"demo", "--duration", "100000h", "--scale", "0"}, "--duration 100000h is too long: at most 87600h (10 years)", cli.ExitUsage},
		badInput{"study run --progress", []string{"study", "run", study, "--progress", "100000h"}, "--progress 100000h is too long", cli.ExitUsage},
		badInput{"not a duration", []string{"run", "tpcb", "--duration", "5 parsecs", "--dsn", dsn}, `--duration "5 parsecs" is not a duration: give seconds (60) or a Go duration (90s, 5m, 1h30m)`, cli.ExitUsage},
		badInput{"unit alone", []string{"run", "tpcb", "--warmup", "h", "--dsn", dsn}, `--warmup h is not a duration`, cli.ExitUsage},
		badInput{"NaN", []string{"run", "tpcb", "--warmup", "NaN", "--dsn", dsn}, `--warmup NaN is not a duration`, cli.ExitUsage},
	)
	checkBadInput(t, cases)
	for _, c := range cases {
		_, _, errOut := run(t, c.args...)
		if n := strings.Count(strings.TrimSpace(errOut), "\n"); n > 0 {
			t.Errorf("%s: %d lines on stderr, want one:\n%s", c.name, n+1, errOut)
		}
	}
	if _, err := os.Stat(results); !os.IsNotExist(err) {
		t.Errorf("a refused duration created the results store: %v", err)
	}
}
