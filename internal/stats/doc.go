// Package stats reduces repeated runs to medians and spread, and compares targets
// without claiming more than the runs support: b beats a only when every run of one
// beats every run of the other and the medians differ by more than the noise
// threshold; anything less is "within noise", with an estimate of how many more runs
// might settle it.
//
// A report comparing the throughput of two targets over five runs each:
//
//	base := []float64{1510, 1492, 1530, 1501, 1488} // tps of the baseline
//	cand := []float64{1705, 1688, 1731, 1699, 1712}
//	s := stats.Summarize(cand)
//	if stats.HighVariance(s, 0.05) {
//		// flag the target: its runs vary by more than the noise threshold
//	}
//	v := stats.Compare(base, cand, true, 0.05) // true: higher is better
//	fmt.Printf("%s (x%.2f): %s\n", v.Outcome, v.Ratio, v.Reason)
//	// faster (x1.14): every run of b beat every run of a and the medians differ by 13.6% (threshold 5%)
//
// For latency pass higherIsBetter false: "faster" still means better, here lower.
package stats
