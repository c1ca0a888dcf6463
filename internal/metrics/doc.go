// Package metrics serves a process's live figures to Prometheus: each run's
// throughput, latency histograms, failures by SQLSTATE, retries, reconnections,
// outages and open-loop lag, the server's samples, a load's progress and a
// study's. It is fed from what the driver and the sampler already hand over once
// a tick or a sample, so clients do no work of their own for it.
//
//	srv, err := metrics.Listen(":9187") // before anything runs: a port in use fails here
//	defer srv.Close()
//	run := srv.Run(metrics.RunLabels{Target: "db1", Workload: "tpcb", Clients: 8}, []string{"tpcb"})
//	run.Interval(iv) // from driver.Config.OnInterval
//	run.End()        // the final values stay until the process exits
//
// Every figure's labels are the run's target name, workload, clients and shard,
// never a DSN or a password; docs/metrics.md lists them.
package metrics
