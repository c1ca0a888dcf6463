package engine

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Summary is a run's result as `run --json` and `show --json` print it.
type Summary struct {
	// SchemaVersion is the version of the JSON the summary is written in
	// (SchemaVersion; `pgbakeoff schema run`): MarshalJSON sets it, so a summary
	// stored by an older pgbakeoff is shown in the current one.
	SchemaVersion int `json:"schema_version"`

	RunID        int64             `json:"run_id"`
	Workload     string            `json:"workload"`
	Script       string            `json:"script"`
	Target       string            `json:"target"`
	Address      string            `json:"address"`
	Protocol     string            `json:"protocol"`
	Scale        int               `json:"scale"`
	Clients      int               `json:"clients"`
	Status       string            `json:"status"`
	Started      time.Time         `json:"started"`
	WarmupS      float64           `json:"warmup_s"`
	DurationS    float64           `json:"duration_s"`
	Transactions int64             `json:"transactions"`
	TPS          float64           `json:"tps"`
	LatencyMs    histogram.Summary `json:"latency_ms"`
	Failed       int64             `json:"failed"`
	Retried      int64             `json:"retried"`
	Retries      int64             `json:"retries"`
	CommitsTotal int64             `json:"commits_total"`
	Server       serverSummary     `json:"server"`
	ClientCPUS   float64           `json:"client_cpu_s"`
	ClientCPU    clientCPU         `json:"client_cpu"`
	Scripts      []scriptSummary   `json:"scripts"`
	Errors       []errorSummary    `json:"errors,omitempty"`
	Reconnects   int               `json:"reconnects"`
	// With --connect: the connections the clients opened and closed between
	// transactions, and what each took, connecting and disconnecting.
	Connections  int64   `json:"connections,omitempty"`
	ConnectAvgMs float64 `json:"connect_avg_ms,omitempty"`
	// Rate is an open-loop run's (--rate) figures, and a latency limit's.
	Rate *rateSummary `json:"rate,omitempty"`
	// OutageS is the wall time during which at least one client had lost its
	// connection: the union of their outages, in a merged run of every shard's;
	// Outages says when each was lost, why and for how long.
	OutageS float64         `json:"outage_s"`
	Outages []outageSummary `json:"outages,omitempty"`
	// Faults are those done during the run (Spec.Faults), each with the
	// recovery it took.
	Faults        []FaultSummary      `json:"faults,omitempty"`
	ConnectErrors []connectErrSummary `json:"connect_errors,omitempty"`
	// Address is where the clients connected (the address resolved once, with
	// --resolve-once).
	ClientAddress string            `json:"client_address,omitempty"`
	Warnings      []string          `json:"warnings,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	// Flags say why the run is not to be trusted (invalid) or deserves a note.
	Flags   []Flag `json:"flags,omitempty"`
	Dataset fit    `json:"dataset"`
	// Figures are the workload's own, when it has any; their fields are at the
	// top level of the JSON, before client_machine (MarshalJSON).
	Figures Figures `json:"-"`
	// ClientMachine is the machine that ran the benchmark's clients.
	ClientMachine *machine.Machine `json:"client_machine,omitempty"`
	// latency is the window's latency histogram, all scripts, for LatencyAt;
	// nil in a summary read back from the store.
	latency *hdrhistogram.Histogram
}

// SetLatency gives a summary read back from the store its window's latency
// histogram (store.RunDetail.WindowLatency), for LatencyAt.
func (s *Summary) SetLatency(h *hdrhistogram.Histogram) { s.latency = h }

// LatencyAt is the window's latency at quantile q (0-100) in milliseconds, for
// any percentile an objective names; false when the summary has no histogram
// (read back from the store) or no transaction.
func (s *Summary) LatencyAt(q float64) (float64, bool) {
	if s.latency == nil || s.latency.TotalCount() == 0 {
		return 0, false
	}
	return float64(s.latency.ValueAtQuantile(q)) / 1000, true
}

type outageSummary struct {
	Client    int       `json:"client"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Seconds   float64   `json:"seconds"`
	Cause     string    `json:"cause"`
	Error     string    `json:"error,omitempty"`
	Attempts  int       `json:"attempts"`
	FailedTx  int       `json:"failed_tx"`
	Recovered bool      `json:"recovered"`
}

