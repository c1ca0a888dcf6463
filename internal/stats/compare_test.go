package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		name       string
		a, b       []float64
		higher     bool
		noise      float64
		want       Outcome
		wantRatio  float64
		wantMore   int
		wantReason string // pinned when set
	}{
		{
			name: "throughput b wins", higher: true, noise: 0.05,
			a: []float64{100, 102, 98}, b: []float64{120, 118, 122},
			want: Faster, wantRatio: 1.2,
			wantReason: "every run of b beat every run of a and the medians differ by 20.0% (threshold 5%)",
		},
		{
			name: "throughput b loses", higher: true, noise: 0.05,
			a: []float64{120, 118, 122}, b: []float64{100, 102, 98},
			want: Slower, wantRatio: 100.0 / 120,
		},
		{
			name: "latency b wins", higher: false, noise: 0.05,
			a: []float64{10, 11, 12}, b: []float64{8, 8.5, 9},
			want: Faster, wantRatio: 8.5 / 11,
		},
		{
			name: "latency b loses", higher: false, noise: 0.05,
			a: []float64{8, 8.5, 9}, b: []float64{10, 11, 12},
			want: Slower, wantRatio: 11 / 8.5,
			wantReason: "every run of a beat every run of b and the medians differ by 29.4% (threshold 5%)",
		},
		{
			name: "overlap with big median difference", higher: true, noise: 0.05,
			a: []float64{90, 100, 160}, b: []float64{95, 130, 140},
			want: WithinNoise, wantRatio: 1.3, wantMore: 624,
		},
		{
			name: "ties count as overlap", higher: true, noise: 0.05,
			a: []float64{100, 110, 120}, b: []float64{120, 130, 140},
			want: WithinNoise, wantRatio: 130.0 / 110, wantMore: 2,
		},
		{
			name: "overlap with unequal run counts", higher: true, noise: 0.05,
			a: []float64{95, 100, 105, 98, 102}, b: []float64{102, 108, 112},
			want: WithinNoise, wantRatio: 1.08, wantMore: 4,
		},
		{
			name: "equal means but medians differ", higher: true, noise: 0.05,
			a: []float64{100, 100, 130}, b: []float64{110, 110, 110},
			want: WithinNoise, wantRatio: 1.1, wantMore: MaxMoreRuns,
		},
		{
			name: "no overlap but below threshold", higher: true, noise: 0.05,
			a: []float64{100, 101, 102}, b: []float64{103, 104, 105},
			want: WithinNoise, wantRatio: 104.0 / 101, wantMore: 0,
			wantReason: "every run of b beat every run of a but the medians differ by only 3.0% (threshold 5%)",
		},
		{
			name: "latency no overlap but below threshold", higher: false, noise: 0.05,
			a: []float64{10, 10.1, 10.2}, b: []float64{9.7, 9.8, 9.9},
			want: WithinNoise, wantRatio: 9.8 / 10.1, wantMore: 0,
		},
		{
			name: "overlap and below threshold", higher: true, noise: 0.05,
			a: []float64{100, 90, 110}, b: []float64{102, 88, 115},
			want: WithinNoise, wantRatio: 1.02, wantMore: 0,
		},
		{
			name: "single runs", higher: true, noise: 0.05,
			a: []float64{100}, b: []float64{200},
			want: Unknown, wantRatio: 2, wantMore: 1,
			wantReason: "a has 1 run and b has 1 run; a comparison needs at least 2 runs of each",
		},
		{
			name: "single run within noise", higher: true, noise: 0.05,
			a: []float64{100, 101, 99}, b: []float64{101},
			want: Unknown, wantRatio: 1.01, wantMore: 0,
		},
		{
			name: "single run with spread on the other side", higher: true, noise: 0.05,
			a: []float64{100, 110, 90}, b: []float64{130},
			want: Unknown, wantRatio: 1.3, wantMore: 2,
		},
		{
			name: "no baseline runs", higher: true, noise: 0.05,
			a: nil, b: []float64{1, 2},
			want: Unknown, wantRatio: math.NaN(), wantMore: 2,
		},
		{
			name: "zero baseline", higher: true, noise: 0.05,
			a: []float64{0, 0, 0}, b: []float64{5, 6, 7},
			want: Faster, wantRatio: math.NaN(),
		},
		{
			name: "zero baseline overlapping", higher: true, noise: 0.05,
			a: []float64{0, 0, 5}, b: []float64{0, 3, 4},
			want: WithinNoise, wantRatio: math.NaN(), wantMore: 222,
		},
		{
			name: "zero baseline and zero b", higher: true, noise: 0.05,
			a: []float64{0, 0}, b: []float64{0, 0},
			want: WithinNoise, wantRatio: math.NaN(), wantMore: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			origA, origB := slices.Clone(tt.a), slices.Clone(tt.b)
			got := Compare(tt.a, tt.b, tt.higher, tt.noise)
			if got.Outcome != tt.want {
				t.Errorf("Outcome = %q, want %q (reason %q)", got.Outcome, tt.want, got.Reason)
			}
			if !near(got.Ratio, tt.wantRatio) {
				t.Errorf("Ratio = %v, want %v", got.Ratio, tt.wantRatio)
			}
			if got.MoreRuns != tt.wantMore {
				t.Errorf("MoreRuns = %d, want %d", got.MoreRuns, tt.wantMore)
			}
			if tt.wantReason != "" && got.Reason != tt.wantReason {
				t.Errorf("Reason = %q, want %q", got.Reason, tt.wantReason)
			}
			if got.Reason == "" || strings.Contains(got.Reason, "NaN") || strings.Contains(got.Reason, "Inf") {
				t.Errorf("Reason = %q, want a readable sentence", got.Reason)
			}
			if !slices.Equal(tt.a, origA) || !slices.Equal(tt.b, origB) {
				t.Errorf("Compare modified its input: a %v b %v, were %v %v", tt.a, tt.b, origA, origB)
			}
		})
	}
}

