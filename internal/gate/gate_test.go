package gate

import (
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
)

// TestParse: gates read as written, in the units they name; others are refused
// naming the gate and what to write.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		text, figure, op string
		bound            float64
	}{
		{"p99<20ms", "p99", "<", 20},
		{" p99.9 <= 0.5s ", "p99.9", "<=", 500},
		{"avg<250us", "avg", "<", 0.25},
		{"tps>1000", "tps", ">", 1000},
		{"errors<0.1%", "errors", "<", 0.001},
		{"NOPM>=50000", "nopm", ">=", 50000},
	} {
		g, err := Parse(tc.text)
		if err != nil || g.Figure != tc.figure || g.Op != tc.op || g.Bound != tc.bound {
			t.Errorf("%q: %+v, %v", tc.text, g, err)
		}
	}
	for _, bad := range []string{"p99", "<20ms", "p99<20", "p101<1ms", "errors<0.1", "tps>many", "errors<120%"} {
		if _, err := Parse(bad); err == nil || !strings.HasPrefix(err.Error(), "--fail-if ") {
			t.Errorf("%q: %v, want an error naming the gate", bad, err)
		}
	}
}

// TestJudge: each gate against the run's figures; a figure the run lacks fails.
func TestJudge(t *testing.T) {
	sum := &engine.Summary{RunID: 7, TPS: 1200, Transactions: 999, Failed: 1,
		LatencyMs: histogram.Summary{Avg: 4, P50: 3, P99: 18.5, P999: 40}}
	var gates []Gate
	for _, s := range []string{"p99<20ms", "p99.9<30ms", "tps>1000", "errors<0.1%", "errors<=0.1%", "nopm>1"} {
		g, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, g)
	}
	results, passed := Judge(gates, sum)
	if len(results) != len(gates) {
		t.Fatalf("%d results for %d gates", len(results), len(gates))
	}
	want := []string{
		"gate p99<20ms: passed, p99 was 18.500 ms",
		"gate p99.9<30ms: FAILED, p99.9 was 40.000 ms",
		"gate tps>1000: passed, tps was 1200",
		"gate errors<0.1%: FAILED, errors was 0.1%",
		"gate errors<=0.1%: passed, errors was 0.1%",
		"gate nopm>1: FAILED, the run has no nopm",
	}
	for i, r := range results {
		if r.String() != want[i] {
			t.Errorf("%q, want %q", r, want[i])
		}
	}
	if passed {
		t.Error("the gates passed")
	}
	// A run flagged invalid passes no gate.
	sum.Flags = []engine.Flag{{Name: "contaminated", Invalid: true}}
	results, passed = Judge(gates[2:3], sum)
	if passed || results[0].String() != "gate tps>1000: FAILED, tps was 1200 but the run is invalid (contaminated)" {
		t.Errorf("an invalid run: %q, passed %v", results[0], passed)
	}
}
