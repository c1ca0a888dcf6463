package stats

import (
	"math"
	"slices"
	"testing"
)

// near reports whether got is within 1e-9 of want; two NaNs are near.
func near(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-9
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want Summary
	}{
		{name: "empty", xs: nil, want: Summary{}},
		{name: "single", xs: []float64{7}, want: Summary{N: 1, Median: 7, Mean: 7, Min: 7, Max: 7}},
		{
			name: "odd",
			xs:   []float64{3, 1, 2},
			want: Summary{N: 3, Median: 2, Mean: 2, Min: 1, Max: 3, StdDev: 1, CV: 0.5},
		},
		{
			name: "even",
			xs:   []float64{4, 1, 3, 2},
			want: Summary{N: 4, Median: 2.5, Mean: 2.5, Min: 1, Max: 4,
				StdDev: math.Sqrt(5.0 / 3), CV: math.Sqrt(5.0/3) / 2.5},
		},
		{
			name: "identical runs",
			xs:   []float64{5, 5, 5},
			want: Summary{N: 3, Median: 5, Mean: 5, Min: 5, Max: 5},
		},
		{
			name: "zero mean has no CV",
			xs:   []float64{-1, 1},
			want: Summary{N: 2, Min: -1, Max: 1, StdDev: math.Sqrt2},
		},
		{
			name: "negative mean has a positive CV",
			xs:   []float64{-2, -4},
			want: Summary{N: 2, Median: -3, Mean: -3, Min: -4, Max: -2,
				StdDev: math.Sqrt2, CV: math.Sqrt2 / 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(tt.xs)
			got := Summarize(tt.xs)
			if got.N != tt.want.N || !near(got.Median, tt.want.Median) || !near(got.Mean, tt.want.Mean) ||
				!near(got.Min, tt.want.Min) || !near(got.Max, tt.want.Max) ||
				!near(got.StdDev, tt.want.StdDev) || !near(got.CV, tt.want.CV) {
				t.Errorf("Summarize(%v) = %+v, want %+v", tt.xs, got, tt.want)
			}
			if !slices.Equal(tt.xs, orig) {
				t.Errorf("Summarize modified its input: %v, was %v", tt.xs, orig)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{name: "empty", xs: nil, want: math.NaN()},
		{name: "single", xs: []float64{4}, want: 4},
		{name: "odd", xs: []float64{9, 1, 5}, want: 5},
		{name: "even", xs: []float64{9, 1, 5, 3}, want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(tt.xs)
			if got := Median(tt.xs); !near(got, tt.want) {
				t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
			}
			if !slices.Equal(tt.xs, orig) {
				t.Errorf("Median modified its input: %v, was %v", tt.xs, orig)
			}
		})
	}
}

func TestAggregate(t *testing.T) {
	xs := []float64{30, 10, 20, 100}
	tests := []struct {
		how    string
		xs     []float64
		higher bool
		want   float64
	}{
		{how: "", xs: xs, higher: true, want: 25},
		{how: "median", xs: xs, higher: true, want: 25},
		{how: "median", xs: xs, higher: false, want: 25},
		{how: "mean", xs: xs, higher: true, want: 40},
		{how: "mean", xs: xs, higher: false, want: 40},
		{how: "best", xs: xs, higher: true, want: 100},
		{how: "best", xs: xs, higher: false, want: 10},
		{how: "median", xs: nil, higher: true, want: math.NaN()},
		{how: "best", xs: nil, higher: false, want: math.NaN()},
		{how: "p90", xs: xs, higher: true, want: math.NaN()},
	}
	for _, tt := range tests {
		name := "how=" + tt.how
		if tt.higher {
			name += "/higher"
		} else {
			name += "/lower"
		}
		if len(tt.xs) == 0 {
			name += "/empty"
		}
		t.Run(name, func(t *testing.T) {
			orig := slices.Clone(tt.xs)
			if got := Aggregate(tt.how, tt.xs, tt.higher); !near(got, tt.want) {
				t.Errorf("Aggregate(%q, %v, %t) = %v, want %v", tt.how, tt.xs, tt.higher, got, tt.want)
			}
			if !slices.Equal(tt.xs, orig) {
				t.Errorf("Aggregate modified its input: %v, was %v", tt.xs, orig)
			}
		})
	}
}

func TestCheckAggregate(t *testing.T) {
	tests := []struct {
		how   string
		valid bool
	}{
		{how: "", valid: true},
		{how: "median", valid: true},
		{how: "mean", valid: true},
		{how: "best", valid: true},
		{how: "Median", valid: false},
		{how: "p90", valid: false},
	}
	for _, tt := range tests {
		t.Run("how="+tt.how, func(t *testing.T) {
			err := CheckAggregate(tt.how)
			if (err == nil) != tt.valid {
				t.Errorf("CheckAggregate(%q) = %v, want valid=%t", tt.how, err, tt.valid)
			}
		})
	}
}

func TestHighVariance(t *testing.T) {
	tests := []struct {
		name  string
		xs    []float64
		limit float64
		want  bool
	}{
		{name: "steady", xs: []float64{100, 101, 99}, limit: 0.05, want: false},
		{name: "noisy", xs: []float64{100, 130, 70}, limit: 0.05, want: true},
		{name: "CV equal to limit", xs: []float64{1, 3}, limit: math.Sqrt2 / 2, want: false},
		{name: "single run", xs: []float64{100}, limit: 0.05, want: false},
		{name: "no runs", xs: nil, limit: 0.05, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(tt.xs)
			if got := HighVariance(s, tt.limit); got != tt.want {
				t.Errorf("HighVariance(CV=%v, %v) = %t, want %t", s.CV, tt.limit, got, tt.want)
			}
		})
	}
}
