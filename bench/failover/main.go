// Command failover fails a local primary over to its standby, run after run, with
// TPC-B clients working through it, asynchronous and synchronous in turn, and
// prints per failover the clients' time without commits, when the clients'
// commits resumed and when the server accepted writes again (from the promoted
// standby's log), both from the fault, their difference (what pgbakeoff's
// clients add: noticing the loss and reconnecting), and the acknowledged commits
// the ledger found lost.
//
//	go run ./bench/failover [-rounds 10] [-clients 8] [-duration 12s] [-at 4s]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localfault"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

type options struct {
	rounds, clients int
	duration, at    time.Duration
	version         string
}

func run() error {
	var o options
	flag.IntVar(&o.rounds, "rounds", 10, "failovers of each mode")
	flag.IntVar(&o.clients, "clients", 8, "TPC-B clients")
	flag.DurationVar(&o.duration, "duration", 12*time.Second, "each run's window")
	flag.DurationVar(&o.at, "at", 4*time.Second, "when the failover is done, from the run's start")
	flag.StringVar(&o.version, "version", "16", "PostgreSQL major version")
	flag.Parse()
	ctx := context.Background()
	bin, install, dir, cleanup, err := benchkit.SetupInstall(ctx, o.version)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Printf("PostgreSQL %s, a primary and one standby, TPC-B scale 10, %d clients, a failover %s into each %s run\n\n",
		install.Version, o.clients, o.at, o.duration)
	for _, sync := range []string{localpg.SyncOff, localpg.SyncOn} {
		if err := mode(ctx, o, bin, install, filepath.Join(dir, "cluster-"+sync), sync); err != nil {
			return err
		}
	}
	return nil
}

// mode makes o.rounds failovers of a cluster of one synchronous mode.
func mode(ctx context.Context, o options, bin string, install *localpg.Install, dir, sync string) error {
	c, tg, stop, err := benchkit.TPCBCluster(ctx, bin, dir, 10, localpg.ClusterOptions{Standbys: 1, Synchronous: sync,
		Options: localpg.Options{Name: "ha", Install: install}})
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("synchronous %s\n%5s %12s %14s %14s %12s %8s %9s\n", sync, "round", "no commits", "commits again", "server ready", "difference", "lost", "in doubt")
	var diffs []float64
	lostRounds := 0
	for i := range o.rounds {
		f, err := failover(ctx, o, c, tg, filepath.Join(dir, "results.db"))
		if err != nil {
			return err
		}
		ready := *f.ServerReadyMs
		diffs = append(diffs, f.ResumedMs-ready)
		if f.Ledger.Lost > 0 {
			lostRounds++
		}
		fmt.Printf("%5d %9.0f ms %11.0f ms %11.0f ms %9.0f ms %8d %9d\n", i+1, f.NoCommitsMs, f.ResumedMs, ready, f.ResumedMs-ready, f.Ledger.Lost, f.Ledger.InDoubt+f.Ledger.Unknown)
	}
	fmt.Printf("median difference %.0f ms; rounds that lost acknowledged commits: %d of %d\n\n", benchkit.Median(diffs), lostRounds, o.rounds)
	return nil
}

// failover makes one run with a failover and gives what it measured of it.
func failover(ctx context.Context, o options, c *localpg.Cluster, tg *target.Target, results string) (engine.FaultSummary, error) {
	spec := engine.NewSpec()
	spec.Target, spec.Workload, spec.Clients = tg, tpcb.Workload{}.NewRun(), o.clients
	spec.Duration, spec.OutageTimeout = o.duration, time.Minute
	spec.Faults = []engine.Fault{{At: o.at, Kind: engine.FaultFailover}}
	env := engine.Env{Injector: localfault.Injector{Cluster: c}, Out: io.Discard, Log: io.Discard,
		OpenStore: func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, results) }}
	sum, err := engine.Run(ctx, spec, env)
	if err != nil {
		return engine.FaultSummary{}, err
	}
	f := sum.Faults[0]
	if !f.Done || f.Error != "" || f.ServerReadyMs == nil || f.Ledger == nil {
		return f, fmt.Errorf("the failover was not done or not measured: %+v", f)
	}
	return f, nil
}
