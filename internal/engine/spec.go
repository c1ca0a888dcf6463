package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Spec is one run: where, what, how many clients, for how long, and what to do
// about faults. NewSpec gives its defaults, which the command line's flags and
// studies share; Validate checks it whole.
type Spec struct {
	Target   *target.Target
	Workload Workload
	Clients  int
	// Jobs is how many event loops the clients share, as pgbench -j's threads;
	// 0 (auto) adds loops while they are busy (driver.Config.Loops).
	Jobs int
	// ThreadPerClient gives each client a thread of its own that waits in the
	// kernel for its answers (driver.Config.ThreadPerClient).
	ThreadPerClient bool
	Protocol        driver.Protocol
	Warmup          time.Duration // run before measuring, not counted
	Duration        time.Duration // the measured window, unless Transactions is set
	Transactions    int           // per client, instead of Duration
	MaxTries        int           // tries per transaction on serialization failure or deadlock
	ExitOnAbort     bool          // end the run when a client stops on a script error
	AbortOnLost     bool          // stop a client whose connection is lost, as pgbench does, rather than reconnect
	ConnectPerTx    bool          // a new connection for each transaction (pgbench -C)
	// Rate (transactions a second, all clients together) runs open-loop, as
	// pgbench -R; 0 is closed-loop. LatencyLimit counts late transactions and,
	// with a rate, skips those that cannot begin within it (pgbench -L).
	Rate         float64
	LatencyLimit time.Duration
	Seed         uint64 // 0: from the clock, unless SeedGiven
	SeedGiven    bool   // Seed was chosen, even 0 (pgbench --random-seed=0)
	Labels       map[string]string
	// Faults: how long the server may stay away, how long a transaction and a
	// connect may take (0: never), and whether to resolve the host once.
	OutageTimeout  time.Duration
	TxTimeout      time.Duration
	ConnectTimeout time.Duration
	ResolveOnce    bool
	// Anonymize leaves the client machine's hostname out of what is stored.
	Anonymize bool
	// Shard, when set, makes this process one shard of a run spread over several
	// (on other machines, or pods): it runs its share of the clients and of Rate,
	// numbered as in one process, from StartAt, the instant every shard begins.
	// ShardGroup names the whole run, the same in every shard ("": the workload
	// and StartAt). Shard 0 alone reads and samples the server.
	Shard      Shard
	StartAt    time.Time
	ShardGroup string
	// ShardTimeout, without StartAt, is how long a shard waits in the results store
	// for the others to arrive before the run fails.
	ShardTimeout time.Duration
	// Local is the server's process and data directory when it runs on this
	// machine; NodeExporter a node_exporter to read the server machine from.
	Local        *sampler.Local
	NodeExporter string

	// OpenStore opens the results store the run is written to, once the target
	// and its data were found fit.
	OpenStore func(ctx context.Context) (*store.Store, error)
	// Progress is how often a progress line goes to Out (0: none); Log takes
	// the notices and warnings for people. Both may be nil.
	Progress time.Duration
	Out, Log io.Writer
	// In is standard input, which a pgbench script file named - is read from
	// (nil: there is none, as in a study).
	In io.Reader
	// Clock is the time; nil is time.Now.
	Clock func() time.Time
}

// Shard is shard Index (from 0) of Count; the zero Shard is a whole run.
type Shard struct{ Index, Count int }

// On tells whether the run is sharded.
func (s Shard) On() bool { return s.Count > 0 }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Clients is the shard's share of all clients: its first client's number and
// how many it runs.
func (s Shard) Clients(all int) (first, n int) {
	if !s.On() {
		return 0, all
	}
	first = s.Index * all / s.Count
	return first, (s.Index+1)*all/s.Count - first
}

// share is this process's part of the run: its first client's number, its
// clients, and its share of Rate (a Poisson process split by client is Poisson).
func (s *Spec) share() (first, clients int, rate float64) {
	first, clients = s.Shard.Clients(s.Clients)
	rate = s.Rate
	if s.Shard.On() {
		rate = s.Rate * float64(clients) / float64(s.Clients)
	}
	return first, clients, rate
}

// MaxShards is the most shards a run may be spread over.
const MaxShards = 1000

// ParseShard reads --shard i/N.
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(v, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || count < 1 || count > MaxShards || index < 0 || index >= count {
		return Shard{}, fmt.Errorf("--shard %q: give this process's index from 0 and the number of shards, as 2/4 (up to %d shards)", v, MaxShards)
	}
	return Shard{index, count}, nil
}

