package cli_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// progressPhase is the phase at the end of a progress line.
var progressPhase = regexp.MustCompile(`^progress: .*\[(\w+)\]$`)

// phases are the phases of the progress lines in out, in order.
func phases(out string) []string {
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if m := progressPhase.FindStringSubmatch(line); m != nil {
			got = append(got, m[1])
		}
	}
	return got
}

// TestProgressPhases: each progress line names the phase of the seconds it covers,
// not the one that had begun by the time it was printed, and a line longer than
// the warm-up ends where the warm-up does.
func TestProgressPhases(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	for _, c := range []struct {
		warmup, duration, progress string
		want                       []string
	}{
		{"2s", "2s", "1s", []string{"warmup", "warmup", "measure", "measure"}},
		{"2", "3", "5", []string{"warmup", "measure"}},
	} {
		t.Run("warmup="+c.warmup+"/duration="+c.duration+"/progress="+c.progress, func(t *testing.T) {
			code, out, errOut := run(t, "run", "tpcb", "--script", "select-only", "--warmup", c.warmup, "--duration", c.duration,
				"--progress", c.progress, "--dsn", dsn, "--results", filepath.Join(t.TempDir(), "r.db"))
			if code != 0 {
				t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
			}
			if got := phases(out); !reflect.DeepEqual(got, c.want) {
				t.Errorf("progress phases %v, want %v:\n%s", got, c.want, out)
			}
		})
	}
}

// TestJSONWithProgress: with --json, stdout is one JSON object and nothing else;
// the progress lines go to stderr.
func TestJSONWithProgress(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	code, out, errOut := run(t, "run", "tpcb", "--script", "select-only", "--warmup", "1", "--duration", "2", "--progress", "1", "--json",
		"--dsn", dsn, "--results", filepath.Join(t.TempDir(), "r.db"))
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("stdout of run --json --progress is not one JSON object: %v\n%s", err, out)
	}
	if tps, _ := sum["tps"].(float64); tps <= 0 {
		t.Errorf("tps %v, want > 0", sum["tps"])
	}
	if n := len(phases(errOut)); n < 2 {
		t.Errorf("%d progress lines on stderr, want one a second:\n%s", n, errOut)
	}
}
