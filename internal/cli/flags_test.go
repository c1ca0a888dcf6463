package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestFlagValues gives every workload's init and run malformed values (negative,
// zero, huge, without a unit, empty, not a number): each is one line naming the
// flag, exit code 2, and no results store is created or touched.
func TestFlagValues(t *testing.T) {
	dsn := "host=127.0.0.1 port=1 user=nobody" // never reached: the values are checked first
	results := filepath.Join(t.TempDir(), "untouched.db")
	runFlags := []struct{ flag, value string }{
		{"--clients", "-1"}, {"--clients", "0"}, {"--clients", "1000001"}, {"--clients", "many"}, {"--clients", ""},
		{"--duration", "-1s"}, {"--duration", "0s"}, {"--duration", "2100000h"}, {"--duration", "5 parsecs"}, {"--duration", ""},
		{"--warmup", "-1s"}, {"--warmup", "soon"},
		{"--transactions", "-5"}, {"--max-tries", "0"}, {"--jobs", "0"}, {"--progress", "-1s"},
		{"--seed", "-1"}, {"--label", "novalue"}, {"--dist", "pareto:7"}, {"--dist", "lognormal"},
		{"--rate", "-5"}, {"--rate", "fast"}, {"--rate", "NaN"}, {"--rate", "1e-9"}, {"--latency-limit", "-1s"}, {"--latency-limit", "soon"},
	}
	initFlags := map[string][]struct{ flag, value string }{
		"tpcb":     {{"--scale", "0"}, {"--scale", "-3"}, {"--jobs", "0"}, {"--fillfactor", "5"}, {"--partitions", "-1"}, {"--partition-method", "list"}},
		"tpcc":     {{"--warehouses", "0"}, {"--warehouses", "-1"}, {"--warehouses", "x"}, {"--jobs", "0"}},
		"sysbench": {{"--tables", "0"}, {"--table-size", "0"}, {"--table-size", "-1"}, {"--jobs", "0"}, {"--dist", "zipfian:-1"}},
	}
	for _, kind := range []string{"tpcb", "tpcc", "sysbench"} {
		for _, f := range runFlags {
			args := []string{"run", kind, f.flag, f.value, "--dsn", dsn, "--results", results}
			checkFlag(t, fmt.Sprintf("run %s %s=%q", kind, f.flag, f.value), args, f.flag)
		}
		for _, f := range initFlags[kind] {
			args := []string{"init", kind, f.flag, f.value, "--dsn", dsn}
			checkFlag(t, fmt.Sprintf("init %s %s=%q", kind, f.flag, f.value), args, f.flag)
		}
	}
	// TPC-C's keying and thinking times pace each terminal; with --rate the arrivals do.
	checkFlag(t, "run tpcc --keying-thinking --rate", []string{"run", "tpcc", "--keying-thinking", "--rate", "100", "--dsn", dsn, "--results", results}, "--rate")
	for _, f := range []struct{ cmd, flag, value string }{
		{"compare", "--noise", "-0.1"}, {"compare", "--run", "x"}, {"report", "--format", "pdf"},
		{"export", "--format", ""}, {"study", "--progress", "-1s"},
	} {
		args := []string{f.cmd, f.flag, f.value, "--results", results}
		if f.cmd == "study" {
			args = []string{"study", "run", filepath.Join(t.TempDir(), "x.yaml"), f.flag, f.value}
		}
		checkFlag(t, fmt.Sprintf("%s %s=%q", f.cmd, f.flag, f.value), args, f.flag)
	}
	if _, err := os.Stat(results); !os.IsNotExist(err) {
		t.Errorf("bad input created or touched the results store: %v", err)
	}
}

func checkFlag(t *testing.T, name string, args []string, flag string) {
	t.Run(name, func(t *testing.T) {
		code, out, errOut := run(t, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != cli.ExitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "pgbakeoff: ") ||
			!strings.Contains(lines[0], strings.TrimPrefix(flag, "--")) || strings.Contains(out+errOut, "goroutine") {
			t.Errorf("exit %d, stderr %q; want exit %d and one line naming %s", code, errOut, cli.ExitUsage, flag)
		}
	})
}

// TestStudyDataTooLarge: a dataset larger than a local server's disk is refused
// before anything is loaded.
func TestStudyDataTooLarge(t *testing.T) {
	pgtest.Long(t)
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "huge.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: huge
targets: [{name: here, local: {version: "%d"}}]
workloads: [{kind: tpcc, load: {warehouses: 5000000}}]
matrix: {clients: [1], duration: 1s, repeat: 1}
`, pgtest.Server(t).Major))
	code, out, errOut := run(t, "study", "run", file, "--results", filepath.Join(dir, "r.db"), "--servers-dir", filepath.Join(dir, "servers"))
	if code != cli.ExitUsage || !strings.Contains(errOut, "huge.yaml:2:") || !strings.Contains(errOut, "free some space") || strings.Contains(out, "loading") {
		t.Errorf("exit %d\n%s%s\nwant a refusal naming the disk space, before any load", code, out, errOut)
	}
}
