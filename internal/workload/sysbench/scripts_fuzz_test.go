package sysbench_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sysbench"
)

// FuzzScript checks that Script never panics on a script name, a --rand-type
// distribution and the options a user gives, that it takes exactly the names
// in Names, and that what it builds is a script the driver takes, with one
// statement per kind and table. The saved corpus is in
// testdata/fuzz/FuzzScript.
func FuzzScript(f *testing.F) {
	for _, seed := range []struct {
		name, dist           string
		tables               int
		size, rangeSize      int64
		clients, points, rng int
	}{
		{"oltp_read_write", "special", 1, 10000, 100, 1, 10, 10},
		{"oltp_read_only", "uniform", 4, 1000, 10, 8, 10, 10},
		{"oltp_point_select", "zipfian:0.9", 2, 1, 1, 1, 10, 10},
		{"oltp_insert", "pareto", 1, 100, 1, 1, 10, 10},
		{"select_random_points", "uniform", 1, 1000, 100, 64, 1000, 10},
		{"select_random_ranges", "gaussian:3", 1, 5, 1, 16, 10, 1000},
		{"select_random_points", "uniform", 2, 1000, 100, 1, 10, 10},
		{"select_random_ranges", "uniform", 1, 1000, 100, 1, 10, 0},
		{"oltp_delete", "exponential:5", 0, 1000, 100, 1, 10, 10},
		{"oltp_write_only", "uniform", 1, 10, 11, 1, 10, 10},
		{"oltp_update_index", "pareto:0.2", 1, 1 << 53, 100, 1, 10, 10},
		{"oltp", "uniform", 1, 10, 1, 1, 10, 10},
		{"OLTP_READ_WRITE", "uniform", 1, 10, 1, 1, 10, 10},
		{"", "uniform", 1, 10, 1, 1, 10, 10},
	} {
		f.Add(seed.name, seed.dist, seed.tables, seed.size, seed.rangeSize, seed.clients, seed.points, seed.rng)
	}
	f.Fuzz(func(t *testing.T, name, dist string, tables int, size, rangeSize int64, clients, points, ranges int) {
		spec, err := keydist.Parse(dist)
		if err != nil {
			return
		}
		if tables > 64 || clients > 1024 {
			return // valid, but slow to build on every input
		}
		o := sysbench.DefaultOptions(tables, size)
		o.Dist, o.RangeSize, o.Clients, o.RandomPoints, o.NumberOfRanges = spec, rangeSize, clients, points, ranges
		s, err := sysbench.Script(name, o)
		known := slices.Contains(sysbench.Names, name)
		if err != nil {
			if s != nil {
				t.Fatalf("Script(%q) returned a script and %v", name, err)
			}
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("Script(%q): error %q is empty or spans lines", name, msg)
			}
			if !known && !strings.Contains(err.Error(), "unknown sysbench script") {
				t.Fatalf("Script(%q): %v", name, err)
			}
			return
		}
		if !known {
			t.Fatalf("Script(%q) accepted a name not in Names", name)
		}
		if s.Name != name || s.Weight != 1 || s.Program == nil {
			t.Fatalf("Script(%q) = %+v", name, s)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Script(%q): %v", name, err)
		}
		want := 10 * tables // one statement per kind and table
		if strings.HasPrefix(name, "select_random_") {
			want = 1
		}
		if len(s.Statements) != want {
			t.Fatalf("Script(%q) with %d tables has %d statements, want %d", name, tables, len(s.Statements), want)
		}
	})
}
