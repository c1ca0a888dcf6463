package engine

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// ShardRun is one shard's stored run, with its summary read back (nil when the
// shard did not finish: a process killed mid-run leaves none).
type ShardRun struct {
	Detail  *store.RunDetail
	Summary *Summary
}

// ShardFigures is what a workload's Figures implement to be merged across the
// shards of a run: figures counted by the clients add up, figures the server
// counted for the whole database are shard 0's. Without it, shard 0's stand.
type ShardFigures interface {
	MergeShards(shards []Figures, merged *Summary) Figures
}

// ShardsOf reads a run's place in a sharded run from its labels: its group and
// shard; false for a run that is not a shard.
func ShardsOf(r *store.Run) (group string, shard Shard, ok bool) {
	g, s := r.Labels["shard_group"], r.Labels["shard"]
	if g == "" || s == "" || r.Labels["shards"] != "" {
		return "", Shard{}, false
	}
	sh, err := ParseShard(s)
	if err != nil {
		return "", Shard{}, false
	}
	return g, sh, true
}

// MergeShards makes the whole run of its shards' runs, given in any order:
// histograms summed (exact percentiles), counts added, per-second intervals lined
// up by their sequence (every shard began at the same instant), the server's
// counters and samples from shard 0, and the validity rules a shard cannot judge
// alone (the server's commits against all the clients', the shards' clocks). A
// shard that did not finish leaves the merged run incomplete, its clients'
// transactions missing. It refuses runs of different groups or workloads, and a
// group with a shard missing.
func MergeShards(shards []ShardRun) (*store.RunDetail, *Summary, error) {
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("no shards to merge")
	}
	group, first, ok := ShardsOf(&shards[0].Detail.Run)
	if !ok {
		return nil, nil, fmt.Errorf("run %d is not a shard of a run (it has no shard and shard_group labels)", shards[0].Detail.ID)
	}
	byIndex := make([]*ShardRun, first.Count)
	for i := range shards {
		s := &shards[i]
		g, sh, ok := ShardsOf(&s.Detail.Run)
		switch {
		case !ok || g != group || sh.Count != first.Count:
			return nil, nil, fmt.Errorf("run %d is not a shard of %s of %d shards", s.Detail.ID, group, first.Count)
		case byIndex[sh.Index] != nil:
			return nil, nil, fmt.Errorf("shard %s of %s is there twice (runs %d and %d): merge each shard's store once", sh, group, byIndex[sh.Index].Detail.ID, s.Detail.ID)
		case s.Detail.Workload != shards[0].Detail.Workload || s.Detail.Script != shards[0].Detail.Script:
			return nil, nil, fmt.Errorf("the shards of %s ran different workloads (%s %s and %s %s)", group, shards[0].Detail.Workload,
				shards[0].Detail.Script, s.Detail.Workload, s.Detail.Script)
		}
		byIndex[sh.Index] = s
	}
	var missing []string
	for i, s := range byIndex {
		if s == nil {
			missing = append(missing, Shard{i, first.Count}.String())
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("%s lacks shard %s: merge the stores of all %d shards", group, strings.Join(missing, ", "), first.Count)
	}
	// One run: what shapes it is the same on every shard.
	setting := func(s *ShardRun, key string) string {
		if key == "all_clients" || key == "rate" {
			p, _ := s.Detail.Params["shard"].(map[string]any)
			return fmt.Sprint(p[key])
		}
		return fmt.Sprint(s.Detail.Params[key])
	}
	for _, key := range []string{"all_clients", "rate", "warmup_s", "duration_s", "transactions", "seed", "protocol", "max_tries"} {
		for i, s := range byIndex[1:] {
			if a, b := setting(byIndex[0], key), setting(s, key); a != b {
				return nil, nil, fmt.Errorf("the shards of %s did not run alike: %s is %s on shard 0 and %s on shard %d; run every shard with the same options",
					group, key, a, b, i+1)
			}
		}
	}
	if v0 := pgbakeoffVersion(byIndex[0]); v0 != "" {
		for i, s := range byIndex {
			if v := pgbakeoffVersion(s); v != "" && v != v0 {
				return nil, nil, fmt.Errorf("the shards of %s ran different pgbakeoff versions (%s on shard 0, %s on shard %d): run them all with one", group, v0, v, i)
			}
		}
	}

	m := &merger{group: group, shards: byIndex}
	d, err := m.detail()
	if err != nil {
		return nil, nil, err
	}
	sum := m.summary(d)
	d.Flags = storeFlags(sum.Flags)
	return d, sum, nil
}

