package tpcc_test

import (
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// FuzzScripts checks that Scripts never panics on the --mode, --mix,
// --isolation and --dist a user gives, that it takes only their documented
// values, and that it builds the five transactions with the weights of the
// mix, each a script the driver takes. The saved corpus is in
// testdata/fuzz/FuzzScripts.
func FuzzScripts(f *testing.F) {
	for _, seed := range []struct {
		warehouses            int
		mode, mix, iso, dist  string
		allWarehouses, keying bool
	}{
		{1, "", "", "", "", false, false},
		{10, "server", "spec", "", "", true, true},
		{4, "client-sql", "hammerdb", "serializable", "zipfian:0.8", false, false},
		{4, "client-sql", "", "read-committed", "uniform", false, true},
		{4, "client-sql", "spec", "repeatable-read", "special", true, false},
		{4, "server", "spec", "serializable", "", false, false},
		{0, "", "", "", "", false, false},
		{1, "Server", "", "", "", false, false},
		{1, "", "tpcc", "", "", false, false},
		{1, "client-sql", "", "READ COMMITTED", "", false, false},
		{1, "", "", "", "pareto:0.1", false, false},
	} {
		f.Add(seed.warehouses, seed.mode, seed.mix, seed.iso, seed.dist, seed.allWarehouses, seed.keying)
	}
	f.Fuzz(func(t *testing.T, warehouses int, mode, mix, iso, dist string, allWarehouses, keying bool) {
		opt := tpcc.RunOptions{Warehouses: warehouses, Mode: mode, Mix: mix, Isolation: iso,
			AllWarehouses: allWarehouses, KeyingThinking: keying}
		if dist != "" {
			spec, err := keydist.Parse(dist)
			if err != nil {
				return
			}
			opt.Dist = &spec
		}
		scripts, err := tpcc.Scripts(opt)
		if err != nil {
			if scripts != nil {
				t.Fatalf("Scripts(%+v) returned scripts and %v", opt, err)
			}
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("Scripts(%+v): error %q is empty or spans lines", opt, msg)
			}
			return
		}
		modeOK := mode == "" || mode == tpcc.ModeServer || mode == tpcc.ModeClientSQL
		isoOK := iso == "" || mode == tpcc.ModeClientSQL && (iso == "read-committed" || iso == "repeatable-read" || iso == "serializable")
		weights := map[string]int{"": 100, "spec": 100, "hammerdb": 23}
		deck, mixOK := weights[mix]
		if warehouses < 1 || !modeOK || !isoOK || !mixOK {
			t.Fatalf("Scripts accepted %+v", opt)
		}
		names := []string{tpcc.NewOrder, tpcc.Payment, tpcc.OrderStatus, tpcc.Delivery, tpcc.StockLevel}
		if len(scripts) != len(names) {
			t.Fatalf("Scripts(%+v) built %d scripts", opt, len(scripts))
		}
		total := 0
		for i, s := range scripts {
			if s.Name != names[i] || s.Weight <= 0 || s.Program == nil {
				t.Fatalf("Scripts(%+v): script %d is %+v", opt, i, s)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("Scripts(%+v): %v", opt, err)
			}
			if keying != (s.Keying > 0 && s.ThinkMean > 0) {
				t.Fatalf("Scripts(%+v): %s has keying %v and thinking %v", opt, s.Name, s.Keying, s.ThinkMean)
			}
			total += s.Weight
		}
		if total != deck {
			t.Fatalf("Scripts(%+v): weights add up to %d, want %d", opt, total, deck)
		}
	})
}