type connectErrSummary struct {
	Cause   string `json:"cause"`
	Count   int64  `json:"count"`
	Example string `json:"example,omitempty"`
}

type serverSummary struct {
	Version string `json:"version"`
	// TLS is the protocol version and cipher of the control connection, "" without TLS.
	TLS string `json:"tls,omitempty"`
	// Commits is pg_stat_database.xact_commit's growth from before the first client
	// connected to after the last one disconnected, without pgbakeoff's own
	// monitoring transactions: the span of commits_total.
	Commits        int64   `json:"commits"`
	CommitsDiffPct float64 `json:"commits_diff_pct"`
	// CommitsUnread says why Commits could not be read or is not known; Commits
	// is then 0 and means nothing.
	CommitsUnread string `json:"commits_unread,omitempty"`
	// StatsReset: the server's statistics were reset between the two readings
	// (a crash and recovery, or pg_stat_reset()), so Commits is not known, and
	// CommitsUnread says when, if the server says; the window's counters too
	// are 0 when they were reset between theirs.
	StatsReset bool `json:"stats_reset,omitempty"`
	// CommitsAllShards: the run is a shard of a sharded run, whose server counts
	// the commits of all the shards' clients. Shard 0 reads them (the others
	// cannot: CommitsUnread), and merge checks them against all the clients';
	// CommitsDiffPct is 0.
	CommitsAllShards bool `json:"commits_all_shards,omitempty"`
	// CommitsUnsettled: the counters still moved after the benchmark's sessions
	// had ended, so something else was committing in the database (or, before
	// PostgreSQL 15, the statistics collector fell behind).
	CommitsUnsettled bool  `json:"commits_unsettled,omitempty"`
	WindowCommits    int64 `json:"window_commits"`
	WindowRollbacks  int64 `json:"window_rollbacks"`
	BlksRead         int64 `json:"window_blks_read"`
	BlksHit          int64 `json:"window_blks_hit"`
}

type clientCPU struct {
	UserS          float64 `json:"user_s"`
	SysS           float64 `json:"sys_s"`
	PerTxUs        float64 `json:"per_tx_us"`
	Cores          float64 `json:"cores"` // average cores busy
	Saturated      bool    `json:"saturated"`
	MachineBusyPct float64 `json:"machine_busy_pct,omitempty"`
	// How the clients were run: a thread each, or sharing Threads threads, on
	// EventLoops event loops (driver.Result.EventLoops) or through Go's poller.
	ThreadPerClient bool `json:"thread_per_client"`
	Threads         int  `json:"threads"`
	EventLoops      int  `json:"event_loops,omitempty"`
	// LoopBusyPct is each event loop's share of the run spent serving its
	// clients rather than waiting for their servers (driver.Result.LoopBusy).
	LoopBusyPct []float64 `json:"loop_busy_pct,omitempty"`
	// ReadAtOnce is, for a thread per client on a Unix-domain socket, the share of
	// answers read without polling first (driver.Result.ReadAtOnce).
	ReadAtOnce *float64 `json:"read_at_once,omitempty"`
}

// rateSummary is what an open-loop run and a latency limit add, over the window:
// the rate asked for, the arrivals due and those no client had begun by the
// window's end, the schedule lag (an arrival's wait for a free client, which its
// latency includes), and the transactions skipped or late for the limit.
type rateSummary struct {
	RequestedTPS   float64 `json:"requested_tps,omitempty"`
	Scheduled      int64   `json:"scheduled,omitempty"`
	NotBegun       int64   `json:"not_begun,omitempty"`
	LagAvgMs       float64 `json:"schedule_lag_avg_ms,omitempty"`
	LagMaxMs       float64 `json:"schedule_lag_max_ms,omitempty"`
	LatencyLimitMs float64 `json:"latency_limit_ms,omitempty"`
	Skipped        int64   `json:"skipped"`
	Late           int64   `json:"late"`
}

