package keydist

import (
	"math"
	"math/rand/v2"
)

// The Zipfian draws k in [1, n] with probability proportional to k^-q, by
// rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion to generate
// variates from monotone discrete distributions", ACM TOMACS 6(3), 1996), the method
// of sysbench's sb_rand_zipfian. The hat is h(x) = x^-q, whose integral H can be
// inverted in closed form: a uniform u between H(1.5)-1 and H(n+0.5) is mapped to
// x = H⁻¹(u), rounded to k, and kept when u falls in the top h(k) of k's slice of the
// integral. No normalising constant is needed, so New costs O(1) for any n, where
// the Gray et al. method (older pgbench, for exponents below 1) needs zeta(n), a sum
// of n terms.
//
// H(x) = (x^(1-q) - 1) / (1-q), and log(x) at q = 1: the -1 gives the q = 1 limit, so
// one formula serves every q >= 0.

func (d *Dist) zipf(r rand.Source) int64 {
	for {
		u := d.hx1 + unit(r)*d.hspan
		x := bigHInv(u, d.q)
		// In exact arithmetic x rounds to a k in [1, n]; anything else is a rounding
		// error, and for a large q near the top of the range x can even be +Inf.
		// Such draws are thrown back rather than piled onto n.
		k := max(math.Floor(x+0.5), 1)
		if !(k <= d.nf) {
			continue
		}
		// For k = 1 the second test always holds, since u >= H(1.5) - h(1).
		if k-x <= d.squeeze || u >= bigH(k+0.5, d.q)-h(k, d.q) {
			return int64(k)
		}
	}
}

func h(x, q float64) float64 { return math.Exp(-q * math.Log(x)) }

func bigH(x, q float64) float64 {
	lx := math.Log(x)
	return expm1x((1-q)*lx) * lx
}

func bigHInv(u, q float64) float64 {
	// t < -1 would mean x^(1-q) < 0; it can only come from rounding.
	t := max((1-q)*u, -1)
	return math.Exp(log1px(t) * u)
}

// expm1x is (e^y - 1) / y, which tends to 1 as y tends to 0 (q near 1).
func expm1x(y float64) float64 {
	if math.Abs(y) > 1e-8 {
		return math.Expm1(y) / y
	}
	return 1 + y/2*(1+y/3*(1+y/4))
}

// log1px is log(1 + y) / y, which tends to 1 as y tends to 0 (q near 1).
func log1px(y float64) float64 {
	if math.Abs(y) > 1e-8 {
		return math.Log1p(y) / y
	}
	return 1 - y*(1.0/2-y*(1.0/3-y/4))
}
