package sysbench

import (
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
)

// TestGroups checks c and pad's shape, groups of groupLen digits joined by '-',
// appended after what the buffer holds, and that every digit turns up in every
// place of a group about as often as the others.
func TestGroups(t *testing.T) {
	shape := regexp.MustCompile(`^x([0-9]{11}-){9}[0-9]{11}$`)
	r := rand.NewPCG(1, 2)
	var counts [groupLen][10]int
	const draws = 20000
	for range draws {
		c := appendGroups([]byte("x"), r, cGroups)
		if !shape.Match(c) {
			t.Fatalf("c = %q", c)
		}
		for i := range groupLen {
			counts[i][c[1+i]-'0']++
		}
	}
	for i, place := range counts {
		for d, n := range place {
			if n < draws/10*9/10 || n > draws/10*11/10 {
				t.Errorf("digit %d in place %d of a group %d times in %d groups, want about %d", d, i, n, draws, draws/10)
			}
		}
	}
}

// BenchmarkRows generates sysbench rows as the loader's COPY streams do: the
// client's CPU per row, which the server's cores share on one machine.
func BenchmarkRows(b *testing.B) {
	spec, err := keydist.Parse("special")
	if err != nil {
		b.Fatal(err)
	}
	keys, err := keydist.New(spec, 1, 1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	src := rowSource(0, 1, 1_000_000, keys)
	var buf []byte
	for b.Loop() {
		buf = src.Append(buf[:0], 0, batchRows)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batchRows), "ns/row")
}
