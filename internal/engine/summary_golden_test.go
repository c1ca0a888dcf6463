package engine_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/schema"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sysbench"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenSummaries are engine.GoldenSummaries with each workload's figures.
func goldenSummaries(t *testing.T) map[string]*engine.Summary {
	sums := engine.GoldenSummaries(t)
	sums["tpcc"].Figures = &tpcc.Figures{Mode: "server", Mix: "spec", Warehouses: 10, NOPM: 2699, TPM: 6020, TPMCluster: 6110,
		ClientNewOrdersPerMin: 2700, NOPMDiffPct: -0.04, ResponseTimes: []tpcc.ResponseTime{{Transaction: "new_order", P90Ms: 36.2, LimitMs: 5000, Passed: true}}}
	sums["sysbench"].Figures = &sysbench.Figures{Tables: 4, TableSize: 1000000, Dist: "special", ReadQueries: 42000, WriteQueries: 12000, OtherQueries: 6000, Queries: 60000, QPS: 1000, IgnoredErrors: 3}
	return sums
}

// TestSummaryGolden pins the run summary's text and JSON. Run with -update to
// rewrite the files after a change meant to change them, and read the diff.
func TestSummaryGolden(t *testing.T) {
	for name, sum := range goldenSummaries(t) {
		t.Run(name, func(t *testing.T) {
			var text bytes.Buffer
			sum.WriteText(&text)
			js, err := json.MarshalIndent(sum, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate("run", js); err != nil {
				t.Errorf("the summary does not fit `pgbakeoff schema run`: %v", err)
			}
			for file, got := range map[string][]byte{"summary-" + name + ".txt": text.Bytes(), "summary-" + name + ".json": append(js, '\n')} {
				path := filepath.Join("testdata", file)
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the golden file (run with -update and read the diff):\n%s", file, got)
				}
			}
		})
	}
}