func pgbakeoffVersion(s *ShardRun) string {
	if s.Summary == nil || s.Summary.ClientMachine == nil {
		return ""
	}
	return s.Summary.ClientMachine.Pgbakeoff
}

type merger struct {
	group  string
	shards []*ShardRun // by index
	// scripts are the merged window histograms by transaction type.
	scripts map[string]*hdrhistogram.Histogram
}

// detail merges what the store holds for each run.
func (m *merger) detail() (*store.RunDetail, error) {
	s0 := m.shards[0].Detail
	d := &store.RunDetail{Run: s0.Run}
	d.ID = 0
	d.Labels = maps.Clone(s0.Labels)
	delete(d.Labels, "shard")
	d.Labels["shards"] = fmt.Sprint(len(m.shards))
	d.Params = maps.Clone(s0.Params)
	delete(d.Params, "shard")
	d.Clients, d.ClientCPUUser, d.ClientCPUSys = 0, 0, 0
	d.Summary = nil
	var parts []map[string]any
	status := store.StatusCompleted
	for i, s := range m.shards {
		r := s.Detail
		d.Clients += r.Clients
		d.ClientCPUUser += r.ClientCPUUser
		d.ClientCPUSys += r.ClientCPUSys
		if r.Started.Before(d.Started) {
			d.Started = r.Started
		}
		if r.Ended.After(d.Ended) {
			d.Ended = r.Ended
		}
		part := map[string]any{"index": i, "run_id": r.ID, "clients": r.Clients, "status": r.Status, "host": r.Process.Host}
		if p, ok := r.Params["shard"].(map[string]any); ok {
			part["clock_offset_ms"], part["first_client"] = p["clock_offset_ms"], p["first_client"]
		}
		if s.Summary != nil && s.Summary.ClientMachine != nil {
			part["machine"] = s.Summary.ClientMachine.String()
		}
		parts = append(parts, part)
		if r.Status != store.StatusCompleted && status == store.StatusCompleted {
			status = store.StatusIncomplete
		}
	}
	d.Params["shards"] = parts
	d.Status = status
	if d.Ended.IsZero() {
		d.Ended = d.Started
	}

	// Intervals by sequence: every shard's ticks began at the same instant.
	bySeq := map[int][]store.Interval{}
	for _, s := range m.shards {
		for _, iv := range s.Detail.Intervals {
			bySeq[iv.Seq] = append(bySeq[iv.Seq], iv)
		}
	}
	for _, seq := range slices.Sorted(maps.Keys(bySeq)) {
		d.Intervals = append(d.Intervals, mergeIntervals(bySeq[seq]))
	}

	// Histograms summed: the merged percentiles are exact.
	hs := map[[2]string]*hdrhistogram.Histogram{}
	for _, s := range m.shards {
		for _, h := range s.Detail.Histograms {
			hh, err := histogram.Decode(h.Encoded)
			if err != nil {
				return nil, fmt.Errorf("run %d histogram %s: %w", s.Detail.ID, h.TxType, err)
			}
			k := [2]string{h.TxType, h.Kind}
			if hs[k] == nil {
				hs[k] = histogram.New()
			}
			hs[k].Merge(hh)
		}
	}
	m.scripts = map[string]*hdrhistogram.Histogram{}
	for _, k := range slices.SortedFunc(maps.Keys(hs), func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }) {
		b, err := histogram.Encode(hs[k])
		if err != nil {
			return nil, err
		}
		d.Histograms = append(d.Histograms, store.Histogram{TxType: k[0], Kind: k[1], Encoded: b})
		if k[1] == store.KindMeasure {
			m.scripts[k[0]] = hs[k]
		}
	}

	errs := map[[3]string]*store.ErrorCount{}
	for _, s := range m.shards {
		for _, e := range s.Detail.Errors {
			k := [3]string{e.SQLState, e.TxType, fmt.Sprint(e.Retried)}
			if errs[k] == nil {
				c := e
				errs[k] = &c
				continue
			}
			errs[k].Count += e.Count
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(errs), func(a, b [3]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]))
	}) {
		d.Errors = append(d.Errors, *errs[k])
	}
	// The server as shard 0 read and sampled it, for the whole run.
	d.ServerStats, d.Samples = s0.ServerStats, s0.Samples
	return d, nil
}

