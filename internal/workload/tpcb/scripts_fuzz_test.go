package tpcb_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
)

// FuzzParseScripts checks that ParseScripts never panics, and that what it
// accepts is a set of distinct builtin scripts with positive weights that the
// driver takes; then that SetDist accepts every distribution keydist parses and
// keeps the accounts drawn within the table. specs holds the --script values
// separated by commas. The saved corpus is in testdata/fuzz/FuzzParseScripts.
func FuzzParseScripts(f *testing.F) {
	for _, seed := range []struct {
		specs string
		scale int
		dist  string
	}{
		{"", 1, "uniform"},
		{"tpcb-like", 10, "zipfian:1.1"},
		{"select-only@1,tpcb-like@9", 1, "exponential:5"},
		{"select@3,simple", 100, "gaussian"},
		{"s", 1, "pareto"},
		{"tpcb-like@0,select-only@0", 1, "uniform"},
		{"tpcb-like@0,select-only", 1, "special:12:1:75"},
		{"tpcb-like,tpcb", 1, "uniform"},
		{"tpcb-like@-1", 1, "uniform"},
		{"tpcb-like@", 1, "uniform"},
		{"tpcb-like@+2", 1, "uniform"},
		{"tpcb-like@1@2", 1, "uniform"},
		{"@1", 1, "uniform"},
		{",", 1, "uniform"},
		{"select-only@99999999999999999999", 1, "uniform"},
		{"TPCB-LIKE", 1, "uniform"},
		{"tpcb-like", 100_000_000_000, "pgbench-gaussian:2.5"},
		{"tpcb-like", 0, "uniform"},
		{"tpcb-like", -3, "uniform"},
	} {
		f.Add(seed.specs, seed.scale, seed.dist)
	}
	f.Fuzz(func(t *testing.T, list string, scale int, dist string) {
		var specs []string
		if list != "" {
			specs = strings.Split(list, ",")
		}
		scripts, err := tpcb.ParseScripts(specs, scale)
		if err != nil {
			if scripts != nil {
				t.Fatalf("ParseScripts(%q) returned scripts and %v", specs, err)
			}
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("ParseScripts(%q): error %q is empty or spans lines", specs, msg)
			}
			return
		}
		if len(scripts) == 0 {
			t.Fatalf("ParseScripts(%q) returned no script and no error", specs)
		}
		seen := map[string]bool{}
		for _, s := range scripts {
			if s.Weight <= 0 {
				t.Errorf("ParseScripts(%q): script %s has weight %d", specs, s.Name, s.Weight)
			}
			if !slices.Contains(tpcb.ScriptNames(), s.Name) || seen[s.Name] {
				t.Errorf("ParseScripts(%q): script %q is not a builtin, or twice", specs, s.Name)
			}
			seen[s.Name] = true
			if scale >= 1 {
				if err := s.Validate(); err != nil {
					t.Errorf("ParseScripts(%q, %d): %v", specs, scale, err)
				}
			}
		}
		if len(specs) == 0 && (len(scripts) != 1 || scripts[0].Name != "tpcb-like") {
			t.Errorf("no --script gave %d scripts, not tpcb-like", len(scripts))
		}

		spec, err := keydist.Parse(dist)
		if err != nil || scale < 1 || scale > 1_000_000 {
			return // larger scales have more accounts than keydist takes
		}
		if err := tpcb.SetDist(scripts, spec); err != nil {
			t.Fatalf("SetDist(%s) at scale %d: %v", spec, scale, err)
		}
		r := rand.NewPCG(1, 2)
		for _, s := range scripts {
			for _, v := range s.Vars {
				if v.Dist == nil {
					continue
				}
				if v.Name != "aid" {
					t.Fatalf("SetDist set the distribution of %s", v.Name)
				}
				for range 8 {
					if k := v.Dist.Draw(r); k < v.Min || k > v.Max {
						t.Fatalf("%s drew account %d outside [%d, %d]", spec, k, v.Min, v.Max)
					}
				}
			}
		}
	})
}
