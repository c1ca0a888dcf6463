package pgbscript

import "math/bits"

// The hash functions and permute of pgbench's expressions, with its constants, so
// that a script draws the same keys under pgbakeoff as under pgbench.

const (
	fnvPrime      = 0x100000001b3
	fnvOffsetBase = 0xcbf29ce484222325
	mm2Mul        = 0xc6a4a7935bd1e995
	mm2MulTimes8  = 0x35253c9ade8f4ca8 // mm2Mul * 8, the length of the hashed key
	mm2Rot        = 47
)

// hashFNV1a is FNV-1a over the eight bytes of v, least significant first.
func hashFNV1a(v int64, seed uint64) int64 {
	h := uint64(fnvOffsetBase) ^ seed
	for i := 0; i < 8; i++ {
		h ^= uint64(v) >> (8 * i) & 0xff
		h *= fnvPrime
	}
	return int64(h)
}

// hashMurmur2 is MurmurHash64A of the eight bytes of v.
func hashMurmur2(v int64, seed uint64) int64 {
	h := seed ^ mm2MulTimes8
	k := uint64(v) * mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	h ^= k
	h *= mm2Mul
	h ^= h >> mm2Rot
	h *= mm2Mul
	h ^= h >> mm2Rot
	return int64(h)
}

// permute maps v to its place in a pseudo-random permutation of [0, size) chosen by
// seed: six rounds, each a multiply by an odd number, an XOR and a one-bit rotation
// on the lower and on the upper part of the range (which overlap when size is not a
// power of two), then a random offset modulo size. The draws come from a PRNG seeded
// with seed, so the permutation is the same wherever it is computed.
func permute(v, size, seed int64) (int64, error) {
	if size <= 0 {
		return 0, errorf("permute size parameter must be greater than zero")
	}
	if size < 2 {
		return 0, nil
	}
	var r PRNG
	r.Seed(uint64(seed))
	n := uint64(size)
	x := uint64(v) % n
	bitsLen := uint(63 - bits.LeadingZeros64(n)) // the largest power of two <= n is 1<<bitsLen
	mask := uint64(1)<<bitsLen - 1
	rotate := func(t, m, xr uint64) uint64 {
		t = (t*m ^ xr) & mask
		return (t<<1)&mask | t>>(bitsLen-1)
	}
	for round := 0; round < 6; round++ {
		m := r.Uint64()&mask | 1
		xr := r.Uint64() & mask
		if x <= mask {
			x = rotate(x, m, xr)
		}
		m = r.Uint64()&mask | 1
		xr = r.Uint64() & mask
		if t := n - 1 - x; t <= mask {
			x = n - 1 - rotate(t, m, xr)
		}
		x = (x + r.rangeU64(0, n-1)) % n
	}
	return int64(x), nil
}