type scriptSummary struct {
	Name         string            `json:"name"`
	Weight       int               `json:"weight"`
	Transactions int64             `json:"transactions"`
	TPS          float64           `json:"tps"`
	Failed       int64             `json:"failed"`
	Retried      int64             `json:"retried"`
	RolledBack   int64             `json:"rolled_back"`
	LatencyMs    histogram.Summary `json:"latency_ms"`
}

type errorSummary struct {
	SQLState string `json:"sqlstate"`
	Script   string `json:"script"`
	Retried  bool   `json:"retried"`
	Count    int64  `json:"count"`
	Example  string `json:"example,omitempty"`
}

func summarize(run *store.Run, res *driver.Result, info *target.Info, setup *Setup, spec Spec,
	stats serverStats, cpu0, cpu1 cpuSample) *Summary {
	proto, scale := setup.Protocol, setup.Scale
	window := res.WindowEnd.Sub(res.WindowStart).Seconds()
	all := histogram.New()
	sum := &Summary{
		RunID: run.ID, Workload: run.Workload, Script: run.Script, Target: run.Target, Address: info.Address,
		Protocol: proto.String(), Scale: scale, Clients: spec.Clients, Started: run.Started,
		WarmupS: spec.Warmup.Seconds(), DurationS: window, Transactions: res.Committed, Failed: res.Failed,
		CommitsTotal: res.CommitsTotal, Labels: run.Labels, Status: store.StatusCompleted, Connections: res.Connects,
	}
	if window > 0 {
		sum.TPS = float64(res.Committed) / window
	}
	for _, s := range res.Scripts {
		all.Merge(s.Latency)
		ss := scriptSummary{Name: s.Name, Weight: s.Weight, Transactions: s.Committed, Failed: s.Failed, Retried: s.Retried, RolledBack: s.RolledBack,
			LatencyMs: histogram.Summarize(s.Latency)}
		if window > 0 {
			ss.TPS = float64(s.Committed) / window
		}
		sum.Scripts = append(sum.Scripts, ss)
		sum.Retried += s.Retried
		sum.Retries += s.Retries
	}
	sum.LatencyMs = histogram.Summarize(all)
	sum.latency = all
	for _, e := range res.Errors {
		sum.Errors = append(sum.Errors, errorSummary{SQLState: e.SQLState, Script: e.Script, Retried: e.Retried, Count: e.Count, Example: e.Example})
	}
	sum.Reconnects = len(res.Outages)
	sum.OutageS = res.OutageSeconds()
	for _, o := range res.Outages {
		sum.Outages = append(sum.Outages, outageSummary{Client: o.Client, Start: o.Start, End: o.End, Seconds: o.End.Sub(o.Start).Seconds(),
			Cause: connfail.Name(o.Cause), Error: o.Error, Attempts: o.Attempts, FailedTx: o.FailedTx, Recovered: o.Recovered})
	}
	for _, c := range res.ConnectErrors {
		sum.ConnectErrors = append(sum.ConnectErrors, connectErrSummary{Cause: connfail.Name(c.Cause), Count: c.Count, Example: c.Example})
	}
	sum.ClientAddress = res.Address
	if res.Incomplete {
		sum.Status = store.StatusIncomplete
	}

	sum.addServer(info, stats, spec.Shard.On())
	sum.addClientCPU(res, spec, cpu0, cpu1)
	if res.Interrupted {
		sum.Status = store.StatusInterrupted
	}
	if sum.Reconnects > 0 {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("connections were lost %d times; clients were without a connection for %.1f s in all", sum.Reconnects, sum.OutageS))
	}
	if spec.Rate > 0 || spec.LatencyLimit > 0 {
		f := res.Rate
		sum.Rate = &rateSummary{RequestedTPS: spec.Rate, Scheduled: f.Scheduled, NotBegun: f.Untaken, LagAvgMs: ms(f.LagAvg), LagMaxMs: ms(f.LagMax),
			LatencyLimitMs: ms(spec.LatencyLimit), Skipped: f.Skipped, Late: f.Late}
	}
	if res.Connects > 0 {
		sum.ConnectAvgMs = float64(res.ConnectPerTx) / float64(res.Connects) / float64(time.Millisecond)
	}
	return sum
}

