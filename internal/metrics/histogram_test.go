package metrics

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
)

func TestNativeIndex(t *testing.T) {
	// Bucket i holds (2^((i-1)/8), 2^(i/8)].
	for _, c := range []struct {
		x    float64
		want int
	}{{1, 0}, {1.0001, 1}, {2, 8}, {0.5, -8}, {0.001, -79}, {1.0905, 1}, {1.0906, 2}} {
		if got := nativeIndex(c.x); got != c.want {
			t.Errorf("nativeIndex(%g) = %d, want %d", c.x, got, c.want)
		}
	}
}

// TestHistogramValue: an HDR histogram's values land in the classic bucket of
// the first bound not below them and in one native bucket each, both summing to
// the count, and the native spans decode back to the buckets.
func TestHistogramValue(t *testing.T) {
	h := histogram.New()
	values := map[time.Duration]int64{
		50 * time.Microsecond: 3, time.Millisecond: 5, 1200 * time.Microsecond: 7, 30 * time.Millisecond: 2, 3 * time.Second: 1,
	}
	var sum float64
	var n int64
	for d, c := range values {
		if err := h.RecordValues(int64(d/unit), c); err != nil {
			t.Fatal(err)
		}
		sum += d.Seconds() * float64(c)
		n += c
	}
	v := newHistogramValue(h)
	if v.count != uint64(n) || v.sum < sum*0.999 || v.sum > sum*1.001 {
		t.Errorf("count %d, sum %g; want %d, %g", v.count, v.sum, n, sum)
	}
	want := map[float64]uint64{.0001: 3, .0005: 3, .001: 8, .0025: 15, .025: 15, .05: 17, 2.5: 17, 5: 18, 60: 18}
	for i, b := range classicBounds {
		if w, ok := want[b]; ok && v.classic[i] != w {
			t.Errorf("le=%g: %d, want %d", b, v.classic[i], w)
		}
	}
	// The spans decoded: each delta adds to the count of the bucket before.
	got := map[int]int64{}
	idx, count, k := 0, int64(0), 0
	for si, s := range v.spans {
		if si == 0 {
			idx = int(s.GetOffset())
		} else {
			idx += int(s.GetOffset())
		}
		for range s.GetLength() {
			count += v.deltas[k]
			got[idx] = count
			idx++
			k++
		}
	}
	wantNative := map[int]int64{}
	for d, c := range values {
		wantNative[nativeIndex(d.Seconds())] += c
	}
	if len(got) != len(wantNative) || k != len(v.deltas) {
		t.Fatalf("native buckets %v, want %v", got, wantNative)
	}
	for i, c := range wantNative {
		if got[i] != c {
			t.Errorf("native bucket %d: %d, want %d (all: %v)", i, got[i], c, got)
		}
	}
}

// TestBars: the buckets read from a histogram's counts are Distribution's that
// hold values, from a microsecond to the hour histogram.New reaches.
func TestBars(t *testing.T) {
	h := histogram.New()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		if err := h.RecordValue(int64(1 + rng.ExpFloat64()*float64(rng.IntN(5000)+1)*float64(rng.IntN(1000)+1))); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []int64{1, 2047, 2048, 2049, 4095, 4096, int64(time.Hour / unit)} {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.DeleteFunc(h.Distribution(), func(b hdrhistogram.Bar) bool { return b.Count == 0 })
	got := bars(h)
	if !slices.Equal(got, want) {
		t.Fatalf("%d bars, want %d; first difference %v", len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []hdrhistogram.Bar) [2]hdrhistogram.Bar {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return [2]hdrhistogram.Bar{a[i], b[i]}
		}
	}
	return [2]hdrhistogram.Bar{}
}
