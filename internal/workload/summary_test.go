package workload

import (
	"encoding/json"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// TestReadSummary: a summary's figures are written at its top level and read
// back with it; one stored without figures (a run interrupted in its warm-up)
// is read without them, and has no headline of its own.
func TestReadSummary(t *testing.T) {
	for _, tc := range []struct {
		name    string
		machine *machine.Machine
		figures engine.Figures
	}{
		{"figures, machine", &machine.Machine{CPU: "x", LogicalCPUs: 2}, &tpcc.Figures{Mode: "server", Warehouses: 2, NOPM: 120}},
		// Without a machine (summaries written before it was recorded) the figures
		// go before the closing brace, not into a label of the same name.
		{"figures, no machine", nil, &tpcc.Figures{Mode: "server", Warehouses: 2, NOPM: 120}},
		{"no figures", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum := &engine.Summary{RunID: 3, Workload: "tpcc", TPS: 9.5, ClientMachine: tc.machine, Figures: tc.figures,
				Labels: map[string]string{"a": "1", "client_machine": "b"}}
			b, err := json.Marshal(sum)
			if err != nil {
				t.Fatal(err)
			}
			var top map[string]any
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			labels := top["labels"].(map[string]any)
			if _, in := labels["nopm"]; in || len(labels) != 2 {
				t.Errorf("labels %v", labels)
			}
			got, err := ReadSummary(b)
			if err != nil {
				t.Fatal(err)
			}
			headline, has := got.Measure(MeasuresOf("tpcc").Headline)
			if tc.figures == nil {
				if got.Figures != nil || has {
					t.Errorf("figures %+v, headline %v, want none", got.Figures, headline)
				}
				if _, in := top["nopm"]; in {
					t.Errorf("a summary without figures wrote them: %s", b)
				}
				return
			}
			if top["nopm"] != 120.0 || headline != 120 {
				t.Errorf("nopm %v, headline %v: %s", top["nopm"], headline, b)
			}
			again, err := json.Marshal(got)
			if err != nil || string(again) != string(b) {
				t.Errorf("read and written back:\n%s\n%s (%v)", b, again, err)
			}
		})
	}
}