// Group is the name of the whole run a shard is part of: ShardGroup, or the
// workload and the start instant, which every shard of one run shares.
func (s *Spec) Group() string {
	if s.ShardGroup != "" {
		return s.ShardGroup
	}
	name := ""
	if s.Workload != nil {
		name = s.Workload.Name()
	}
	return name + "@" + s.StartAt.UTC().Format(time.RFC3339Nano)
}

// MaxClients is the most clients a run may have.
const MaxClients = 100000

// MaxJobs is the most client threads a run may have: four a core of this
// machine, beyond which more threads only share the same cores.
func MaxJobs() int { return 4 * runtime.NumCPU() }

// NewSpec is a run with the defaults: one client, on as many event loops as keep
// up (--jobs auto), for 60 s, prepared
// statements, no retries, a server away for 2 minutes ending the run.
func NewSpec() Spec {
	return Spec{Clients: 1, Protocol: driver.Prepared, Duration: 60 * time.Second, MaxTries: 1,
		OutageTimeout: 2 * time.Minute, TxTimeout: time.Minute, ConnectTimeout: 10 * time.Second, ShardTimeout: 5 * time.Minute}
}

// Validate checks the run's settings and the workload's options; its messages
// name the command line's flags. Run also needs Target, Workload and OpenStore.
func (s *Spec) Validate() error {
	if err := driver.CheckThreads(s.ThreadPerClient, s.Clients); err != nil {
		return err
	}
	switch {
	case s.Clients < 1:
		return fmt.Errorf("--clients must be at least 1, got %d", s.Clients)
	case s.Clients > MaxClients:
		return fmt.Errorf("--clients %d is more than pgbakeoff supports (%d)", s.Clients, MaxClients)
	case s.Jobs < 0:
		return fmt.Errorf("--jobs must be auto or at least 1, got %d", s.Jobs)
	case s.Jobs > MaxJobs():
		return fmt.Errorf("--jobs %d is more client threads than this machine's %d cores can use (at most %d)", s.Jobs, runtime.NumCPU(), MaxJobs())
	case s.Transactions < 0:
		return fmt.Errorf("--transactions must be positive, got %d", s.Transactions)
	case s.Transactions == 0 && s.Duration <= 0:
		return fmt.Errorf("--duration must be positive, got %s", s.Duration)
	case s.Warmup < 0:
		return fmt.Errorf("--warmup must not be negative, got %s", s.Warmup)
	case s.Progress < 0:
		return fmt.Errorf("--progress must not be negative, got %s", s.Progress)
	case s.OutageTimeout < 0 || s.TxTimeout < 0 || s.ConnectTimeout < 0:
		return fmt.Errorf("--outage-timeout, --tx-timeout and --connect-timeout must not be negative")
	case s.MaxTries < 1:
		return fmt.Errorf("--max-tries must be at least 1, got %d", s.MaxTries)
	case s.Rate < 0 || s.Rate > 0 && s.Rate < driver.MinRate || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
		return fmt.Errorf("--rate must be a number of transactions a second from %g (one every %s), got %g", driver.MinRate, time.Duration(float64(time.Second)/driver.MinRate), s.Rate)
	case s.LatencyLimit < 0:
		return fmt.Errorf("--latency-limit must not be negative, got %s", s.LatencyLimit)
	case s.Shard.On() && s.StartAt.IsZero() && s.ShardGroup == "":
		return fmt.Errorf("--shard needs --start-at, the instant every shard begins (as 2026-01-02T15:04:05Z), or a --shard-group the shards share, to meet in the results store")
	case s.Shard.On() && s.StartAt.IsZero() && s.ShardTimeout <= 0:
		return fmt.Errorf("--shard-timeout must be positive, got %s", s.ShardTimeout)
	case s.Shard.On() && s.Clients < s.Shard.Count:
		return fmt.Errorf("--clients %d is fewer than the %d shards: each shard runs at least one client", s.Clients, s.Shard.Count)
	case s.Shard.On() && s.Transactions > 0:
		return fmt.Errorf("--shard runs a window of --duration on every shard: leave --transactions out")
	}
	if s.Workload != nil {
		return s.Workload.Check(s)
	}
	return nil
}

// Now is the spec's clock.
func (s *Spec) Now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// UsageError marks a spec that cannot run as given.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// ErrInterrupted means the run was stopped early by its context; what was
// measured is stored.
var ErrInterrupted = errors.New("interrupted")
