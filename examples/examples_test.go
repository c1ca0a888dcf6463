// Package examples_test runs the example study files as a user would, each with
// its windows shortened, in a test binary of its own.
package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// run executes the command line as a user would and returns exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, args...)
}

// TestStudyExamples runs each study in examples/ with its windows shortened, its
// larger datasets smaller (still beyond shared_buffers where the file's are), and
// the client sweep at its two ends: the servers, versions, policies and comparison
// are the file's own.
func TestStudyExamples(t *testing.T) {
	pgtest.Long(t)
	shorten := []struct{ re, with string }{
		{`(?m)^  warmup: .*$`, "  warmup: 0s"},
		{`(?m)^  duration: .*$`, "  duration: 2s"},
		{`(?m)^  pause: .*$`, "  pause: 0s"},
		// Smaller loads, each on the same side of its target's shared_buffers as
		// the file's: the same plans, copies and checkpoints over less data. The
		// targets of 256 MB get less: 160 MB, which one TPC-C warehouse (about
		// 110 MB) fits in and two do not, and 128 MB, which sysbench-tpcc at
		// scale 1 (about 85 MB) fits in and scale 2 does not.
		{`load: \{warehouses: 4\}`, "load: {warehouses: 2}"},
		{`load: \{warehouses: 8\}`, "load: {warehouses: 2}"},
		{`settings: \{shared_buffers: 256MB\}`, "settings: {shared_buffers: 160MB}"},
		{`load: \{tables: 1, scale: 2\}`, "load: {tables: 1, scale: 1}"},
		{`load: \{tables: 1, scale: 8\}`, "load: {tables: 1, scale: 2}"},
		{`(?m)^(\s+)shared_buffers: 256MB$`, "${1}shared_buffers: 128MB"},
		// The sweep's ends: the same plan, a table and a chart over two counts.
		{`(?m)^  clients: \[4, 8, 16, 32, 64\]$`, "  clients: [4, 64]"},
		{`(?m)^  clients: \[4, 8, 16, 32\] .*$`, "  clients: [4, 32]"},
	}
	tests := []struct {
		file   string
		repeat bool // keep three repetitions: the median of three is what the example shows
		want   []string
	}{
		{"pg11-vs-pg16.yaml", true, []string{"PostgreSQL 11.", "PostgreSQL 16.", "pg16/pg11", "NOPM", "(n=3)"}},
		{"clients-sweep.yaml", false, []string{"read-write", "select-only", "tuned/default", " 64 "}},
		{"in-memory-vs-io.yaml", false, []string{"in-memory", "beyond-buffers", "pg16/pg15", "os-cache"}},
		{"graviton-sysbench-tpcc.yaml", false, []string{"in-memory", "io-bound", "report/default", "ignored errors/s"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			for _, s := range shorten {
				text = regexp.MustCompile(s.re).ReplaceAllString(text, s.with)
			}
			if !tc.repeat {
				text = regexp.MustCompile(`(?m)^  repeat: .*$`).ReplaceAllString(text, "  repeat: 1")
			}
			dir := t.TempDir()
			for _, d := range []string{filepath.Dir(dir), dir} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// The examples name ../prices/seed-reports.yaml.
			for _, d := range []string{"examples", "prices"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			prices, err := os.ReadFile(filepath.Join("..", "prices", "seed-reports.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			clitest.WriteFile(t, filepath.Join(dir, "prices", "seed-reports.yaml"), string(prices))
			file := filepath.Join(dir, "examples", tc.file)
			clitest.WriteFile(t, file, text)
			code, out, errOut := run(t, "study", "run", file, "--results", filepath.Join(dir, "r.db"),
				"--servers-dir", filepath.Join(dir, "servers"), "--progress", "0")
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if regexp.MustCompile(`\s-\s+\(n=0`).MatchString(out) {
				t.Errorf("a cell has no valid run:\n%s", out)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
