package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// lineKey is what a script reading pgbench's output keys a line by: its words,
// with every number (NaN included) and every run of blanks made one.
var numberRE = regexp.MustCompile(`-?(\d+(\.\d+)?|NaN)`)

func lineKey(line string) string {
	return strings.Join(strings.Fields(numberRE.ReplaceAllString(line, "#")), " ")
}

// versionKey is the first line's key: "pgbench (" and the versions, which differ.
func versionKey(line string) string {
	if strings.HasPrefix(line, "pgbench (") {
		return "pgbench (...)"
	}
	return lineKey(line)
}

// reportKeys are the keys of a report's lines on stdout, in order.
func reportKeys(stdout string) []string {
	var keys []string
	for _, l := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		keys = append(keys, versionKey(l))
	}
	return keys
}

// progressKeys are the distinct keys of the progress lines on stderr.
func progressKeys(stderr string) []string {
	var keys []string
	for _, l := range strings.Split(stderr, "\n") {
		if k := lineKey(l); strings.HasPrefix(l, "progress: ") && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// runPgbench runs the installed pgbench and returns its exit code and output.
func runPgbench(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir() // its transaction logs, if any
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	case err != nil:
		t.Fatalf("pgbench: %v", err)
	}
	return 0, out.String(), errOut.String()
}

// TestPgbenchReportLines runs pgbench and `pgbakeoff pgbench` with the same options
// on the same data and compares what a script written around pgbench reads: the
// exit code, the report's lines on stdout (the same keys in the same order; the
// numbers may differ) and the progress lines on stderr.
func TestPgbenchReportLines(t *testing.T) {
	pgtest.Long(t)
	bin := pgtest.Pgbench(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	results := filepath.Join(t.TempDir(), "r.db")
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := write("one.sql", "\\set n random(1, 10)\nSELECT :n;\n")
	abort := write("abort.sql", "\\set x 1 / 0\n")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"select-only", []string{"-S", "-t", "20"}},
		{"simple-update", []string{"-N", "-T", "1", "-c", "2"}},
		{"file", []string{"-f", one, "-t", "10"}},
		{"progress", []string{"-S", "-T", "2", "-P", "1"}},
		{"rate-limit", []string{"-S", "-R", "300", "-L", "5", "-T", "2", "-P", "1"}},
		{"per-command", []string{"-r", "-t", "10"}},
		{"max-tries", []string{"-S", "--max-tries", "3", "-T", "2", "-P", "1", "-r", "--failures-detailed"}},
		{"multiple", []string{"-b", "select-only@1", "-f", one + "@2", "-r", "-t", "30"}},
		{"connect", []string{"-S", "-C", "-t", "5"}},
		{"aborted", []string{"-f", abort, "-t", "3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-n"}, c.args...)
			// Side by side, for the test's time.
			var tcode int
			var tout, terr string
			done := make(chan struct{})
			go func() {
				defer close(done)
				tcode, tout, terr = runPgbench(t, bin, append(args, dsn)...)
			}()
			ocode, oout, oerr := run(t, append(append([]string{"pgbench"}, args...), dsn, "--results", results)...)
			<-done
			if tcode != ocode {
				t.Errorf("exit %d, pgbench's %d\n%s%s", ocode, tcode, oout, oerr)
			}
			if theirs, ours := reportKeys(tout), reportKeys(oout); !slices.Equal(theirs, ours) {
				t.Errorf("report lines differ:\npgbench:\n%s\npgbakeoff pgbench:\n%s", tout, oout)
			}
			if theirs, ours := progressKeys(terr), progressKeys(oerr); !slices.Equal(theirs, ours) {
				t.Errorf("progress lines differ: %q, pgbench's %q\n%s", ours, theirs, oerr)
			}
			// -r times the builtin scripts' statements, as it times files'.
			for _, l := range strings.Split(oout, "\n") {
				if f := strings.Fields(l); strings.Contains(l, " pgbench_") && len(f) > 2 && (f[0] == "0.000" || f[1] != "0") {
					t.Errorf("statement %q: %s ms, %s failures", strings.Join(f[2:], " "), f[0], f[1])
				}
			}
			const aborted = "Run was aborted; the above results are incomplete."
			if strings.Contains(terr, aborted) != strings.Contains(oerr, aborted) {
				t.Errorf("pgbench's stderr:\n%s\npgbakeoff pgbench's:\n%s", terr, oerr)
			}
		})
	}
}
