// Package tpcb is pgbench's TPC-B-like workload: the same four tables, the same data,
// and the same three builtin scripts, so a database loaded by `pgbench -i` runs here
// and one loaded here runs under pgbench.
//
//	opt := tpcb.LoadOptions{Scale: 10, Sharding: load.Sharding{Workers: 2}}
//	err := tpcb.Load(ctx, connect, opt, progress)
//	scale, err := tpcb.DetectScale(ctx, conn)
package tpcb
