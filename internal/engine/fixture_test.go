package engine

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/store"
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
// as a writer would (migrating it first), and decodes each run's summary
// strictly: a field of the stored summaries that Summary lost would fail.
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
				dec := json.NewDecoder(bytes.NewReader(d.Summary))
				dec.DisallowUnknownFields()
				var sum Summary
				if err := dec.Decode(&sum); err != nil {
					t.Fatalf("run %d: %v", r.ID, err)
				}
				seen[sum.Workload] = true
				if sum.RunID != r.ID || sum.Status != store.StatusCompleted || sum.TPS <= 0 || sum.Transactions <= 0 ||
					sum.Server.Commits != sum.CommitsTotal || sum.ClientMachine == nil || sum.ClientMachine.Hostname != "" {
					t.Errorf("run %d: %+v", r.ID, sum)
				}
				switch sum.Workload {
				case "tpcc":
					if sum.TPCCFigures == nil || sum.TPCCFigures.NOPM <= 0 {
						t.Errorf("run %d: TPC-C figures %+v", r.ID, sum.TPCCFigures)
					}
				case "sysbench":
					if sum.SysbenchFigures == nil || sum.SysbenchFigures.Queries <= 0 {
						t.Errorf("run %d: sysbench figures %+v", r.ID, sum.SysbenchFigures)
					}
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
