package keydist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The statistical tests use fixed seeds, so they cannot flake; the tolerances are
// five standard errors (or a chi-square quantile of the same rarity), so a correct
// sampler passes for practically any seed and a change of seed is no reason to widen them.
const (
	draws = 1_000_000
	sigma = 5.0
)

func source(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x5eed) }

func mustParse(t testing.TB, s string) Spec {
	t.Helper()
	spec, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func mustNew(t testing.TB, s string, lo, hi int64) *Dist {
	t.Helper()
	d, err := New(mustParse(t, s), lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The expected probability of each offset from lo, computed from each distribution's
// definition: pgbench's documented formulas, and for sysbench's the algorithm in
// sb_rand.c taken as a definition and integrated.

func uniformPMF(n int) []float64 {
	p := make([]float64, n)
	for j := range p {
		p[j] = 1 / float64(n)
	}
	return p
}

// batesCDF is P(the mean of k uniform draws <= a), from the Irwin–Hall distribution
// of their sum; evaluated on the nearer half so that the alternating sum cancels less.
func batesCDF(k int, a float64) float64 {
	x := a * float64(k)
	switch {
	case x <= 0:
		return 0
	case x >= float64(k):
		return 1
	case x > float64(k)/2:
		return 1 - batesCDF(k, 1-a)
	}
	s, binom, fact := 0.0, 1.0, 1.0
	for j := 0; j <= int(x); j++ {
		term := binom * math.Pow(x-float64(j), float64(k))
		if j%2 == 1 {
			term = -term
		}
		s += term
		binom = binom * float64(k-j) / float64(j+1)
	}
	for i := 2; i <= k; i++ {
		fact *= float64(i)
	}
	return s / fact
}

// sysbench gaussian: a + floor((b-a+1) * mean of iter uniforms).
func gaussianPMF(n, iter int) []float64 {
	p := make([]float64, n)
	for j := range p {
		p[j] = batesCDF(iter, float64(j+1)/float64(n)) - batesCDF(iter, float64(j)/float64(n))
	}
	return p
}

// sysbench special with t = b-a: a uniform rnd picks the averaged branch,
// a + floor(t * mean of iter uniforms), when rnd < (100-res)/100; otherwise the key is
// a + floor(rnd*(t*pct/100 + 1) + t/2 - t*pct/200), with that same rnd.
func specialPMF(n, iter, pct, res int) []float64 {
	p := make([]float64, n)
	t := float64(n - 1)
	c := float64(100-res) / 100
	for j := 0; j < n-1; j++ {
		p[j] += c * (batesCDF(iter, float64(j+1)/t) - batesCDF(iter, float64(j)/t))
	}
	w := t*float64(pct)/100 + 1
	off := t/2 - t*float64(pct)/200
	a, b := c*w+off, w+off // the hot branch spreads its keys evenly over [a, b)
	for j := math.Floor(a); j < b; j++ {
		p[int(j)] += (min(b, j+1) - max(a, j)) / w
	}
	return p
}

// sysbench pareto: a + floor(n * u^(log h / log(1-h))), so P(offset < k) = (k/n)^(1/power).
func paretoCDF(n, k, h float64) float64 {
	return math.Pow(k/n, math.Log1p(-h)/math.Log(h))
}

func paretoPMF(n int, h float64) []float64 {
	p := make([]float64, n)
	for j := range p {
		p[j] = paretoCDF(float64(n), float64(j+1), h) - paretoCDF(float64(n), float64(j), h)
	}
	return p
}

func zipfPMF(n int, q float64) []float64 {
	p := make([]float64, n)
	for j := range p {
		p[j] = math.Pow(float64(j+1), -q) / zeta(float64(n), q)
	}
	return p
}

// zeta is the sum of k^-q for k from 1 to n. Past 10^4 terms the tail from m = 1000 is
// taken by Euler–Maclaurin to the k^-q-3 term; what is left is below 1e-18.
func zeta(n, q float64) float64 {
	m := n + 1
	if n > 10000 {
		m = 1000
	}
	s := 0.0
	for k := 1.0; k < m; k++ {
		s += math.Pow(k, -q)
	}
	if m > n {
		return s
	}
	if q == 1 {
		s += math.Log(n / m)
	} else {
		s += (math.Pow(n, 1-q) - math.Pow(m, 1-q)) / (1 - q)
	}
	s += (math.Pow(m, -q) + math.Pow(n, -q)) / 2
	s += q / 12 * (math.Pow(m, -q-1) - math.Pow(n, -q-1))
	s -= q * (q + 1) * (q + 2) / 720 * (math.Pow(m, -q-3) - math.Pow(n, -q-3))
	return s
}

// pgbench exponential: f(x) = exp(-p (x-min) / (max-min+1)) / (1 - exp(-p)), and key i
// has probability f(i) - f(i+1); so P(offset < k) = f(min) - f(min+k).
func exponentialCDF(n, k, param float64) float64 {
	return math.Expm1(-param*k/n) / math.Expm1(-param)
}

func exponentialPMF(n int, param float64) []float64 {
	p := make([]float64, n)
	for j := range p {
		p[j] = exponentialCDF(float64(n), float64(j+1), param) - exponentialCDF(float64(n), float64(j), param)
	}
	return p
}

// pgbench gaussian: f(x) = PHI(2p (x-mu) / (max-min+1)) / (2 PHI(p) - 1) with
// mu = (max+min)/2, and key i has probability f(i+0.5) - f(i-0.5).
func pgGaussianCDF(n, k, param float64) float64 {
	phi := func(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }
	return (phi(2*param*k/n-param) - phi(-param)) / (2*phi(param) - 1)
}

func pgGaussianPMF(n int, param float64) []float64 {
	p := make([]float64, n)
	for j := range p {
		p[j] = pgGaussianCDF(float64(n), float64(j+1), param) - pgGaussianCDF(float64(n), float64(j), param)
	}
	return p
}

// checkPMF compares the observed counts of each offset with the expected probabilities:
// the mean and the variance within sigma standard errors, and the whole shape by a
// chi-square test whose threshold is as rare as sigma standard errors.
func checkPMF(t *testing.T, counts []int, pmf []float64) {
	t.Helper()
	total := 0.0
	for j, c := range counts {
		if pmf[j] == 0 && c > 0 {
			t.Errorf("offset %d drawn %d times; its probability is 0", j, c)
		}
		total += float64(c)
	}

	var mean, variance, m4, obsMean, obsVar float64
	for j, p := range pmf {
		mean += float64(j) * p
		obsMean += float64(j) * float64(counts[j]) / total
	}
	for j, p := range pmf {
		dx, do := float64(j)-mean, float64(j)-obsMean
		variance += dx * dx * p
		m4 += dx * dx * dx * dx * p
		obsVar += do * do * float64(counts[j]) / total
	}
	if se := math.Sqrt(variance / total); math.Abs(obsMean-mean) > sigma*se {
		t.Errorf("mean offset %.6g, want %.6g ± %.3g", obsMean, mean, sigma*se)
	}
	// The observed variance is taken about the observed mean, which is off by up to
	// sigma*sqrt(variance/total): that shifts it by up to the square of this.
	se := math.Sqrt((m4 - variance*variance) / total)
	if tol := sigma*se + sigma*sigma*variance/total; math.Abs(obsVar-variance) > tol {
		t.Errorf("variance %.6g, want %.6g ± %.3g", obsVar, variance, tol)
	}

	// Offsets expected fewer than 5 times are pooled so the chi-square law holds.
	var chi2, poolObs, poolExp float64
	bins := 0
	for j, p := range pmf {
		e := p * total
		if e < 5 {
			poolObs += float64(counts[j])
			poolExp += e
			continue
		}
		d := float64(counts[j]) - e
		chi2 += d * d / e
		bins++
	}
	if poolExp > 0 {
		d := poolObs - poolExp
		chi2 += d * d / max(poolExp, 5)
		bins++
	}
	if df := float64(bins - 1); df > 0 {
		// Wilson–Hilferty: the chi-square quantile at sigma standard normal deviations.
		crit := df * math.Pow(1-2/(9*df)+sigma*math.Sqrt(2/(9*df)), 3)
		if chi2 > crit {
			t.Errorf("chi-square %.1f over %d bins, want below %.1f", chi2, bins, crit)
		}
	}
}

func TestDistributions(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (go test without -short)")
	}
	tests := []struct {
		spec string
		lo   int64
		n    int
		pmf  []float64
	}{
		{"uniform", 1, 1, uniformPMF(1)},
		{"uniform", 0, 2, uniformPMF(2)},
		{"uniform", -3, 7, uniformPMF(7)},
		{"uniform", 1, 1000, uniformPMF(1000)},
		{"gaussian", 1, 100, gaussianPMF(100, 12)},
		{"gaussian:1", 1, 50, gaussianPMF(50, 1)},
		{"gaussian:3", -20, 37, gaussianPMF(37, 3)},
		{"special", 1, 1000, specialPMF(1000, 12, 1, 75)},
		{"special:12:10:50", 1, 200, specialPMF(200, 12, 10, 50)},
		{"special:3:100:90", 0, 50, specialPMF(50, 3, 100, 90)},
		{"special:12:0:100", 1, 101, specialPMF(101, 12, 0, 100)},
		{"special:12:1:0", 1, 100, specialPMF(100, 12, 1, 0)},
		{"special", 1, 2, specialPMF(2, 12, 1, 75)},
		{"pareto", 1, 100, paretoPMF(100, 0.2)},
		{"pareto:0.5", 1, 100, paretoPMF(100, 0.5)},
		{"pareto:0.7", -500, 1000, paretoPMF(1000, 0.7)},
		{"pareto:0.05", 1, 10, paretoPMF(10, 0.05)},
		{"zipfian", 1, 100, zipfPMF(100, 0.8)},
		{"zipfian:0", 1, 50, zipfPMF(50, 0)},
		{"zipfian:0.99", 1, 10, zipfPMF(10, 0.99)},
		{"zipfian:1", 1, 1000, zipfPMF(1000, 1)},
		{"zipfian:1.001", 1, 10, zipfPMF(10, 1.001)},
		{"zipfian:1.5", 7, 1000, zipfPMF(1000, 1.5)},
		{"zipfian:3", 1, 20, zipfPMF(20, 3)},
		{"zipfian:50", 1, 5, zipfPMF(5, 50)},
		{"exponential:5", 1, 100, exponentialPMF(100, 5)},
		{"exponential:0.001", 1, 100, exponentialPMF(100, 0.001)},
		{"exponential:20", 1, 1000, exponentialPMF(1000, 20)},
		{"exponential:1", 1, 3, exponentialPMF(3, 1)},
		{"pgbench-gaussian:2", 1, 100, pgGaussianPMF(100, 2)},
		{"pgbench-gaussian:5", 1, 1000, pgGaussianPMF(1000, 5)},
		{"pgbench-gaussian:2.5", -5, 10, pgGaussianPMF(10, 2.5)},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("dist=%s/n=%d", tt.spec, tt.n), func(t *testing.T) {
			sum := 0.0
			for _, p := range tt.pmf {
				sum += p
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("expected probabilities sum to %v", sum) // a bug in the test
			}
			d := mustNew(t, tt.spec, tt.lo, tt.lo+int64(tt.n)-1)
			r := source(uint64(i))
			counts := make([]int, tt.n)
			for range draws {
				counts[d.Draw(r)-tt.lo]++
			}
			checkPMF(t, counts, tt.pmf)
		})
	}
}

// TestLargeRange checks over a billion keys what a table of counts cannot: the
// fraction of draws below a few offsets against each definition's CDF.
func TestLargeRange(t *testing.T) {
	const n = 1e9
	tests := []struct {
		spec   string
		cdf    func(k float64) float64 // P(offset < k)
		points []float64
	}{
		{"uniform", func(k float64) float64 { return k / n }, []float64{n / 1000, n / 3, n / 2, n - n/1000}},
		{"gaussian", func(k float64) float64 { return batesCDF(12, k/n) }, []float64{n / 4, n * 0.45, n / 2, n * 0.6}},
		{"pareto", func(k float64) float64 { return paretoCDF(n, k, 0.2) }, []float64{1, 1000, n / 1000, n / 10, n / 2}},
		{"zipfian", func(k float64) float64 { return zeta(k, 0.8) / zeta(n, 0.8) }, []float64{1, 2, 3, 10, 100, 1e6, n / 2}},
		{"zipfian:1.2", func(k float64) float64 { return zeta(k, 1.2) / zeta(n, 1.2) }, []float64{1, 2, 10, 1e4, 1e7}},
		{"exponential:5", func(k float64) float64 { return exponentialCDF(n, k, 5) }, []float64{n / 1000, n / 100, n / 5, n / 2}},
		{"pgbench-gaussian:2.5", func(k float64) float64 { return pgGaussianCDF(n, k, 2.5) }, []float64{n / 100, n / 4, n / 2, n * 0.9}},
	}
	for i, tt := range tests {
		t.Run("dist="+tt.spec, func(t *testing.T) {
			d := mustNew(t, tt.spec, 1, n)
			r := source(100 + uint64(i))
			below := make([]int, len(tt.points))
			for range draws {
				off := float64(d.Draw(r) - 1)
				for j, k := range tt.points {
					if off < k {
						below[j]++
					}
				}
			}
			for j, k := range tt.points {
				p := tt.cdf(k)
				got := float64(below[j]) / draws
				if se := math.Sqrt(p * (1 - p) / draws); math.Abs(got-p) > sigma*se+1.0/draws {
					t.Errorf("P(offset < %g) = %.6g, want %.6g ± %.3g", k, got, p, sigma*se)
				}
			}
		})
	}
}

// TestSpecialHotWindow checks sysbench's promise for special: res percent of the draws
// land in the middle pct percent of the range, plus what the averaged branch sends there.
func TestSpecialHotWindow(t *testing.T) {
	tests := []struct {
		iter, pct, res int
	}{{12, 1, 75}, {12, 5, 90}, {6, 20, 50}}
	const n = 1_000_000
	for i, tt := range tests {
		spec := fmt.Sprintf("special:%d:%d:%d", tt.iter, tt.pct, tt.res)
		t.Run("dist="+spec, func(t *testing.T) {
			t1 := float64(n - 1)
			w := t1*float64(tt.pct)/100 + 1
			start := t1/2 - t1*float64(tt.pct)/200
			lo, hi := math.Floor(start), math.Floor(start+w) // offsets of the window, inclusive
			c := float64(100-tt.res) / 100
			want := 1 - c + c*(batesCDF(tt.iter, (hi+1)/t1)-batesCDF(tt.iter, lo/t1))

			d := mustNew(t, spec, 1, n)
			r := source(200 + uint64(i))
			in := 0
			for range draws {
				if off := float64(d.Draw(r) - 1); off >= lo && off <= hi {
					in++
				}
			}
			got := float64(in) / draws
			if se := math.Sqrt(want * (1 - want) / draws); math.Abs(got-want) > sigma*se {
				t.Errorf("%.4f of draws in offsets [%g, %g], want %.4f ± %.4f", got, lo, hi, want, sigma*se)
			}
			if got < float64(tt.res)/100 {
				t.Errorf("%.4f of draws in the hot %d%%, fewer than res = %d%%", got, tt.pct, tt.res)
			}
		})
	}
}

var allSpecs = []string{
	"uniform", "gaussian", "special", "pareto", "zipfian", "zipfian:1", "zipfian:1000",
	"exponential:5", "exponential:1e-9", "pgbench-gaussian:2",
}

func TestDrawStaysInRange(t *testing.T) {
	ranges := []struct{ lo, hi int64 }{
		{5, 5},
		{-3, -3},
		{0, 1},
		{-1, 0},
		{1, 1e9},
		{-1e9, 1e9},
		{1, 1 << 53},
		{math.MaxInt64 - 10, math.MaxInt64},
		{math.MinInt64, math.MinInt64 + 10},
		{math.MaxInt64 - 1, math.MaxInt64},
	}
	for _, spec := range allSpecs {
		for _, rg := range ranges {
			t.Run(fmt.Sprintf("dist=%s/lo=%d/hi=%d", spec, rg.lo, rg.hi), func(t *testing.T) {
				d := mustNew(t, spec, rg.lo, rg.hi)
				r := source(uint64(rg.hi))
				seen := map[int64]bool{}
				for range 20000 {
					k := d.Draw(r)
					if k < rg.lo || k > rg.hi {
						t.Fatalf("drew %d", k)
					}
					if len(seen) < 3 {
						seen[k] = true
					}
				}
				// Every spec here gives both keys of a two-key range at least 1% of
				// the draws, except zipfian:1000, whose second key has 2^-1000 of them.
				if rg.hi-rg.lo == 1 && len(seen) != 2 && spec != "zipfian:1000" {
					t.Fatalf("drew only %v", seen)
				}
			})
		}
	}
	t.Run("dist=uniform/lo=MinInt64/hi=MaxInt64", func(t *testing.T) {
		d := mustNew(t, "uniform", math.MinInt64, math.MaxInt64)
		r := source(1)
		neg := 0
		for range 10000 {
			if d.Draw(r) < 0 {
				neg++
			}
		}
		if neg < 4500 || neg > 5500 { // 10 standard errors of 50
			t.Fatalf("%d negative keys of 10000", neg)
		}
	})
}

func TestDrawDoesNotAllocate(t *testing.T) {
	r := source(1)
	for _, spec := range allSpecs {
		d := mustNew(t, spec, 1, 1_000_000)
		if a := testing.AllocsPerRun(1000, func() { d.Draw(r) }); a != 0 {
			t.Errorf("dist=%s: %v allocations per draw", spec, a)
		}
	}
}

func TestDrawIsDeterministic(t *testing.T) {
	for _, spec := range allSpecs {
		d := mustNew(t, spec, 1, 1000)
		a, b := source(7), source(7)
		for range 1000 {
			if x, y := d.Draw(a), d.Draw(b); x != y {
				t.Fatalf("dist=%s: %d and %d from the same seed", spec, x, y)
			}
		}
	}
}

var sink int64

func BenchmarkDraw(b *testing.B) {
	specs := []string{
		"uniform", "gaussian", "special", "pareto", "zipfian", "zipfian:1.1",
		"exponential:5", "pgbench-gaussian:2.5",
	}
	for _, spec := range specs {
		b.Run("dist="+spec, func(b *testing.B) {
			d := mustNew(b, spec, 1, 10_000_000)
			r := source(1)
			for b.Loop() {
				sink += d.Draw(r)
			}
		})
	}
}
