package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Outcome is the verdict of Compare in a word.
type Outcome string

// The outcomes of Compare. Faster means better: higher for throughput, lower for
// latency.
const (
	Faster      Outcome = "faster" // b is better than a
	Slower      Outcome = "slower"
	WithinNoise Outcome = "within noise"
	Unknown     Outcome = "not enough runs" // fewer than 2 runs on either side
)

// Verdict compares target b against baseline a.
type Verdict struct {
	Outcome Outcome
	Ratio   float64 // median(b) / median(a); NaN when median(a) is 0
	// MoreRuns is, when Outcome is WithinNoise or Unknown, an estimate of how many more
	// repetitions per target would be needed to tell the two apart at this difference
	// (0 when no number of runs would, because the medians differ by less than the noise
	// threshold); 0 otherwise. Compare documents the method; it is at most MaxMoreRuns.
	MoreRuns int
	Reason   string // one sentence for people, e.g. "every run of b beat every run of a and the medians differ by 12.0% (threshold 5%)"
}

// MaxMoreRuns caps Verdict.MoreRuns. An estimate this large means the difference is
// tiny next to the spread and more runs are not a practical way to settle it.
const MaxMoreRuns = 1000

// Power calculation constants: two-sided α = 0.05 and power 1-β = 0.8.
const (
	zAlpha = 1.959963984540054  // z_{1-α/2}, α = 0.05
	zBeta  = 0.8416212335729143 // z_{1-β}, β = 0.2
)

// Compare applies the rule: b is Faster (or Slower) than a only when every run of one
// beats every run of the other (the ranges do not overlap) AND the medians differ by
// more than noise (a fraction, e.g. 0.05). Otherwise WithinNoise.
//
// The difference of the medians is taken relative to a's median. When a's median is
// 0 any other median of b differs by more than every threshold and Ratio is NaN;
// two medians of 0 do not differ. Ties between runs count as overlap. With fewer
// than 2 runs on either side the Outcome is Unknown: with one run each the ranges
// are single points and "do not overlap" whenever the values differ at all, so the
// rule would certify nothing. Even with n runs each, two identical targets fail to
// overlap by chance with probability 2/C(2n, n): 33% for n = 2, 10% for n = 3,
// 2.9% for n = 4, 0.8% for n = 5; the noise threshold is what guards the small
// repetition counts. Compare does not modify a or b; the values should be finite.
//
// MoreRuns is a two-sample power calculation, for Outcomes WithinNoise and Unknown:
//
//	n = 2 (z_{1-α/2} + z_{1-β})² σ² / δ² + z_{1-α/2}² / 4
//
// with α = 0.05, β = 0.2 (80% power), σ² the pooled sample variance of a and b,
// δ the difference of their means, and the last term Guenther's (1981) correction
// for the t distribution at small n. The runs needed per target are n rounded up,
// at least 2; MoreRuns subtracts the runs already made by the target with fewer,
// is at least 1, and at most MaxMoreRuns. It is 0 when the medians differ by no
// more than noise, since then no number of runs makes the observed difference
// count. When neither side has 2 runs (or one has none) there is no spread to
// estimate and MoreRuns is only what it takes to reach 2 runs of each.
//
// MoreRuns measures how far the data is from telling the targets apart, not a
// promise that Compare will then name a winner: it is what a t-test would need,
// while the range rule gets stricter as runs are added, because every extra run
// of a noisy target widens its range. Under normal noise with the means 2σ apart,
// the ranges of 3 runs each fail to overlap about 60% of the time, of 10 runs each
// about 10%.
func Compare(a, b []float64, higherIsBetter bool, noise float64) Verdict {
	ma, mb := Median(a), Median(b)
	v := Verdict{Ratio: math.NaN()}
	if ma != 0 {
		v.Ratio = mb / ma
	}
	rel := relDiff(ma, mb)
	threshold := percent(noise)

	if len(a) < 2 || len(b) < 2 {
		v.Outcome = Unknown
		v.MoreRuns = moreRuns(a, b, rel, noise)
		v.Reason = fmt.Sprintf("a has %s and b has %s; a comparison needs at least 2 runs of each",
			runs(len(a)), runs(len(b)))
		return v
	}

	winner, loser := "", ""
	switch {
	case beatsAll(b, a, higherIsBetter):
		winner, loser = "b", "a"
	case beatsAll(a, b, higherIsBetter):
		winner, loser = "a", "b"
	}
	aboveNoise := rel > noise

	switch {
	case winner != "" && aboveNoise:
		v.Outcome = Faster
		if winner == "a" {
			v.Outcome = Slower
		}
		if math.IsInf(rel, 1) {
			v.Reason = fmt.Sprintf("every run of %s beat every run of %s and the median of a is 0, so the difference exceeds the %s threshold",
				winner, loser, threshold)
		} else {
			v.Reason = fmt.Sprintf("every run of %s beat every run of %s and the medians differ by %.1f%% (threshold %s)",
				winner, loser, 100*rel, threshold)
		}
	case winner != "":
		v.Outcome = WithinNoise
		v.Reason = fmt.Sprintf("every run of %s beat every run of %s but the medians differ by only %.1f%% (threshold %s)",
			winner, loser, 100*rel, threshold)
	case aboveNoise:
		v.Outcome = WithinNoise
		v.MoreRuns = moreRuns(a, b, rel, noise)
		if math.IsInf(rel, 1) {
			v.Reason = "the runs of a and b overlap, so the difference from a's median of 0 is not established"
		} else {
			v.Reason = fmt.Sprintf("the runs of a and b overlap, so the %.1f%% difference between the medians (threshold %s) is not established",
				100*rel, threshold)
		}
	default:
		v.Outcome = WithinNoise
		v.Reason = fmt.Sprintf("the runs of a and b overlap and the medians differ by only %.1f%% (threshold %s)",
			100*rel, threshold)
	}
	return v
}

