package keydist_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
)

// FuzzParse checks that Parse never panics, that every spec it accepts is written
// back by String as a text Parse reads to the same spec, and that the spec draws
// keys only inside the range it is built for. The saved corpus is in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct {
		spec   string
		lo, hi int64
	}{
		{"uniform", 1, 10},
		{" gaussian ", 1, 1000},
		{"gaussian:1000", -5, 5},
		{"special", 1, 100000},
		{"special:12:1:75", 0, 0},
		{"special:1:100:0", 1, 2},
		{"pareto:0.2", 1, 1 << 53},
		{"zipfian", 1, 1_000_000},
		{"zipfian:0", 7, 7},
		{"zipfian:1000", 1, 50},
		{"exponential:5", 1, 1000},
		{"exponential:1e-300", 1, 1000},
		{"pgbench-gaussian:2.5", -1000, 1000},
		{"uniform", -1 << 63, 1<<63 - 1},
		{"pareto:1.5", 1, 10},
		{"zipfian:NaN", 1, 10},
		{"special:1:2:3:4", 1, 10},
		{"exponential", 1, 10},
		{"zipfian:0x1p-2", 1, 10},
		{"gaussian:+12", 1, 10},
		{"", 1, 10},
		{":", 1, 10},
	} {
		f.Add(seed.spec, seed.lo, seed.hi, uint64(1))
	}
	f.Fuzz(func(t *testing.T, text string, lo, hi int64, seed uint64) {
		spec, err := keydist.Parse(text)
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Parse(%q): error %q is empty or spans lines", text, err)
			}
			return
		}
		written := spec.String()
		again, err := keydist.Parse(written)
		if err != nil {
			t.Fatalf("Parse(%q) = %#v, whose String %q does not parse: %v", text, spec, written, err)
		}
		if again != spec {
			t.Fatalf("Parse(%q) = %#v, but Parse of its String %q = %#v", text, spec, written, again)
		}
		if again.String() != written {
			t.Fatalf("String of %q is %q, then %q", text, written, again.String())
		}

		d, err := keydist.New(spec, lo, hi)
		if err != nil {
			if lo <= hi && (spec.Kind == keydist.Uniform || uint64(hi)-uint64(lo) < 1<<53) {
				t.Fatalf("New(%s, %d, %d): %v", spec, lo, hi, err)
			}
			return
		}
		if d.Spec() != spec {
			t.Fatalf("New(%s).Spec() = %s", spec, d.Spec())
		}
		r := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
		for range 16 {
			if k := d.Draw(r); k < lo || k > hi {
				t.Fatalf("%s over [%d, %d] drew %d", spec, lo, hi, k)
			}
		}
	})
}
