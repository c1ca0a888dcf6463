package pgbscript

import (
	"math"
	"math/bits"
)

// PRNG is PostgreSQL's pseudo-random generator (src/common/pg_prng.c), which pgbench
// draws from: xoroshiro128** seeded through splitmix64. Its draws must be the same
// as pgbench's, bit for bit, for a script to get the same values from the same
// --random-seed. math/rand/v2 has no xoroshiro128**, hence this small one.
type PRNG struct{ s0, s1 uint64 }

// splitmix64 advances *x and returns its next output.
func splitmix64(x *uint64) uint64 {
	*x += 0x9E3779B97F4A7C15
	v := *x
	v = (v ^ v>>30) * 0xBF58476D1CE4E5B9
	v = (v ^ v>>27) * 0x94D049BB133111EB
	return v ^ v>>31
}

// Seed sets the state from a 64-bit seed.
func (r *PRNG) Seed(seed uint64) {
	r.s0 = splitmix64(&seed)
	r.s1 = splitmix64(&seed)
	if r.s0 == 0 && r.s1 == 0 { // the one state the generator cannot leave
		r.s0 = 0x5851F42D4C957F2D
	}
}

// Uint64 is the next 64 random bits.
func (r *PRNG) Uint64() uint64 {
	s0 := r.s0
	sx := r.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	r.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ sx<<16
	r.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// rangeU64 draws uniformly from [lo, hi] by masking to the range's bit length and
// rejecting draws above it.
func (r *PRNG) rangeU64(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	span := hi - lo
	shift := uint(bits.LeadingZeros64(span))
	for {
		v := r.Uint64() >> shift
		if v <= span {
			return lo + v
		}
	}
}

// Float64 draws from [0, 1) with 52 random bits.
func (r *PRNG) Float64() float64 {
	return math.Ldexp(float64(r.Uint64()>>12), -52)
}

// random is pgbench's random(lo, hi).
func (r *PRNG) random(lo, hi int64) (int64, error) {
	if hi < lo {
		return 0, errorf("empty range given to random")
	}
	if hi-lo < 0 || hi-lo+1 < 0 {
		return 0, errorf("random range is too large")
	}
	return lo + int64(r.rangeU64(0, uint64(hi-lo))), nil
}

// exponential is random_exponential(lo, hi, param).
func (r *PRNG) exponential(lo, hi int64, param float64) (int64, error) {
	if err := checkRange(lo, hi); err != nil {
		return 0, err
	}
	if param <= 0 {
		return 0, errorf("exponential parameter must be greater than zero (not %s)", cFixed(param))
	}
	cut := math.Exp(-param)
	u := 1.0 - r.Float64()
	v := -math.Log(cut+(1.0-cut)*u) / param
	return lo + int64(float64(hi-lo+1)*v), nil
}

// minGaussian is the least parameter random_gaussian accepts.
const minGaussian = 2.0

// gaussian is random_gaussian(lo, hi, param): Box-Muller draws, rejected outside
// [-param, param).
func (r *PRNG) gaussian(lo, hi int64, param float64) (int64, error) {
	if err := checkRange(lo, hi); err != nil {
		return 0, err
	}
	if param < minGaussian {
		return 0, errorf("gaussian parameter must be at least %f (not %s)", minGaussian, cFixed(param))
	}
	var stdev float64
	for {
		u1 := 1.0 - r.Float64()
		u2 := 1.0 - r.Float64()
		stdev = math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
		if stdev >= -param && stdev < param {
			break
		}
	}
	v := (stdev + param) / (param * 2.0)
	return lo + int64(float64(hi-lo+1)*v), nil
}

// The parameter range of random_zipfian.
const (
	minZipf = 1.001
	maxZipf = 1000.0
)

// zipfian is random_zipfian(lo, hi, s), by rejection sampling.
func (r *PRNG) zipfian(lo, hi int64, s float64) (int64, error) {
	if err := checkRange(lo, hi); err != nil {
		return 0, err
	}
	if s < minZipf || s > maxZipf {
		return 0, errorf("zipfian parameter must be in range [%.3f, %.0f] (not %s)", minZipf, maxZipf, cFixed(s))
	}
	if hi == lo {
		return lo, nil // one value: no draw
	}
	n := float64(hi - lo + 1)
	b := math.Pow(2.0, s-1.0)
	var x float64
	for {
		u := r.Float64()
		v := r.Float64()
		x = math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= n {
			break
		}
	}
	return lo - 1 + int64(x), nil
}

func checkRange(lo, hi int64) error {
	if hi < lo {
		return errorf("empty range given to random")
	}
	if hi-lo < 0 || hi-lo+1 < 0 {
		return errorf("random range is too large")
	}
	return nil
}

// Seeder derives a run's generators from its --random-seed as pgbench does: a base
// generator seeded with it gives, in this order, one state per client (Next), the
// value of :default_seed (Uint64), and per thread the states that choose scripts,
// schedule --rate arrivals and sample the log.
type Seeder struct{ base PRNG }

// NewSeeder starts the derivation from seed.
func NewSeeder(seed uint64) *Seeder {
	s := &Seeder{}
	s.base.Seed(seed)
	return s
}

// Next is a generator seeded with the base's next draw.
func (s *Seeder) Next() PRNG {
	var r PRNG
	r.Seed(s.base.Uint64())
	return r
}

// Uint64 is the base's next draw.
func (s *Seeder) Uint64() uint64 { return s.base.Uint64() }
