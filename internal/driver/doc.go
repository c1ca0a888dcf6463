// Package driver runs a workload's clients against PostgreSQL and measures them.
//
// A workload says what a client sends and the driver owns how. A Script is Commands,
// statements whose parameters are Vars drawn afresh for each transaction; a Program,
// Go code that runs the script's prepared Statements through a Session; or Steps, the
// same written as a state machine (steps.go). Each client picks the script of its
// next transaction by Weight, and runs every script as Steps: Commands through
// commands, a Program through program (coro.go).
//
// A transaction takes one path, whatever waits for it (tx.go). Each step returns what
// the client waits for next, a want, and its transport calls the next step once that
// is there:
//
//	next ─► arrive ─► ready ─► begin ─► attempt ─► Steps.Start ─┐
//	  ▲     (arrival) (connect, keying)                          │
//	  │                                                          ▼
//	  │           answered ◄── wantAnswer / wantPause ◄──── step ◄── Steps.Resume
//	  │              │                                       │ Finished
//	  │              ▼                                       ▼
//	  │        lose ◄─ lost ─ settle ◄── ROLLBACK, if the ── over
//	  │         │              │ │ │       block failed
//	  │  wantConnect        retry │ Abort ─► wantEnd
//	  │         ▼                 ▼
//	  └─ after (lag, think) ◄── connected / committed, failed, rolled back
//
// Two transports wait: an event loop (evloop_linux.go), a thread that waits in epoll
// for the answers, pauses and arrivals of many clients, as pgbench's -j threads do;
// and drive (tx.go), which waits for one client's in place on a goroutine of its own,
// through Go's network poller or, with Config.ThreadPerClient, sleeping in the kernel
// on a thread of its own (thread.go). Each connection is set up by pgx (connect.go)
// and then taken over by a pgwire.Conn, which speaks the protocol without
// allocating, for every transport.
//
// Each client records latencies into its own histogram, and once per Config.Interval
// the runner merges them into the interval reported to Config.OnInterval and the
// run's totals; only transactions that end inside the measurement window count in
// the Result. A client whose connection is lost counts its transaction as failed,
// connects again with jittered backoff, and records the time without a connection as
// an Outage (in an outage.Book, with the cause connfail gives); when no client has had
// a connection for Config.OutageTimeout, the run ends as Incomplete. With Config.Rate
// the transactions arrive on a pacing.Schedule, which the clients share.
//
//	res, err := driver.Run(ctx, driver.Config{
//		Target:   tgt,
//		Scripts:  []*driver.Script{{Name: "select", Weight: 1, Commands: cmds, Vars: vars}},
//		Clients:  8,
//		Duration: time.Minute,
//	})
package driver
