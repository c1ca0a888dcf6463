package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/schema"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
)

// storeFixture is a results store written by pgbakeoff at store schema 4, with a
// TPC-B, a TPC-C and a sysbench run: later versions must still read it, and
// decode every field its summaries hold.
const storeFixture = "testdata/results-schema4.db"

func copyFixture(t *testing.T) string {
	t.Helper()
	in, err := os.Open(storeFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), "results.db")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStoreWrittenBefore reads the fixture store as the reading commands do and
// as a writer would (migrating it first), and reads each run's summary as the
// commands do: written back, it must be the stored JSON, byte for byte, but for
// the schema_version every summary now begins with, so a field the result model
// lost or renamed fails; and it must fit `pgbakeoff schema run`.
func TestStoreWrittenBefore(t *testing.T) {
	for _, mode := range []string{"read-only", "writer"} {
		t.Run(mode, func(t *testing.T) {
			path := copyFixture(t)
			open := store.OpenReadOnly
			if mode == "writer" {
				open = store.Open
			}
			st, err := open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			runs, err := st.Runs(t.Context(), store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, r := range runs {
				d, err := st.Run(t.Context(), r.ID)
				if err != nil {
					t.Fatal(err)
				}
				sum, err := workload.ReadSummary(d.Summary)
				if err != nil {
					t.Fatalf("run %d: %v", r.ID, err)
				}
				again, err := json.Marshal(sum)
				if err != nil {
					t.Fatal(err)
				}
				want := append(fmt.Appendf(nil, `{"schema_version":%d,`, engine.SchemaVersion), d.Summary[1:]...)
				if !bytes.Equal(again, want) {
					t.Errorf("run %d: the summary read and written back differs from the stored one:\n%s\n%s", r.ID, d.Summary, again)
				}
				if err := schema.Validate("run", again); err != nil {
					t.Errorf("run %d: the summary does not fit `pgbakeoff schema run`: %v", r.ID, err)
				}
				seen[sum.Workload] = true
				if sum.RunID != r.ID || sum.Status != store.StatusCompleted || sum.TPS <= 0 || sum.Transactions <= 0 ||
					sum.Server.Commits != sum.CommitsTotal || sum.ClientMachine == nil || sum.ClientMachine.Hostname != "" {
					t.Errorf("run %d: %+v", r.ID, sum)
				}
				// Every workload's headline measure is there.
				if v, ok := sum.Measure(workload.MeasuresOf(sum.Workload).Headline); !ok || v <= 0 {
					t.Errorf("run %d: %s headline %v, %v", r.ID, sum.Workload, v, ok)
				}
				var text bytes.Buffer
				sum.WriteText(&text)
				if !bytes.Contains(text.Bytes(), []byte("tps: ")) {
					t.Errorf("run %d: summary text %q", r.ID, text.String())
				}
			}
			if len(seen) != 3 {
				t.Errorf("workloads %v, want tpcb, tpcc and sysbench", seen)
			}
		})
	}
}
