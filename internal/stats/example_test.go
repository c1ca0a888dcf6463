package stats_test

import (
	"fmt"

	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

func Example() {
	base := []float64{1510, 1492, 1530, 1501, 1488} // tps of the baseline
	cand := []float64{1705, 1688, 1731, 1699, 1712}
	s := stats.Summarize(cand)
	fmt.Printf("median %.0f, CV %.1f%%, high variance %t\n", s.Median, 100*s.CV, stats.HighVariance(s, 0.05))

	v := stats.Compare(base, cand, true, 0.05)
	fmt.Printf("%s (x%.2f): %s\n", v.Outcome, v.Ratio, v.Reason)

	// p95 latency in milliseconds: lower is better, and the runs overlap.
	v = stats.Compare([]float64{12.1, 14.8, 11.9}, []float64{11.0, 12.5, 10.4}, false, 0.05)
	fmt.Printf("%s, about %d more runs each: %s\n", v.Outcome, v.MoreRuns, v.Reason)
	// Output:
	// median 1705, CV 0.9%, high variance false
	// faster (x1.14): every run of b beat every run of a and the medians differ by 13.6% (threshold 5%)
	// within noise, about 10 more runs each: the runs of a and b overlap, so the 9.1% difference between the medians (threshold 5%) is not established
}
