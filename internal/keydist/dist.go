package keydist

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// maxKeys bounds the ranges of the distributions computed in float64: beyond 2^53
// keys not every offset is representable, so some keys could never be drawn.
const maxKeys = 1 << 53

// Dist draws keys from one distribution over one range. It is immutable once built,
// so clients may share it; everything a draw can reuse is computed by New.
type Dist struct {
	spec Spec
	lo   int64
	n    uint64  // keys in the range; 0 stands for all 2^64 (uniform only)
	last int64   // n-1, the largest offset from lo
	nf   float64 // n as a float

	thresh uint64 // uniform: 2^64 mod n; Lemire's method rejects lower products

	iter int // gaussian, special: uniform draws averaged
	// scale turns the continuous draw into an offset: for gaussian and special a
	// sum of iter uniform draws, for exponential and pgbench-gaussian their variate.
	scale float64

	cut   float64 // special: draws below go to the averaged branch
	width float64 // special: the hot window's width, in keys
	start float64 // special: the hot window's offset from lo

	power float64 // pareto: exponent applied to a uniform draw

	q          float64 // zipfian: exponent
	hx1, hspan float64 // zipfian: the bounds of the inverted integral, see zipf
	squeeze    float64 // zipfian: accept at once when k-x is at most this

	m     float64 // exponential: 1 - exp(-parameter)
	param float64 // pgbench-gaussian: truncation point, in standard deviations
}

// New prepares spec for keys in [lo, hi].
func New(spec Spec, lo, hi int64) (*Dist, error) {
	if err := spec.check(); err != nil {
		return nil, fmt.Errorf("distribution %s: %w", spec, err)
	}
	if lo > hi {
		return nil, fmt.Errorf("%s over [%d, %d]: the range is empty, lo must be <= hi", spec, lo, hi)
	}
	// Unsigned arithmetic so that ranges wider than MaxInt64 count right.
	n := uint64(hi) - uint64(lo) + 1
	if spec.Kind != Uniform && (n == 0 || n > maxKeys) {
		return nil, fmt.Errorf("%s over [%d, %d]: more than 2^53 keys; only uniform takes a range that wide", spec, lo, hi)
	}
	d := &Dist{spec: spec, lo: lo, n: n, last: int64(n - 1), nf: float64(n)}
	switch spec.Kind {
	case Uniform:
		if n != 0 {
			d.thresh = -n % n
		}
	case Gaussian:
		d.iter = spec.Iter
		d.scale = d.nf / float64(spec.Iter)
	case Special:
		// sysbench measures this distribution on b-a, one less than the number of keys.
		t := d.nf - 1
		d.iter = spec.Iter
		d.scale = t / float64(spec.Iter)
		d.cut = float64(100-spec.Res) / 100
		d.width = t*float64(spec.Pct)/100 + 1
		d.start = t/2 - t*float64(spec.Pct)/200
	case Pareto:
		d.power = math.Log(spec.Param) / math.Log1p(-spec.Param)
	case Zipfian:
		d.q = spec.Param
		d.hx1 = bigH(1.5, d.q) - 1
		d.hspan = bigH(d.nf+0.5, d.q) - d.hx1
		d.squeeze = 2 - bigHInv(bigH(2.5, d.q)-h(2, d.q), d.q)
	case Exponential:
		d.m = -math.Expm1(-spec.Param)
		d.scale = d.nf / spec.Param
	case PgbenchGaussian:
		d.param = spec.Param
		d.scale = d.nf / (2 * spec.Param)
	}
	return d, nil
}

// Spec returns the distribution d draws from.
func (d *Dist) Spec() Spec { return d.spec }

// Draw returns a key in [lo, hi]. r is the caller's own source; *rand.PCG and
// *rand.ChaCha8 satisfy it without allocating.
func (d *Dist) Draw(r rand.Source) int64 {
	var x float64 // offset from lo, in [0, n) before rounding errors
	switch d.spec.Kind {
	case Uniform:
		return int64(uint64(d.lo) + d.uniform(r))
	case Gaussian:
		x = sum(r, d.iter) * d.scale
	case Special:
		// As in sysbench, the draw that chose the hot branch also places the key in
		// the hot window. That draw is at least cut, so the lowest cut of the window
		// is never hot: with the defaults, 75% of the draws land in the upper three
		// quarters of the middle 1% of the keys.
		if u := unit(r); u < d.cut {
			x = sum(r, d.iter) * d.scale
		} else {
			x = u*d.width + d.start
		}
	case Pareto:
		// u^power; power > 0, and u = 0 gives exp(-Inf) = 0. math.Pow costs twice as much.
		x = d.nf * math.Exp(d.power*math.Log(unit(r)))
	case Zipfian:
		return d.lo + d.zipf(r) - 1
	case Exponential:
		// pgbench's -log(cut + (1-cut)*v) / parameter with v = 1-u, rewritten so that a
		// parameter near 0 keeps its precision (cut rounds to 1 there).
		x = -math.Log1p(-d.m*unit(r)) * d.scale
	case PgbenchGaussian:
		z := normal(r)
		for z < -d.param || z >= d.param {
			z = normal(r)
		}
		x = (z + d.param) * d.scale
	}
	off := int64(x)
	if off > d.last {
		off = d.last
	}
	return d.lo + off
}

// uniform returns an offset in [0, n) with Lemire's multiply-shift; rejecting the
// lowest 2^64 mod n products leaves every offset exactly equally likely.
func (d *Dist) uniform(r rand.Source) uint64 {
	if d.n == 0 {
		return r.Uint64()
	}
	hi, lo := bits.Mul64(r.Uint64(), d.n)
	for lo < d.thresh {
		hi, lo = bits.Mul64(r.Uint64(), d.n)
	}
	return hi
}

// unit returns a float64 uniform in [0, 1) from the top 53 bits.
func unit(r rand.Source) float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// sum adds k unit draws.
func sum(r rand.Source, k int) float64 {
	s := 0.0
	for range k {
		s += unit(r)
	}
	return s
}

// normal returns a standard normal draw by Box-Muller. Only one of the pair is used:
// keeping the other would make Dist mutable and unsafe to share.
func normal(r rand.Source) float64 {
	u := 1 - unit(r) // (0, 1]: log must not see 0
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*unit(r))
}
