package cli_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// find-max on a server throttled to a known capacity: every transaction holds one
// advisory lock for 10 ms, so the server completes at most 100 a second whatever
// the clients. The search finds the highest rate within a loose objective within
// 10% of that capacity, and confirms it.
func TestFindMaxThrottled(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "throttle.sql")
	src := "BEGIN;\nSELECT pg_advisory_xact_lock(1);\nSELECT pg_sleep(0.01);\nEND;\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "find-max", "pgbench", "-f", script, "--clients", "8", "--slo", "p99<1s", "--errors", "<1%",
		"--warmup", "1s", "--duration", "4s", "--confirm", "1", "--resolution", "4%", "--json", "--dsn", dsn, "--results", filepath.Join(dir, "r.db"))
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var res struct {
		MaxRate   float64 `json:"max_rate"`
		Above     float64 `json:"lowest_rate_not_met"`
		Ceiling   float64 `json:"ceiling_tps"`
		Confirmed int     `json:"confirmed"`
		Sure      string  `json:"how_sure"`
		Runs      []struct {
			Rate float64 `json:"rate"`
			Met  bool    `json:"met"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("ceiling %.0f tps, max rate %.0f, above %.0f: %s; stderr:\n%s", res.Ceiling, res.MaxRate, res.Above, res.Sure, errOut)
	const capacity = 100.0
	if math.Abs(res.Ceiling-capacity) > 0.1*capacity {
		t.Errorf("closed-loop ceiling %.0f tps, want the throttle's %.0f within 10%%", res.Ceiling, capacity)
	}
	if math.Abs(res.MaxRate-capacity) > 0.1*capacity || res.Confirmed != 1 || res.Above <= res.MaxRate {
		t.Errorf("max rate %.0f (confirmed %d, not met at %.0f), want %.0f within 10%%", res.MaxRate, res.Confirmed, res.Above, capacity)
	}
	if len(res.Runs) < 4 || res.Runs[0].Rate != 0 || !strings.Contains(res.Sure, "between") {
		t.Errorf("runs %+v; %s", res.Runs, res.Sure)
	}
	// The text table names each run and what it found.
	code, out, errOut = run(t, "find-max", "pgbench", "-f", script, "--clients", "4", "--slo", "p99<1s", "--ceiling", "300",
		"--warmup", "0", "--duration", "2s", "--confirm", "0", "--resolution", "30%", "--dsn", dsn, "--results", filepath.Join(dir, "r.db"))
	if code != 0 || !strings.Contains(out, "max rate within the objective: ") || !strings.Contains(out, "not met: ") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestFindMaxBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--slo", "99<10ms"}, {"--slo", "p99<fast"}, {"--slo", "p101<1s"}, {"--slo", "p99<1s", "--errors", "0.1"},
		{"--slo", "p99<1s", "--rate", "100"}, {"--slo", "p99<1s", "--resolution", "120%"}, {"--slo", "p99<1s", "-t", "10"}, {},
	} {
		code, _, errOut := run(t, append([]string{"find-max", "tpcb", "--dsn", "host=/nonexistent"}, args...)...)
		if code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line", args, code, errOut)
		}
	}
}