// mergeIntervals adds up one second of every shard: counts add; the average
// latency is weighted by transactions, and since the intervals' histograms are
// not kept, each percentile is the highest of the shards', an upper bound.
func mergeIntervals(ivs []store.Interval) store.Interval {
	out := ivs[0]
	out.Txns, out.Failed, out.Retried, out.TPS, out.Errors, out.Down, out.ConnectErrors = 0, 0, 0, 0, 0, 0, 0
	out.LatencyMs = store.Latency{}
	var weighted float64
	for _, iv := range ivs {
		out.Txns += iv.Txns
		out.Failed += iv.Failed
		out.Retried += iv.Retried
		out.TPS += iv.TPS
		out.Errors += iv.Errors
		out.Down += iv.Down
		out.ConnectErrors += iv.ConnectErrors
		if iv.Start.Before(out.Start) {
			out.Start = iv.Start
		}
		if iv.End.After(out.End) {
			out.End = iv.End
		}
		weighted += iv.LatencyMs.Avg * float64(iv.Txns)
		l := &out.LatencyMs
		l.P50, l.P90, l.P95 = max(l.P50, iv.LatencyMs.P50), max(l.P90, iv.LatencyMs.P90), max(l.P95, iv.LatencyMs.P95)
		l.P99, l.P999, l.Max = max(l.P99, iv.LatencyMs.P99), max(l.P999, iv.LatencyMs.P999), max(l.Max, iv.LatencyMs.Max)
	}
	if out.Txns > 0 {
		out.LatencyMs.Avg = weighted / float64(out.Txns)
	}
	return out
}