// addServer adds the server's commits around the run and counters over its
// window, or says why they could not be read or are not known. A shard's are
// those of every shard's clients.
func (sum *Summary) addServer(info *target.Info, stats serverStats, shard bool) {
	sum.Server.Version = info.Version
	if info.SSL {
		sum.Server.TLS = strings.TrimSpace(info.TLSVersion + " " + info.TLSCipher)
	}
	sum.Server.CommitsAllShards = shard
	ok, reset, at := stats.compare(store.PointBeforeConnect, store.PointAfterDisconnect)
	switch {
	case ok:
		b, a := stats.values[store.PointBeforeConnect], stats.values[store.PointAfterDisconnect]
		sum.Server.Commits = a["xact_commit"] - b["xact_commit"]
		if sum.CommitsTotal > 0 && !shard {
			sum.Server.CommitsDiffPct = 100 * float64(sum.Server.Commits-sum.CommitsTotal) / float64(sum.CommitsTotal)
		}
		sum.Server.CommitsUnsettled = len(stats.unsettled) > 0
	case reset:
		// Counts from either side of a reset cannot be compared: not a number at all.
		sum.Server.StatsReset = true
		sum.Server.CommitsUnread = "the server's statistics were reset " + resetWhen(at)
	default:
		sum.Server.CommitsUnread = cmp.Or(stats.unread[store.PointAfterDisconnect], stats.unread[store.PointBeforeConnect], "not read")
		if sum.Server.CommitsUnread != shardUnread {
			sum.Warnings = append(sum.Warnings, commitsUnchecked(sum.Server.CommitsUnread, sum.CommitsTotal))
		}
	}
	values := stats.values
	if ok, _, _ := stats.compare(store.PointWindowStart, store.PointWindowEnd); ok {
		b, a := values[store.PointWindowStart], values[store.PointWindowEnd]
		sum.Server.WindowCommits = a["xact_commit"] - b["xact_commit"]
		sum.Server.WindowRollbacks = a["xact_rollback"] - b["xact_rollback"]
		sum.Server.BlksRead = a["blks_read"] - b["blks_read"]
		sum.Server.BlksHit = a["blks_hit"] - b["blks_hit"]
	}
}

// shardUnread is why a shard other than shard 0 has no server counts.
const shardUnread = "shard 0 reads the server's counters for the whole run"

// commitsUnchecked is the warning of a run whose server commits could not be
// read, for the given reason; a merge of shards that checks them leaves out
// the shards' warnings of it.
func commitsUnchecked(why string, clientCommits int64) string {
	return fmt.Sprintf("the server's commit count could not be read (%s): the clients' %d commits are not checked against it", why, clientCommits)
}

// resetWhen says when the server's statistics were reset: "at 10:00:34.123",
// or "during the run" when the server does not say.
func resetWhen(at time.Time) string {
	if at.IsZero() {
		return "during the run"
	}
	return "at " + at.Local().Format("15:04:05.000")
}

// pctList is shares in percent for people: "93%, 97%".
func pctList(pcts []float64) string {
	parts := make([]string, len(pcts))
	for i, p := range pcts {
		parts[i] = fmt.Sprintf("%.0f%%", p)
	}
	return strings.Join(parts, ", ")
}

// minCPUSpan is the shortest run whose client's share of the CPU is judged.
const minCPUSpan = time.Second

