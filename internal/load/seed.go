package load

// Mix is splitmix64's finalizer: it spreads every input bit over the output, so
// that generators seeded with nearby values (table, warehouse, row) produce
// unrelated streams. Loaders use it to derive each batch's seed from its position,
// which lets any worker generate any batch.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
