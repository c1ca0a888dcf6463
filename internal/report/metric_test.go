package report

import (
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// TestMetric: a run is compared by its workload's headline, and by tps when it
// has none of its own or ended before its window gave one.
func TestMetric(t *testing.T) {
	for _, tc := range []struct {
		name string
		sum  engine.Summary
		want float64
	}{
		{"tpcb", engine.Summary{Workload: "tpcb", TPS: 7}, 7},
		{"tpcc", engine.Summary{Workload: "tpcc", TPS: 7, Figures: &tpcc.Figures{NOPM: 420}}, 420},
		{"tpcc without figures", engine.Summary{Workload: "tpcc", TPS: 7}, 7},
	} {
		if got := Metric(&tc.sum); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if MetricName("tpcc") != "NOPM" || MetricName("sysbench") != "tps" {
		t.Errorf("metric names %q, %q", MetricName("tpcc"), MetricName("sysbench"))
	}
}
