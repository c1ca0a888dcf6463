// Package engine makes one benchmark run: the command line, studies and the demo
// all describe a run as a Spec (what to run, with the common Settings) and hand it
// to Run with an Env (where: the results store, the output, the clock).
//
//	spec := engine.NewSpec() // the defaults every caller shares
//	spec.Target, spec.Workload, spec.Clients = t, tpcb.Workload{}.NewRun(), 16
//	open := func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, "results.db") }
//	sum, err := engine.Run(ctx, spec, engine.Env{OpenStore: open, Log: os.Stderr})
//	if sum != nil {
//		sum.WriteText(os.Stdout) // also when err says the run ended early
//	}
//
// Run checks the target before anything is sent (reachability, version,
// connection slots, the workload's data), reads the server's counters around
// the run once they have settled and samples the server during it, runs the
// clients (internal/driver) through the warm-up and the measured window,
// writes every interval, sample and histogram to the results store as they
// come, and judges the run's validity: a server that restarted or did not come
// back, a failover, a CPU-bound client, errors, dips, other sessions' work in
// the database. A Workload (internal/workload) adds its scripts, built once its
// data was found, and its own Figures (TPC-C's NOPM, sysbench's query counts) to
// the Summary.
//
// The Summary is the result model that `run --json`, `show`, `compare`, export
// and the reports read: stored as JSON with each run, it is versioned with the
// results store's schema (store.Open refuses a store from a newer pgbakeoff),
// and workload.ReadSummary reads it back with its workload's figures. As
// printed, its JSON is SchemaVersion's, whose JSON Schema internal/schema makes.
package engine
