package report

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// openFixtureStore opens the results store the engine keeps as its fixture (a
// TPC-B, a TPC-C and a sysbench run, all labelled target=a), read-only as
// reports do, which leaves the file as it is.
func openFixtureStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.OpenReadOnly(t.Context(), filepath.Join("..", "engine", "testdata", "results-schema4.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestAssemble(t *testing.T) {
	st := openFixtureStore(t)
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	r, err := Assemble(t.Context(), st, Selection{Runs: []int64{1, 2, 3}, Noise: 0.05}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Targets) != 1 || r.Targets[0].Name != "a" || r.Baseline != "a" || !r.Generated.Equal(now) {
		t.Errorf("targets %+v, baseline %q, generated %v; want target a from its label", r.Targets, r.Baseline, r.Generated)
	}
	metrics := map[string]string{}
	for _, w := range r.Workloads {
		metrics[w.Kind] = w.Metric
		if len(w.Runs) != 1 || w.Runs[0].Metric <= 0 || w.Runs[0].Machine == "" || w.Runs[0].Invalid {
			t.Errorf("workload %s: runs %+v", w.Name, w.Runs)
		}
	}
	if metrics["tpcc"] != "NOPM" || metrics["tpcb"] != "tps" || metrics["sysbench"] != "tps" {
		t.Errorf("metrics by kind %v", metrics)
	}
	// compare's first lines name the runs once, not as "Runs 1, 2, 3" and "runs 1, 2, 3".
	if r.Title != "Runs 1, 2, 3" || r.Source != "" {
		t.Errorf("title %q, source %q; want the runs named once", r.Title, r.Source)
	}
	byLabel, err := Assemble(t.Context(), st, Selection{Labels: []string{"target=a"}, Noise: 0.05}, now)
	if err != nil || byLabel.Title != "Runs 1, 2, 3" || byLabel.Source != "chosen by --label target=a" {
		t.Errorf("by label: title %q, source %q (%v); want how they were chosen", byLabel.Title, byLabel.Source, err)
	}
	if r.Env.Client == "" || r.Env.Client == "not recorded" {
		t.Errorf("client machine %q, want the machine the runs recorded", r.Env.Client)
	}

	for name, sel := range map[string]Selection{
		"nothing":       {Noise: 0.05},
		"unknown run":   {Runs: []int64{99}, Noise: 0.05},
		"unknown study": {Study: "nope", Noise: 0.05},
		"bad label":     {Labels: []string{"target"}, Noise: 0.05},
		"bad baseline":  {Runs: []int64{1}, Baseline: "b", Noise: 0.05},
	} {
		if _, err := Assemble(t.Context(), st, sel, now); !errors.As(err, new(SelectionError)) {
			t.Errorf("%s: error %v, want a SelectionError", name, err)
		}
	}
}