// moreRuns implements the power calculation documented on Compare. rel is the
// relative difference of the medians.
func moreRuns(a, b []float64, rel, noise float64) int {
	made := min(len(a), len(b))
	if made > 0 && !(rel > noise) {
		return 0
	}
	df := max(len(a)-1, 0) + max(len(b)-1, 0)
	if made == 0 || df == 0 {
		return max(2-made, 1)
	}
	meanA, meanB := mean(a), mean(b)
	variance := (sumSquares(a, meanA) + sumSquares(b, meanB)) / float64(df)
	delta := meanB - meanA
	n := 2*(zAlpha+zBeta)*(zAlpha+zBeta)*variance/(delta*delta) + zAlpha*zAlpha/4
	if !(n < float64(made+MaxMoreRuns)) { // also +Inf and NaN when delta is 0
		return MaxMoreRuns
	}
	needed := max(2, int(math.Ceil(n)))
	return min(max(needed-made, 1), MaxMoreRuns)
}

// relDiff is |mb - ma| / |ma|: +Inf when only ma is 0, 0 when both are.
func relDiff(ma, mb float64) float64 {
	if ma == 0 {
		if mb == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(mb-ma) / math.Abs(ma)
}

// beatsAll reports whether every value of x is better than every value of y; both
// are non-empty. A NaN anywhere makes it false.
func beatsAll(x, y []float64, higherIsBetter bool) bool {
	if higherIsBetter {
		return slices.Min(x) > slices.Max(y)
	}
	return slices.Max(x) < slices.Min(y)
}

// percent formats a fraction as a percentage without float noise: 0.05 is "5%",
// 0.025 is "2.5%".
func percent(fraction float64) string {
	return strconv.FormatFloat(math.Round(fraction*100*1000)/1000, 'f', -1, 64) + "%"
}

func runs(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}
