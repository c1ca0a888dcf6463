// Package keydist draws keys from [lo, hi] with the access distributions of sysbench
// and pgbench, so every workload can skew its keys the same way and results can be
// compared with runs of those tools.
//
// A distribution is written as a name and optional parameters separated by colons;
// Spec.String gives every parameter, so a stored spec means the same thing if the
// defaults change:
//
//	uniform                     every key equally likely
//	gaussian[:iter]             sysbench gaussian; iter defaults to 12
//	special[:iter[:pct[:res]]]  sysbench special; defaults 12, 1, 75
//	pareto[:h]                  sysbench pareto; h in (0, 1), default 0.2
//	zipfian[:exp]               sysbench zipfian; exp in [0, 1000], default 0.8
//	exponential:p               pgbench random_exponential; p > 0, required
//	pgbench-gaussian:p          pgbench random_gaussian; p >= 2, required
//
// The sysbench names and parameters are its --rand-type and --rand-spec-iter,
// --rand-spec-pct, --rand-spec-res, --rand-pareto-h and --rand-zipfian-exp (src/sb_rand.c).
// The pgbench ones are its script functions (doc/src/sgml/ref/pgbench.sgml and
// src/bin/pgbench/pgbench.c). pgbench's random_zipfian(lb, ub, s) draws from the same
// distribution as zipfian:s; s in [1.001, 1000] as there.
//
// A Dist is built once per distribution and range, holds no mutable state, and may
// be shared by goroutines; each caller brings its own random source, and a draw does
// not allocate:
//
//	spec, err := keydist.Parse("zipfian:1.1")
//	d, err := keydist.New(spec, 1, 100000*scale)
//	rng := rand.NewPCG(seed, uint64(client))
//	aid := d.Draw(rng)
package keydist