// shift returns xs with d added to every value.
func shift(xs []float64, d float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x + d
	}
	return out
}

// TestMoreRunsGrowsWithSpread keeps the medians 10% apart and widens both targets'
// runs: the noisier the runs, the more of them it takes.
func TestMoreRunsGrowsWithSpread(t *testing.T) {
	for _, higher := range []bool{true, false} {
		t.Run(fmt.Sprintf("higherIsBetter=%t", higher), func(t *testing.T) {
			d := 10.0
			if !higher {
				d = -10
			}
			prev := 0
			for _, s := range []float64{6, 8, 10, 15, 20, 30} {
				a := []float64{100 - s, 100, 100 + s}
				v := Compare(a, shift(a, d), higher, 0.05)
				if v.Outcome != WithinNoise {
					t.Fatalf("spread=%v: Outcome = %q, want %q", s, v.Outcome, WithinNoise)
				}
				if v.MoreRuns <= prev {
					t.Errorf("spread=%v: MoreRuns = %d, want more than %d at the smaller spread", s, v.MoreRuns, prev)
				}
				prev = v.MoreRuns
			}
		})
	}
}

// TestMoreRunsShrinksAsDifferenceGrows keeps the spread and moves b away from a.
func TestMoreRunsShrinksAsDifferenceGrows(t *testing.T) {
	a := []float64{90, 100, 110}
	for _, higher := range []bool{true, false} {
		t.Run(fmt.Sprintf("higherIsBetter=%t", higher), func(t *testing.T) {
			prev := math.MaxInt
			for _, d := range []float64{6, 8, 10, 15, 20} {
				if !higher {
					d = -d
				}
				v := Compare(a, shift(a, d), higher, 0.05)
				if v.Outcome != WithinNoise {
					t.Fatalf("difference=%v: Outcome = %q, want %q", d, v.Outcome, WithinNoise)
				}
				if v.MoreRuns >= prev || v.MoreRuns < 1 {
					t.Errorf("difference=%v: MoreRuns = %d, want between 1 and %d", d, v.MoreRuns, prev-1)
				}
				prev = v.MoreRuns
			}
		})
	}
}

// TestNoiseThreshold checks that the threshold is strict and moves the verdict.
func TestNoiseThreshold(t *testing.T) {
	a := []float64{100, 100.5, 99.5}
	b := []float64{110, 110.5, 109.5} // 10% apart, no overlap
	tests := []struct {
		noise float64
		want  Outcome
	}{
		{noise: 0.05, want: Faster},
		{noise: 0.099, want: Faster},
		{noise: 0.1, want: WithinNoise},
		{noise: 0.2, want: WithinNoise},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("noise=%v", tt.noise), func(t *testing.T) {
			if got := Compare(a, b, true, tt.noise); got.Outcome != tt.want {
				t.Errorf("Outcome = %q, want %q (reason %q)", got.Outcome, tt.want, got.Reason)
			}
		})
	}
}
