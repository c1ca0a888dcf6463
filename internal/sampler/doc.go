// Package sampler reads PostgreSQL's own statistics around and during a run.
//
// Around a run, a Control session reads the counters of pg_stat_database,
// counting its own transactions so that they can be left out, and waits until
// the benchmark's sessions have gone and every count they made is in:
//
//	ctl, err := sampler.NewControl(ctx, t.Connect)
//	before, err := ctl.Settled(ctx, 3*time.Second)  // pg_stat_database of the current database
//	...
//	err = ctl.WaitGone(ctx, appName, res.PIDs, 30*time.Second)  // the benchmark's and the sampler's sessions
//	after, err := ctl.Settled(ctx, 3*time.Second)
//	commits := after.Commits(s.Commits()) - before.Commits(0)
//
// During a run, a Sampler reads the server's cumulative statistics once a
// second, with the views and columns of its major version, and turns them into
// rates; for a server on this machine it also reads the CPU time of the
// server's processes and the counters of the disk holding its data, and with a
// node_exporter those of the server's host. Ten times a second it notes what
// the benchmark's active sessions are waiting on:
//
//	s, err := sampler.Start(ctx, sampler.Config{
//		Connect:  monitor.Connect, // opens a session to the benchmark's database
//		AppName:  appName,         // the benchmark sessions' application_name
//		Local:    &sampler.Local{PostmasterPID: srv.PID, DataDir: srv.DataDir},
//		OnSample: func(sm sampler.Sample) {
//			fmt.Printf("%.0f commits/s, %.0f%% on CPU\n", sm.Values["commits"], 100*sm.Waits["CPU"])
//		},
//	})
//	if err != nil {
//		return err
//	}
//	... run the benchmark ...
//	res := s.Stop()
//	if res.Restarted || res.Crashed {
//		... the server restarted, or crashed and recovered, during the run ...
//	}
//
// A crash and recovery keeps the postmaster and its start time but resets the
// statistics: each reading carries its Epoch (the postmaster's start, when the
// shared and the database's statistics were last reset), and is compared with
// the last reading that succeeded, however many failed while the server was
// down. Counters of two epochs are never compared.
//
// Sampling problems (a query that failed, a connection lost while the server
// restarts, a view the monitoring user may not read) never stop a run: the
// sampler notes them in Result.Errors, opens a new connection when one is
// lost, and tries again at the next interval.
package sampler