// summary merges the shards' summaries into the whole run's, and judges it.
func (m *merger) summary(d *store.RunDetail) *Summary {
	var base *Summary
	for _, s := range m.shards {
		if s.Summary != nil {
			base = s.Summary
			break
		}
	}
	sum := &Summary{Workload: d.Workload, Script: d.Script, Target: d.Target, Clients: d.Clients, Status: d.Status, Started: d.Started, Labels: d.Labels}
	if base != nil {
		b := *base
		sum = &b
		sum.Clients, sum.Status, sum.Started, sum.Labels = d.Clients, d.Status, d.Started, d.Labels
		sum.Transactions, sum.Failed, sum.Retried, sum.Retries, sum.CommitsTotal, sum.Reconnects = 0, 0, 0, 0, 0, 0
		sum.OutageS, sum.Connections, sum.Errors, sum.Outages, sum.ConnectErrors, sum.Warnings, sum.Flags = 0, 0, nil, nil, nil, nil, nil
		sum.ClientCPU = clientCPU{ThreadPerClient: base.ClientCPU.ThreadPerClient}
		if base.Rate != nil {
			sum.Rate = &rateSummary{LatencyLimitMs: base.Rate.LatencyLimitMs}
		}
	}
	if s0 := m.shards[0].Summary; s0 != nil {
		sum.Server, sum.Address, sum.Dataset = s0.Server, s0.Address, s0.Dataset // the server, as shard 0 read it
	}
	sum.Server.CommitsAllShards = false // the whole run's now
	checked := m.commitsChecked(sum)
	scripts := map[string]*scriptSummary{}
	var order []string
	var lagWeighted, connectWeighted float64
	var flags []Flag
	for i, s := range m.shards {
		ss := s.Summary
		if ss == nil {
			flags = append(flags, Flag{flagIncomplete, true, fmt.Sprintf("shard %d (run %d) did not finish (%s): the transactions of its %s are missing",
				i, s.Detail.ID, s.Detail.Status, Plural(s.Detail.Clients, "client"))})
			continue
		}
		sum.Transactions += ss.Transactions
		sum.Failed += ss.Failed
		sum.Retried += ss.Retried
		sum.Retries += ss.Retries
		sum.CommitsTotal += ss.CommitsTotal
		sum.Reconnects += ss.Reconnects
		sum.Connections += ss.Connections
		connectWeighted += ss.ConnectAvgMs * float64(ss.Connections)
		sum.Outages = append(sum.Outages, ss.Outages...)
		sum.ConnectErrors = append(sum.ConnectErrors, ss.ConnectErrors...)
		for _, w := range ss.Warnings {
			// A shard could not check its commits alone (one stored before shards
			// stopped saying so); the merge checks them.
			if checked && w == commitsUnchecked(ss.Server.CommitsUnread, ss.CommitsTotal) {
				continue
			}
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("shard %d: %s", i, w))
		}
		c := &sum.ClientCPU
		c.UserS += ss.ClientCPU.UserS
		c.SysS += ss.ClientCPU.SysS
		c.Cores += ss.ClientCPU.Cores
		c.Threads += ss.ClientCPU.Threads
		c.EventLoops += ss.ClientCPU.EventLoops
		c.LoopBusyPct = append(c.LoopBusyPct, ss.ClientCPU.LoopBusyPct...)
		c.Saturated = c.Saturated || ss.ClientCPU.Saturated
		if r := ss.Rate; r != nil && sum.Rate != nil {
			sum.Rate.RequestedTPS += r.RequestedTPS
			sum.Rate.Scheduled += r.Scheduled
			sum.Rate.NotBegun += r.NotBegun
			sum.Rate.Skipped += r.Skipped
			sum.Rate.Late += r.Late
			sum.Rate.LagMaxMs = max(sum.Rate.LagMaxMs, r.LagMaxMs)
			lagWeighted += r.LagAvgMs * float64(ss.Transactions)
		}
		for _, sc := range ss.Scripts {
			if scripts[sc.Name] == nil {
				c := sc
				c.Transactions, c.Failed, c.Retried, c.RolledBack = 0, 0, 0, 0
				scripts[sc.Name] = &c
				order = append(order, sc.Name)
			}
			t := scripts[sc.Name]
			t.Transactions += sc.Transactions
			t.Failed += sc.Failed
			t.Retried += sc.Retried
			t.RolledBack += sc.RolledBack
		}
		for _, e := range ss.Errors {
			k := slices.IndexFunc(sum.Errors, func(x errorSummary) bool {
				return x.SQLState == e.SQLState && x.Script == e.Script && x.Retried == e.Retried
			})
			if k < 0 {
				sum.Errors = append(sum.Errors, e)
			} else {
				sum.Errors[k].Count += e.Count
			}
		}
		// A shard's invalid flags make the whole run invalid; its notes stay its own.
		for _, f := range ss.Flags {
			if f.Invalid {
				flags = append(flags, Flag{f.Name, true, fmt.Sprintf("shard %d: %s", i, f.Reason)})
			}
		}
	}
	sum.OutageS = m.outageSeconds()
	all := histogram.New()
	sum.Scripts = nil
	for _, name := range order {
		sc := scripts[name]
		if h := m.scripts[name]; h != nil {
			all.Merge(h)
			sc.LatencyMs = histogram.Summarize(h)
		}
		if sum.DurationS > 0 {
			sc.TPS = float64(sc.Transactions) / sum.DurationS
		}
		sum.Scripts = append(sum.Scripts, *sc)
	}
	sum.LatencyMs = histogram.Summarize(all)
	sum.latency = all
	if sum.DurationS > 0 {
		sum.TPS = float64(sum.Transactions) / sum.DurationS
	}
	c := &sum.ClientCPU
	sum.ClientCPUS = c.UserS + c.SysS
	if sum.CommitsTotal > 0 {
		c.PerTxUs = 1e6 * sum.ClientCPUS / float64(sum.CommitsTotal)
	}
	if sum.Rate != nil && sum.Transactions > 0 {
		sum.Rate.LagAvgMs = lagWeighted / float64(sum.Transactions)
	}
	if sum.Connections > 0 {
		sum.ConnectAvgMs = connectWeighted / float64(sum.Connections)
	}
	if sum.Server.CommitsUnread == "" && sum.CommitsTotal > 0 {
		sum.Server.CommitsDiffPct = 100 * float64(sum.Server.Commits-sum.CommitsTotal) / float64(sum.CommitsTotal)
	}
	if merger, ok := sum.Figures.(ShardFigures); ok {
		var figs []Figures
		for _, s := range m.shards {
			if s.Summary != nil {
				figs = append(figs, s.Summary.Figures)
			}
		}
		sum.Figures = merger.MergeShards(figs, sum)
	}
	sum.Flags = m.judge(sum, flags)
	return sum
}

