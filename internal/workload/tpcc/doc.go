// Package tpcc is TPC-C as HammerDB's TPROC-C runs it on PostgreSQL: HammerDB's nine
// tables and key names, the initial population of clause 4.3 generated
// deterministically from a seed, the five transactions of clause 2 both as PL/pgSQL
// functions (server mode, one round trip each) and as client-side prepared statements,
// and the consistency conditions of clause 3.3.2.
//
//	phases, err := tpcc.Load(ctx, connect, tpcc.LoadOptions{Warehouses: 10, Sharding: load.Sharding{Workers: 2}}, progress)
//	scripts, err := tpcc.Scripts(tpcc.RunOptions{Warehouses: 10, Mode: tpcc.ModeServer})
//	report, err := tpcc.Check(ctx, conn) // report.Note() says how the data was checked
package tpcc