// addClientCPU adds the client's CPU time and warns when the client, not the
// server, may have limited the run.
func (sum *Summary) addClientCPU(res *driver.Result, spec Spec, cpu0, cpu1 cpuSample) {
	wall := res.End.Sub(res.Start).Seconds()
	c := &sum.ClientCPU
	c.UserS, c.SysS = cpu1.user-cpu0.user, cpu1.sys-cpu0.sys
	c.ThreadPerClient, c.EventLoops = spec.ThreadPerClient == On, res.EventLoops
	switch {
	case spec.ThreadPerClient == On:
		c.Threads = spec.Clients
		if strings.HasPrefix(res.Address, "/") {
			c.ReadAtOnce = &res.ReadAtOnce
		}
	case res.EventLoops > 0:
		c.Threads = res.EventLoops // --jobs auto's, or fewer than --jobs for fewer clients
	case res.SharedThreads > 0:
		c.Threads = res.SharedThreads // goroutines on Go's poller share them
	default:
		c.Threads = max(1, spec.Jobs)
	}
	sum.ClientCPUS = c.UserS + c.SysS
	if res.CommitsTotal > 0 {
		c.PerTxUs = 1e6 * sum.ClientCPUS / float64(res.CommitsTotal)
	}
	if wall > 0 {
		c.Cores = sum.ClientCPUS / wall
	}
	if cpu1.machineTotal > cpu0.machineTotal {
		c.MachineBusyPct = 100 * float64(cpu1.machineBusy-cpu0.machineBusy) / float64(cpu1.machineTotal-cpu0.machineTotal)
	}
	for _, b := range res.LoopBusy {
		c.LoopBusyPct = append(c.LoopBusyPct, math.Round(1000*b)/10)
	}
	if wall < minCPUSpan.Seconds() {
		// Over a moment (clients that stopped at once) the CPU time of setting up,
		// which the share counts against it, says nothing of the run.
		return
	}
	if limit, more, saturated := clientLimit(res, spec, c.Cores); saturated {
		c.Saturated = true
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("the client was CPU-bound (%.2f of %.0f cores it may use): it, not the server, limited throughput; %s", c.Cores, limit, more))
	} else if c.MachineBusyPct > 95 {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("this machine's CPUs were %.0f%% busy and the client used %.2f cores of them: client and server compete for CPU", c.MachineBusyPct, c.Cores))
	}
}

// clientLimit is the cores the client's threads could use, what would give it more,
// and whether it was saturated: its threads near the cores they could use. A loop's
// busy share is of wall time, not of CPU: a loop that waits for a core the server
// holds counts as busy, so the share alone does not show that the client limited
// the run; its CPU does.
func clientLimit(res *driver.Result, spec Spec, cores float64) (float64, string, bool) {
	limit, more := 0.0, "add client machines"
	switch {
	case spec.ThreadPerClient == On:
		limit = float64(min(spec.Jobs+spec.Clients, runtime.NumCPU()))
	case res.EventLoops == 0 && res.SharedThreads > 0:
		// Clients on goroutines (TLS, a connection per transaction, systems
		// other than Linux) share every core through Go's poller, --jobs or not.
		limit = float64(min(res.SharedThreads, runtime.NumCPU()))
	case spec.Jobs == 0:
		limit = float64(min(runtime.NumCPU(), spec.Clients)) // as many loops as --jobs auto adds
	default:
		limit, more = float64(min(spec.Jobs, runtime.NumCPU())), "add --jobs or client machines"
	}
	return limit, more, cores >= 0.9*limit
}