// commitsChecked tells whether the merge checks the server's commits, which
// shard 0 read, against all the clients': shard 0 could read them, and every
// shard completed.
func (m *merger) commitsChecked(sum *Summary) bool {
	return m.shards[0].Summary != nil && sum.Server.CommitsUnread == "" && sum.Status == store.StatusCompleted
}

// outageSeconds is the wall time during which a client of any shard had lost its
// connection: the union of every shard's outages, each moved onto the server's
// clock, as one process counts its clients' (driver.Result.OutageSeconds). The
// shards' clients lose their connections together when the server goes away, and
// the run was down once, not once per shard.
func (m *merger) outageSeconds() float64 {
	var all driver.Result
	for _, s := range m.shards {
		if s.Summary == nil {
			continue
		}
		var offset time.Duration
		if p, ok := s.Detail.Params["shard"].(map[string]any); ok {
			if ms, ok := number(p["clock_offset_ms"]); ok {
				offset = time.Duration(ms * float64(time.Millisecond))
			}
		}
		for _, o := range s.Summary.Outages {
			all.Outages = append(all.Outages, driver.Outage{Start: o.Start.Add(offset), End: o.End.Add(offset)})
		}
	}
	return all.OutageSeconds()
}

// judge applies what only the whole run can be judged by: the server's commits
// (shard 0's reading) against all the clients', and the spread of the shards'
// clocks; with the shards' own invalid flags, one flag of each name.
func (m *merger) judge(sum *Summary, flags []Flag) []Flag {
	if m.commitsChecked(sum) {
		// Shard 0 counted the server's commits in the database, less its own
		// sessions'; the other shards' own sessions (their checks and clocks) come
		// off here, and the tolerance is shard 0's: its span and autovacuum.
		e := evidence{commitsRead: true, serverCommits: sum.Server.Commits, clientCommits: sum.CommitsTotal, unsettled: sum.Server.CommitsUnsettled}
		for i, s := range m.shards {
			p, _ := s.Detail.Params["shard"].(map[string]any)
			if i > 0 {
				own, _ := number(p["own_commits"])
				e.serverCommits -= int64(own)
				continue
			}
			span, _ := number(p["span_s"])
			nap, _ := number(p["naptime_s"])
			work, _ := number(p["autovacuum_work"])
			e.span, e.naptime, e.autovacuumWork = time.Duration(span*float64(time.Second)), time.Duration(nap*float64(time.Second)), int(work)
		}
		flags = append(flags, judgeCommits(e)...)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range m.shards {
		if p, ok := s.Detail.Params["shard"].(map[string]any); ok {
			if off, ok := number(p["clock_offset_ms"]); ok {
				lo, hi = min(lo, off), max(hi, off)
			}
		}
	}
	if spread := time.Duration((hi - lo) * float64(time.Millisecond)); hi > lo && spread > maxClockOffset {
		flags = append(flags, Flag{"clock", true, fmt.Sprintf("the shards' clocks differ by %s against the server's (more than %s): their windows did not line up",
			spread.Round(time.Millisecond), maxClockOffset)})
	}
	flags = append(flags, Flag{flagShard, false, fmt.Sprintf("merged from %d shards of %s, %d clients in all", len(m.shards), m.group, sum.Clients)})
	return joinFlags(flags)
}

// StillRunning tells whether a shard of a group is running yet: recorded running
// and begun less than its warm-up, window and five minutes before now. One
// recorded running for longer died without a word (on another machine, where its
// process cannot be checked), and merging marks the run incomplete.
func StillRunning(shards []ShardRun, now time.Time) bool {
	for _, s := range shards {
		d := s.Detail
		if d.Status != store.StatusRunning {
			continue
		}
		w, _ := number(d.Params["warmup_s"])
		dur, _ := number(d.Params["duration_s"])
		if now.Sub(d.Started) < time.Duration((w+dur)*float64(time.Second))+5*time.Minute {
			return true
		}
	}
	return false
}

// number reads a number stored in a run's params (json.Number once read back).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case interface{ Float64() (float64, error) }:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}
