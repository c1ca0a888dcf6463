package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/metrics"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Spec is one run: where, what, with which settings, and how it is spread over
// shards. Env is where it runs: the results store, the output and the clock.
// Validate checks it whole.
type Spec struct {
	Target   *target.Target
	Workload Workload
	Settings
	Labels map[string]string
	// AbortOnLost stops a client whose connection is lost, as pgbench does,
	// rather than reconnect.
	AbortOnLost bool
	// Faults are done to the target during the run; a run with faults measures
	// the recovery from each (internal/recovery) and is kept out of steady-state
	// comparisons.
	Faults []Fault
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
}

// Env is what a run is given by whoever runs it, beside its spec.
type Env struct {
	// OpenStore opens the results store the run is written to, once the target
	// and its data were found fit.
	OpenStore func(ctx context.Context) (*store.Store, error)
	// Progress is how often a progress line goes to Out (0: none); Log takes
	// the notices and warnings for people. Both may be nil.
	Progress time.Duration
	Out, Log io.Writer
	// Clock is the time; nil is time.Now.
	Clock func() time.Time
	// Injector does the faults of kinds other than command to the target; nil
	// when it is not a server pgbakeoff runs.
	Injector Injector
	// Metrics serves the run's figures live to Prometheus; nil serves none.
	Metrics *metrics.Server
}

// Now is the environment's clock.
func (e *Env) Now() time.Time {
	if e.Clock != nil {
		return e.Clock()
	}
	return time.Now()
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

// NewSpec is a run with DefaultSettings, not sharded.
func NewSpec() Spec {
	return Spec{Settings: DefaultSettings(), ShardTimeout: 5 * time.Minute}
}

// OwnSessions is how many sessions pgbakeoff opens on the target besides the
// clients': the control session and the sampler's (target.MonitorConns), and
// with faults the ledger's (recovery.Ledger), which the preflight counts.
func (s *Spec) OwnSessions() int {
	if len(s.Faults) > 0 {
		return target.MonitorConns + 1
	}
	return target.MonitorConns
}

// Validate checks the run's settings, its shard and the workload's options; its
// errors name what is wrong as FieldErrors where one field is. Run also needs
// Target and Workload.
func (s *Spec) Validate() error {
	if err := s.Settings.Validate(); err != nil {
		return err
	}
	for _, f := range s.Faults {
		if err := f.Check(&s.Settings); err != nil {
			return err
		}
	}
	switch {
	case s.Shard.On() && len(s.Faults) > 0:
		return FieldErrorf("fault", "cannot be done in a run spread over shards: each shard would do it; run the fault from one process")
	case s.Shard.On() && s.StartAt.IsZero() && s.ShardGroup == "":
		return FieldErrorf("shard", "needs --start-at, the instant every shard begins (as 2026-01-02T15:04:05Z), or a --shard-group the shards share, to meet in the results store")
	case s.Shard.On() && s.StartAt.IsZero() && s.ShardTimeout <= 0:
		return FieldErrorf("shard_timeout", "must be positive, got %s", s.ShardTimeout)
	case s.Shard.On() && s.Clients < s.Shard.Count:
		return FieldErrorf("clients", "%d is fewer than the %d shards: each shard runs at least one client", s.Clients, s.Shard.Count)
	case s.Shard.On() && s.Transactions > 0:
		return FieldErrorf("shard", "runs a window of --duration on every shard: leave --transactions out")
	}
	if s.Workload != nil {
		return s.Workload.Check(s)
	}
	return nil
}

// ThreadChooser is a workload whose clients are best served by a thread each when
// ThreadPerClient says so (scripts that only read), unless the settings choose.
type ThreadChooser interface {
	ThreadPerClient() bool
}

// ThreadClients is how many clients at most a workload that prefers a thread per
// client gets one by default: four a core.
func ThreadClients() int { return min(driver.MaxThreadClients, 4*runtime.NumCPU()) }

// Threaded is the ThreadPerClient switch resolved: auto gives each client
// a thread when the workload prefers it and the clients are at most
// ThreadClients. A thread per client pays for transactions that only read and
// few clients; where they write, each commit waits for its WAL flush, and beyond
// a few clients a core, event loops were faster (docs/performance.md).
func (s *Spec) Threaded() bool {
	if s.ThreadPerClient != Auto {
		return s.ThreadPerClient == On
	}
	tc, ok := s.Workload.(ThreadChooser)
	return ok && tc.ThreadPerClient() && s.Clients <= ThreadClients()
}

// ErrInterrupted means the run was stopped early by its context; what was
// measured is stored.
var ErrInterrupted = errors.New("interrupted")
