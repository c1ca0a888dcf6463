package stats

import (
	"fmt"
	"math"
	"slices"
)

// Summary describes repeated measurements of one figure.
type Summary struct {
	N                      int
	Median, Mean, Min, Max float64
	StdDev                 float64 // sample standard deviation (n-1); 0 when N < 2
	// CV is the coefficient of variation, StdDev / Mean (|Mean| for negative
	// figures, so it is never negative); 0 when Mean is 0 or N < 2.
	CV float64
}

// Summarize describes xs. It returns the zero Summary when xs is empty and does
// not modify xs. The values are expected to be finite.
func Summarize(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	s := Summary{
		N:      n,
		Median: medianSorted(sorted),
		Mean:   mean(xs),
		Min:    sorted[0],
		Max:    sorted[n-1],
	}
	if n >= 2 {
		s.StdDev = math.Sqrt(sumSquares(xs, s.Mean) / float64(n-1))
		if s.Mean != 0 {
			s.CV = s.StdDev / math.Abs(s.Mean)
		}
	}
	return s
}

// Median returns the middle value of xs, or the mean of the two middle values when
// len(xs) is even; NaN when xs is empty. It does not modify xs.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return medianSorted(sorted)
}

// The ways Aggregate can reduce repeated runs to one figure.
const (
	AggregateMedian = "median"
	AggregateMean   = "mean"
	AggregateBest   = "best"
)

// Aggregate is the study's choice: "median" (default, also for ""), "mean" or "best".
// best is the maximum when higherIsBetter, else the minimum. Aggregate returns NaN
// for no values and for an unknown choice, which CheckAggregate rejects up front.
// It does not modify xs.
func Aggregate(how string, xs []float64, higherIsBetter bool) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	switch how {
	case "", AggregateMedian:
		return Median(xs)
	case AggregateMean:
		return mean(xs)
	case AggregateBest:
		if higherIsBetter {
			return slices.Max(xs)
		}
		return slices.Min(xs)
	default:
		return math.NaN()
	}
}

// CheckAggregate returns an error unless Aggregate understands how.
func CheckAggregate(how string) error {
	switch how {
	case "", AggregateMedian, AggregateMean, AggregateBest:
		return nil
	}
	return fmt.Errorf("unknown aggregate %q: want %s, %s or %s",
		how, AggregateMedian, AggregateMean, AggregateBest)
}

// HighVariance reports whether a target's runs vary too much to trust: CV above limit
// (the report uses the noise threshold as the limit). A summary of fewer than two
// runs has no measured variation and is never reported; Compare says Unknown for it.
func HighVariance(s Summary, limit float64) bool {
	return s.CV > limit
}

// medianSorted is the median of a sorted, non-empty slice.
func medianSorted(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// sumSquares is the sum of squared deviations from m.
func sumSquares(xs []float64, m float64) float64 {
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss
}