// WriteText writes the summary for people, as `run` and `show` print it.
func (s *Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "run %d: %s, %s\n", s.RunID, s.Workload, s.headlineStatus())
	if s.Figures != nil {
		fmt.Fprintln(w, s.Figures.Scope(s))
	} else {
		fmt.Fprintf(w, "script: %s, scale %d, %s protocol, %d clients\n", s.Script, s.Scale, s.Protocol, s.Clients)
	}
	fmt.Fprintf(w, "target: %s (PostgreSQL %s at %s)\n", s.Target, s.Server.Version, s.Address)
	fmt.Fprintf(w, "window: %.1f s after %.1f s warm-up\n", s.DurationS, s.WarmupS)
	fmt.Fprintf(w, "transactions: %d committed, %d failed, %d retried\n", s.Transactions, s.Failed, s.Retried)
	fmt.Fprintf(w, "tps: %.1f\n", s.TPS)
	l := s.LatencyMs
	fmt.Fprintf(w, "latency ms: avg %.3f  stddev %.3f  p50 %.3f  p90 %.3f  p95 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
		l.Avg, l.Stddev, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max)
	if len(s.Scripts) > 1 {
		for _, sc := range s.Scripts {
			fmt.Fprintf(w, "  %-14s %9d tx  %10.1f tps  p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  %d failed  %d rolled back\n", sc.Name, sc.Transactions, sc.TPS, sc.LatencyMs.P50, sc.LatencyMs.P90, sc.LatencyMs.P99, sc.Failed, sc.RolledBack)
		}
	}
	if s.Figures != nil {
		s.Figures.WriteText(w, s)
	}
	s.writeCommits(w)
	s.writeRate(w)
	if s.Connections > 0 {
		fmt.Fprintf(w, "connections: %d opened and closed between transactions, %.3f ms each (connect and disconnect)\n", s.Connections, s.ConnectAvgMs)
	}
	fmt.Fprintf(w, "client cpu: %.2f s (%.2f user, %.2f sys), %.1f us per transaction, %.2f cores, %s\n", s.ClientCPUS, s.ClientCPU.UserS, s.ClientCPU.SysS, s.ClientCPU.PerTxUs, s.ClientCPU.Cores, s.clientThreads())
	if m := s.ClientMachine; m != nil {
		fmt.Fprintf(w, "client machine: %s\n", m)
	}
	s.writeFaults(w)
	s.writeRecovery(w)
	if s.Dataset.Bytes > 0 {
		fmt.Fprintf(w, "dataset: %s\n", s.Dataset)
	}
	for _, fl := range s.Flags {
		kind := "note"
		if fl.Invalid {
			kind = "INVALID"
		}
		fmt.Fprintf(w, "%s (%s): %s\n", kind, fl.Name, fl.Reason)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// writeRate writes an open-loop run's schedule and the latency limit's count.
func (s *Summary) writeRate(w io.Writer) {
	if r := s.Rate; r != nil && r.RequestedTPS > 0 {
		fmt.Fprintf(w, "rate: %s tx/s requested, %.1f done; %d due in the window, %d not begun by its end; schedule lag avg %.3f ms, max %.3f ms\n",
			strconv.FormatFloat(r.RequestedTPS, 'f', -1, 64), s.TPS, r.Scheduled, r.NotBegun, r.LagAvgMs, r.LagMaxMs)
	}
	if r := s.Rate; r != nil && r.LatencyLimitMs > 0 {
		// pgbench's shares: the late of the transactions done, the skipped of all.
		line := fmt.Sprintf("latency limit %s ms: %d later than it", strconv.FormatFloat(r.LatencyLimitMs, 'f', -1, 64), r.Late)
		if s.Transactions > 0 {
			line += fmt.Sprintf(" (%.3f%% of the transactions done)", 100*float64(r.Late)/float64(s.Transactions))
		}
		if all := s.Transactions + s.Failed + r.Skipped; all > 0 {
			line += fmt.Sprintf(", %d skipped (%.3f%%)", r.Skipped, 100*float64(r.Skipped)/float64(all))
		}
		fmt.Fprintln(w, line)
	}
}

// clientThreads says how the clients waited: the threads or loops they ran on.
func (s *Summary) clientThreads() string {
	threads := fmt.Sprintf("%d shared threads", s.ClientCPU.Threads)
	switch {
	case s.ClientCPU.ThreadPerClient:
		threads = "a thread per client"
		if r := s.ClientCPU.ReadAtOnce; r != nil {
			threads += fmt.Sprintf(", %.0f%% of answers read without polling first", 100**r)
		}
	case s.ClientCPU.EventLoops == 1:
		threads = "one event loop"
	case s.ClientCPU.EventLoops > 1:
		threads = fmt.Sprintf("%d event loops", s.ClientCPU.EventLoops)
	case s.ClientCPU.Threads == 1:
		threads = "one shared thread"
	}
	if b := s.ClientCPU.LoopBusyPct; len(b) > 0 && s.ClientCPU.EventLoops > 0 {
		threads += " (busy " + pctList(b) + ")"
	}
	return threads
}

// writeFaults writes the errors, most frequent first, the lost connections and
// the failed connection attempts.
func (s *Summary) writeFaults(w io.Writer) {
	errs := append([]errorSummary(nil), s.Errors...)
	sort.Slice(errs, func(i, j int) bool { return errs[i].Count > errs[j].Count })
	for _, e := range errs {
		kind := "failed"
		if e.Retried {
			kind = "retried"
		}
		state := e.SQLState
		if state != "" {
			state = " " + state // none for a client stopped on its script's error
		}
		fmt.Fprintf(w, "error%s (%s, %s): %d  %s\n", state, e.Script, kind, e.Count, e.Example)
	}
	if s.Reconnects > 0 {
		fmt.Fprintf(w, "reconnects: %d, outage %.1f s\n", s.Reconnects, s.OutageS)
		for _, o := range s.Outages {
			end := fmt.Sprintf("%.1f s, %d attempts", o.Seconds, o.Attempts)
			if !o.Recovered {
				end = "not recovered"
			}
			fmt.Fprintf(w, "  client %d lost its connection at %s (%s), %d transaction(s) lost, %s\n",
				o.Client, o.Start.Local().Format("15:04:05.000"), o.Cause, o.FailedTx, end)
		}
	}
	for _, c := range s.ConnectErrors {
		fmt.Fprintf(w, "failed connection attempts: %d %s  %s\n", c.Count, c.Cause, c.Example)
	}
}

// headlineStatus is how the run ended, for its first line: a run whose clients
// were aborted (a script error, or a lost connection as pgbench) aborted, however
// long the others went on.
func (s *Summary) headlineStatus() string {
	if s.Status == store.StatusCompleted && slices.ContainsFunc(s.Flags, func(f Flag) bool { return f.Name == flagAborted }) {
		return flagAborted
	}
	return s.Status
}

// writeCommits writes the clients' commits and the server's count of them.
func (s *Summary) writeCommits(w io.Writer) {
	sv := s.Server
	client := fmt.Sprintf("commits: client %d", s.CommitsTotal)
	if sv.CommitsAllShards {
		client += " from this shard's clients"
	}
	switch {
	case sv.StatsReset:
		fmt.Fprintf(w, "%s, server not known (%s)\n", client, sv.CommitsUnread)
	case sv.CommitsAllShards && sv.CommitsUnread == shardUnread:
		fmt.Fprintf(w, "%s; the server's, for all the shards, are read by shard 0 and checked by `pgbakeoff merge` against all the shards' clients'\n", client)
	case sv.CommitsUnread != "":
		fmt.Fprintf(w, "%s, server not read (%s)\n", client, sv.CommitsUnread)
	case sv.CommitsAllShards:
		fmt.Fprintf(w, "%s, server %d from all the shards' clients, which `pgbakeoff merge` checks against all the shards' commits\n", client, sv.Commits)
	default:
		fmt.Fprintf(w, "%s, server %d (%+.2f%%) from first connect to last disconnect\n", client, sv.Commits, sv.CommitsDiffPct)
	}
}

// FormatBytes is a size for people, in binary units as PostgreSQL's
// pg_size_pretty gives them: "160.0 MB".
func FormatBytes(n int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
