// Package driver runs a workload's clients against PostgreSQL and measures them.
//
// A workload says what a client sends and the driver owns how: a Script is either
// Commands, statements whose parameters are Vars drawn afresh for each transaction, a
// Program, Go code that runs the script's prepared Statements through a Session, or
// Steps, the same written as a state machine (steps.go); each client picks the script
// of its next transaction by Weight. Each client's connection is set up by pgx
// (connect.go) and then taken over by wire, which speaks the protocol without
// allocating. Clients run on event loops, a few threads that each wait in epoll for
// any of their clients' answers (evloop_linux.go): a client of statements or of Steps
// as a small state the loop steps through; a Program's, one that pauses, or one of an
// open-loop run as a coroutine (coro.go). A connection per transaction, TLS and a few
// others share GOMAXPROCS threads through Go's network poller (poller_linux.go),
// or with Config.ThreadPerClient each has a thread that
// sleeps in the kernel until its server answers (thread_linux.go); elsewhere than
// Linux all wait through the poller (transport_other.go). Each client records
// latencies into its own histogram, and once per Config.Interval the runner merges
// them into the interval reported to Config.OnInterval and the run's totals; only
// transactions that end inside the measurement window count in the Result. A client
// whose connection is lost counts its transaction as failed, connects again with
// jittered backoff, and records the time without a connection as an Outage; when no
// client has had a connection for Config.OutageTimeout, the run ends as Incomplete.
//
//	res, err := driver.Run(ctx, driver.Config{
//		Target:   tgt,
//		Scripts:  []*driver.Script{{Name: "select", Weight: 1, Commands: cmds, Vars: vars}},
//		Clients:  8,
//		Duration: time.Minute,
//	})
package driver
