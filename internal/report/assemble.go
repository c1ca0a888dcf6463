package report

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	workloads "github.com/pgbakeoff/pgbakeoff/internal/workload"
)

// Selection is which stored runs a report covers: a study's, or runs chosen by id
// or label.
type Selection struct {
	Study    string
	Runs     []int64
	Labels   []string // key=value; values of one key are alternatives, keys must all match
	Baseline string   // the target the others are compared with; "" for the first
	Noise    float64  // differences below this share are within noise
}

// SelectionError is a selection that names no runs, or runs or a study the store
// does not hold.
type SelectionError struct{ Err error }

func (e SelectionError) Error() string { return e.Err.Error() }
func (e SelectionError) Unwrap() error { return e.Err }

// reportQuantiles are the points of the latency distribution plots: p50 to p99.99,
// then the maximum.
var reportQuantiles = []float64{50, 75, 90, 95, 99, 99.9, 99.99}

// Assemble reads the selected runs from the store into what renderers show.
func Assemble(ctx context.Context, st *store.Store, sel Selection, now time.Time) (*Report, error) {
	r := &Report{SchemaVersion: engine.SchemaVersion, Generated: now, Noise: sel.Noise, Aggregate: string(study.AggregateMedian)}
	var sr studyRuns
	var err error
	if sel.Study != "" {
		sr, err = readStudy(ctx, st, sel.Study, r)
	} else {
		sr.details, err = chosenRuns(ctx, st, sel, r)
	}
	if err != nil {
		return nil, err
	}
	if len(sr.details) == 0 {
		return nil, SelectionError{fmt.Errorf("study %s has no finished runs yet: `pgbakeoff study status` shows what is left", sel.Study)}
	}
	targets, workloads, err := sr.gather()
	if err != nil {
		return nil, err
	}
	if err := sr.order(r, targets, workloads); err != nil {
		return nil, err
	}
	r.Baseline = r.Targets[0].Name
	if sel.Baseline != "" {
		if !slices.ContainsFunc(r.Targets, func(t Target) bool { return t.Name == sel.Baseline }) {
			names := make([]string, len(r.Targets))
			for i, t := range r.Targets {
				names[i] = t.Name
			}
			return nil, SelectionError{fmt.Errorf("--baseline %q is not a target of these runs: choose one of %s", sel.Baseline, strings.Join(names, ", "))}
		}
		r.Baseline = sel.Baseline
	}
	r.Env = environment(r.Targets, r.Workloads)
	return r, nil
}

// studyRuns are the stored runs a report covers, and for a study's runs the
// study, the prices looked up for its targets and each run's repetition.
type studyRuns struct {
	details []*store.RunDetail
	study   *study.Study
	prices  map[string]store.StudyPrice
	repeat  map[int64]int
}

// readStudy reads a study's finished runs, and sets the report's title, source,
// aggregate and the study file's warnings.
func readStudy(ctx context.Context, st *store.Store, name string, r *Report) (studyRuns, error) {
	sr := studyRuns{repeat: map[int64]int{}}
	state, err := st.FindStudy(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return sr, SelectionError{fmt.Errorf("no study %q in the results store: run `pgbakeoff study run FILE` first, or check --results", name)}
	}
	if err != nil {
		return sr, err
	}
	// The stored text parses; only the prices file it names may be gone or changed.
	s, errs := study.ParseAll(state.File, []byte(state.Spec))
	if s == nil {
		return sr, fmt.Errorf("the stored copy of study %s no longer parses: %w", name, errs.Err())
	}
	for _, e := range errs {
		r.Env.Warnings = append(r.Env.Warnings, "study file: "+e.Error())
	}
	sr.study = s
	r.Title = "Study " + s.Name
	r.Source = fmt.Sprintf("study %s (%s, last run %s)", s.Name, state.File, state.Updated.Local().Format(time.DateTime))
	r.Aggregate = string(s.Matrix.Aggregate)
	if sr.prices, err = st.StudyPrices(ctx, state.ID); err != nil {
		return sr, err
	}
	done, err := st.StudyRuns(ctx, state.ID)
	if err != nil {
		return sr, err
	}
	fingerprints := map[string]string{}
	for _, c := range s.Plan() {
		fingerprints[c.Key] = c.Fingerprint
	}
	for _, key := range slices.Sorted(maps.Keys(done)) {
		d := done[key]
		cell := key
		if c, ok := study.SearchKey(key); ok {
			// A search's runs count once it finished: a part of one is no result.
			if done[c].Status != store.StatusCompleted || done[c].Fingerprint != d.Fingerprint {
				continue
			}
			cell = c
		}
		if d.RunID == 0 || fingerprints[cell] == "" || fingerprints[cell] != d.Fingerprint {
			continue
		}
		rd, err := st.Run(ctx, d.RunID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return sr, err
		}
		sr.details = append(sr.details, rd)
		sr.repeat[rd.ID], _ = strconv.Atoi(rd.Labels["repeat"])
	}
	return sr, nil
}

// chosenRuns reads the runs chosen by id or label, and sets the report's title
// and source.
func chosenRuns(ctx context.Context, st *store.Store, sel Selection, r *Report) ([]*store.RunDetail, error) {
	ids, err := labelled(ctx, st, sel.Labels)
	if err != nil {
		return nil, err
	}
	ids = append(ids, sel.Runs...)
	if len(ids) == 0 {
		return nil, SelectionError{errors.New("no runs selected: give --study NAME, --run ID or --label key=value (see `pgbakeoff runs`)")}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var details []*store.RunDetail
	for _, id := range ids {
		rd, err := st.Run(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, SelectionError{fmt.Errorf("run %d is not in the results store (see `pgbakeoff runs`)", id)}
		}
		if err != nil {
			return nil, err
		}
		details = append(details, rd)
	}
	// The title names the runs; the source says only what it adds: how
	// they were chosen, when labels chose them.
	r.Title = "Runs " + joinIDs(ids)
	if len(sel.Labels) > 0 {
		var how []string
		if len(sel.Runs) > 0 {
			how = append(how, "--run "+strings.ReplaceAll(joinIDs(sel.Runs), " ", ""))
		}
		for _, l := range sel.Labels {
			how = append(how, "--label "+l)
		}
		r.Source = "chosen by " + strings.Join(how, " ")
	}
	return details, nil
}

// labelled are the ids of the runs whose labels match: values of one key are
// alternatives; different keys must all match. None without labels.
func labelled(ctx context.Context, st *store.Store, labels []string) ([]int64, error) {
	if len(labels) == 0 {
		return nil, nil
	}
	want := map[string][]string{}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, SelectionError{fmt.Errorf("--label %q: use key=value", l)}
		}
		want[k] = append(want[k], v)
	}
	all, err := st.Runs(ctx, store.Filter{})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, run := range all {
		match := true
		for k, vs := range want {
			match = match && slices.Contains(vs, run.Labels[k])
		}
		if match {
			ids = append(ids, run.ID)
		}
	}
	return ids, nil
}

// gather groups the runs by target and workload, each named by its labels.
func (sr studyRuns) gather() (map[string]*Target, map[string]*Workload, error) {
	var names map[int64]string
	if sr.study == nil {
		names = plainNames(sr.details)
	}
	targets := map[string]*Target{}
	workloads := map[string]*Workload{}
	for _, d := range sr.details {
		run, err := reportRun(d)
		if err != nil {
			return nil, nil, err
		}
		run.Repeat = sr.repeat[d.ID]
		name := cmp.Or(d.Labels["target"], names[d.ID], d.Target)
		run.Target = name
		if targets[name] == nil {
			t := &Target{Name: name, Version: d.ServerVersion, Settings: d.Settings, Labels: map[string]string{}}
			t.Address, _ = d.Params["address"].(string)
			targets[name] = t
		}
		wname := cmp.Or(d.Labels["workload"], d.Workload+" "+d.Script)
		w := workloads[wname]
		if w == nil {
			w = &Workload{Name: wname, Kind: d.Workload, Metric: MetricName(d.Workload)}
			workloads[wname] = w
		}
		if !slices.Contains(w.Clients, d.Clients) {
			w.Clients = append(w.Clients, d.Clients)
		}
		// A search's runs are shown as its result within the study's objective;
		// without one (runs chosen by label) they are rate steps like any others.
		if sr.study != nil && sr.study.Objective != nil {
			run.Search = d.Labels["find_max"]
		}
		w.Search = w.Search || run.Search != ""
		if run.Rate > 0 && run.Search == "" && !slices.Contains(w.Rates, run.Rate) {
			w.Rates = append(w.Rates, run.Rate)
		}
		w.Runs = append(w.Runs, *run)
	}
	return targets, workloads, nil
}

// order puts the targets and workloads in the report: a study's first, in its
// order, with its labels, prices and objective, then the others by name.
func (sr studyRuns) order(r *Report, targets map[string]*Target, workloads map[string]*Workload) error {
	if s := sr.study; s != nil {
		if err := sr.studyOrder(r, targets, workloads); err != nil {
			return err
		}
		if s.Objective != nil {
			if o, err := findmax.ParseObjective(s.Objective.SLO, s.Objective.Errors); err == nil {
				r.Objective = &o
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		r.Targets = append(r.Targets, *targets[name])
	}
	for _, name := range slices.Sorted(maps.Keys(workloads)) {
		r.Workloads = append(r.Workloads, *workloads[name])
	}
	for i := range r.Workloads {
		slices.Sort(r.Workloads[i].Clients)
		slices.Sort(r.Workloads[i].Rates)
	}
	return nil
}

// studyOrder moves the study's targets and workloads from the maps to the
// report. A study gives their order, labels and prices, and every one of them: a
// target whose runs all failed is shown with none.
func (sr studyRuns) studyOrder(r *Report, targets map[string]*Target, workloads map[string]*Workload) error {
	s := sr.study
	for _, sw := range s.Workloads {
		if workloads[sw.Name] == nil {
			workloads[sw.Name] = &Workload{Name: sw.Name, Kind: sw.Kind, Metric: MetricName(sw.Kind)}
		}
		for _, c := range s.Clients(sw) {
			if w := workloads[sw.Name]; !slices.Contains(w.Clients, c) {
				w.Clients = append(w.Clients, c)
			}
		}
	}
	for _, st := range s.Targets {
		t := cmp.Or(targets[st.Name], &Target{Name: st.Name, Labels: map[string]string{}})
		t, err := withStudyTarget(t, st, sr.prices)
		if err != nil {
			return err
		}
		r.Targets = append(r.Targets, *t)
		delete(targets, st.Name)
	}
	for _, sw := range s.Workloads {
		r.Workloads = append(r.Workloads, *workloads[sw.Name])
		delete(workloads, sw.Name)
	}
	return nil
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

func withStudyTarget(t *Target, st *study.Target, prices map[string]store.StudyPrice) (*Target, error) {
	maps.Copy(t.Labels, st.Labels)
	p := st.Price
	if st.PriceLookup != nil {
		var err error
		if p, err = StoredPrice(st, prices); err != nil {
			return nil, err
		}
		if p == nil {
			t.PriceNote = "not looked up yet (" + st.PriceLookup.String() + "): `pgbakeoff study prices FILE` looks it up"
		}
	}
	if p != nil {
		t.Price = reportPrice(p)
	}
	return t, nil
}

// reportPrice is a price as reports show it: a month, an hour broken down,
// and where it comes from.
func reportPrice(p *cost.Price) *Price {
	rp := &Price{Monthly: p.Monthly(), Currency: p.Currency, Detail: p.Detail(), Source: p.Source, Date: p.Date}
	if t, err := time.Parse(time.RFC3339, p.Fetched); err == nil {
		rp.Fetched = t
	}
	for _, c := range p.Components() {
		rp.Hourly = append(rp.Hourly, PriceComponent{Name: c.Name, PerHour: c.Monthly / cost.HoursPerMonth, Detail: c.Detail})
	}
	return rp
}

// StoredPrice is the price a study stored for a target's lookup: nil when
// none is, or when the one stored is for another lookup than the file's.
func StoredPrice(t *study.Target, stored map[string]store.StudyPrice) (*cost.Price, error) {
	sp, ok := stored[t.Name]
	if t.PriceLookup == nil || !ok || sp.Query != t.PriceLookup.Key() {
		return nil, nil
	}
	var p cost.Price
	if err := json.Unmarshal([]byte(sp.Price), &p); err != nil {
		return nil, fmt.Errorf("the stored price of %s does not read: %w", t.Name, err)
	}
	return &p, nil
}

// reportRun reduces a stored run to what reports show.
func reportRun(d *store.RunDetail) (*Run, error) {
	run := &Run{ID: d.ID, Clients: d.Clients, Started: d.Started, Status: d.Status}
	sum := &engine.Summary{}
	if len(d.Summary) > 0 {
		var err error
		if sum, err = workloads.ReadSummary(d.Summary); err != nil {
			return nil, fmt.Errorf("run %d summary: %w", d.ID, err)
		}
		fromSummary(run, sum)
	}
	for _, f := range d.Flags {
		run.Flags = append(run.Flags, Flag{Name: f.Name, Invalid: f.Invalid, Reason: f.Reason})
		run.Invalid = run.Invalid || f.Invalid
	}
	if d.Status != store.StatusCompleted {
		run.Invalid = true
		run.Flags = append(run.Flags, Flag{Name: "status", Invalid: true, Reason: "the run did not complete: " + d.Status})
	}
	// The latency distribution of the whole window, all transaction types.
	all, err := d.WindowLatency()
	if err != nil {
		return nil, err
	}
	run.Percentiles = distribution(all)
	run.latency = all
	start, end := windowSeries(run, d)
	serverFigures(run, d.Samples, start, end)
	if !start.IsZero() {
		for _, o := range sum.Outages {
			run.Outages = append(run.Outages, Span{Start: o.Start.Sub(start).Seconds(), End: o.End.Sub(start).Seconds(), Cause: o.Cause})
		}
	}
	return run, nil
}

// fromSummary sets a run's figures from its stored summary.
func fromSummary(run *Run, sum *engine.Summary) {
	run.Metric, run.TPS = Metric(sum), sum.TPS
	run.Committed, run.Failed = sum.Transactions, sum.Failed
	run.TPM, _ = sum.Measure("TPM")
	run.QPS, _ = sum.Measure("QPS")
	l := sum.LatencyMs
	run.Latency = Latency{Avg: l.Avg, P50: l.P50, P90: l.P90, P95: l.P95, P99: l.P99, P999: l.P999, Max: l.Max}
	run.Warnings = sum.Warnings
	if sum.Rate != nil {
		run.Rate = max(1, int(math.Round(sum.Rate.RequestedTPS))) // below 1 tx/s still open-loop
	}
	if ps, ok := sum.Figures.(engine.PerStatement); ok {
		for _, st := range ps.StatementLatencies() {
			run.Statements = append(run.Statements, Statement{Script: st.Script, Text: st.Text, AvgMs: st.AvgMs, Failures: st.Failures})
		}
	}
	if m := sum.ClientMachine; m != nil {
		run.Machine = m.String()
	}
	for _, f := range sum.Faults {
		rf := Fault{Kind: f.Kind, AtS: f.AtS, T: f.AtS - sum.WarmupS, Done: f.Done, Error: f.Error, NoCommitsMs: f.NoCommitsMs, ResumedMs: f.ResumedMs,
			ClientMaxMs: f.ClientMaxMs, RecoveredMs: f.RecoveredMs, BeforeTPS: f.BeforeTPS, InDoubt: f.InDoubt, Lost: -1,
			Command: engine.RedactCommand(f.Command), Output: engine.RedactCommand(f.Output), ExitCode: f.ExitCode}
		if l := f.Ledger; l != nil {
			rf.Lost, rf.RPOMs = l.Lost, l.RPOMs
		}
		run.Faults = append(run.Faults, rf)
	}
}

// windowSeries sets a run's series from its intervals and returns the edges of
// its measured window.
func windowSeries(run *Run, d *store.RunDetail) (start, end time.Time) {
	// The window's edges are where the server's statistics were read as it opened
	// and closed; runs stored without them start where the first measured
	// interval does.
	var windowEnd time.Time
	for _, ss := range d.ServerStats {
		switch ss.Point {
		case store.PointWindowStart:
			start = ss.At
		case store.PointWindowEnd:
			windowEnd = ss.At
		}
	}
	if start.IsZero() {
		for _, iv := range d.Intervals {
			if iv.Phase == store.PhaseMeasure && (start.IsZero() || iv.Start.Before(start)) {
				start = iv.Start
			}
		}
	}
	end = start
	for _, iv := range d.Intervals {
		if iv.End.After(end) {
			end = iv.End
		}
		secs := iv.End.Sub(iv.Start).Seconds()
		if secs <= 0 || start.IsZero() {
			continue
		}
		run.Series = append(run.Series, Point{T: iv.End.Sub(start).Seconds(), Secs: secs, TPS: float64(iv.Txns) / secs, P99: iv.LatencyMs.P99})
	}
	if !windowEnd.IsZero() {
		end = windowEnd
	}
	return start, end
}

func distribution(h *hdrhistogram.Histogram) []Percentile {
	if h.TotalCount() == 0 {
		return nil
	}
	var out []Percentile
	for _, q := range reportQuantiles {
		out = append(out, Percentile{Quantile: q, Ms: float64(h.ValueAtQuantile(q)) / 1000})
	}
	return append(out, Percentile{Quantile: 100, Ms: float64(h.Max()) / 1000})
}

// serverFigures takes the server's means over the window from the samples, the
// per-second server figures into the series, and the checkpoints' times.
func serverFigures(run *Run, samples []store.Sample, start, end time.Time) {
	var cpu, iops, wal []float64
	waits := map[string]float64{}
	waitSamples := 0
	for _, sm := range samples {
		v := sm.Values
		t := sm.End.Sub(start).Seconds()
		if n := v["checkpoints"]; n > 0 && !start.IsZero() {
			for range int(n) {
				run.Checkpoints = append(run.Checkpoints, t)
			}
		}
		c, hasCPU := v["server_cpu"]
		if !hasCPU {
			c, hasCPU = v["node_cpu"]
		}
		r, hasR := v["read_iops"]
		w, hasW := v["write_iops"]
		b, hasWAL := v["wal_bytes"]
		if i := pointAt(run.Series, t); i >= 0 {
			p := &run.Series[i]
			p.ServerCPU, p.IOPS, p.WALMBps = c, r+w, b/(1<<20)
		}
		// A sample belongs to the window when its middle lies in it, as for validity.
		mid := sm.Start.Add(sm.End.Sub(sm.Start) / 2)
		inWindow := !start.IsZero() && !mid.Before(start) && mid.Before(end)
		if !inWindow {
			continue
		}
		if hasCPU {
			cpu = append(cpu, c)
		}
		if hasR || hasW {
			iops = append(iops, r+w)
		}
		if hasWAL {
			wal = append(wal, b/(1<<20))
		}
		seen := false
		for k, x := range v {
			if class, ok := strings.CutPrefix(k, "wait:"); ok {
				waits[class] += x
				seen = true
			}
		}
		if seen {
			waitSamples++
		}
	}
	run.Sampled = Sampled{CPU: len(cpu) > 0, IOPS: len(iops) > 0, WAL: len(wal) > 0}
	run.ServerCPU, run.IOPS, run.WALMBps = stats.Summarize(cpu).Mean, stats.Summarize(iops).Mean, stats.Summarize(wal).Mean
	for class, sum := range waits {
		run.Waits = append(run.Waits, Wait{Class: class, Share: sum / float64(waitSamples)})
	}
	slices.SortFunc(run.Waits, func(a, b Wait) int {
		return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(a.Class, b.Class))
	})
}

// pointAt is the series point whose second ends nearest t, within half a second.
func pointAt(series []Point, t float64) int {
	best := -1
	for i, p := range series {
		if math.Abs(p.T-t) <= 0.5 && (best < 0 || math.Abs(p.T-t) < math.Abs(series[best].T-t)) {
			best = i
		}
	}
	return best
}

// environment is the client machines that ran the runs and where the targets'
// settings differ.
func environment(targets []Target, workloads []Workload) Environment {
	var env Environment
	env.Client = clientMachines(workloads)
	names := map[string]bool{}
	for _, t := range targets {
		for k := range t.Settings {
			if !target.IncidentalSettings[k] {
				names[k] = true
			}
		}
	}
	if len(targets) > 1 {
		for _, k := range slices.Sorted(maps.Keys(names)) {
			vals := make([]string, len(targets))
			differ := false
			for i, t := range targets {
				vals[i] = t.Name + " " + cmp.Or(t.Settings[k], "default")
				differ = differ || cmp.Or(t.Settings[k], "default") != cmp.Or(targets[0].Settings[k], "default")
			}
			if differ {
				env.Differences = append(env.Differences, k+": "+strings.Join(vals, ", "))
			}
		}
		versions := make([]string, len(targets))
		differ := false
		for i, t := range targets {
			versions[i] = t.Name + " " + t.Version
			differ = differ || t.Version != targets[0].Version
		}
		if differ {
			env.Differences = append([]string{"version: " + strings.Join(versions, ", ")}, env.Differences...)
		}
	}
	return env
}

// clientMachines says which machines ran the runs: the one, or each with its runs.
func clientMachines(workloads []Workload) string {
	runs := map[string][]int64{}
	for _, w := range workloads {
		for _, r := range w.Runs {
			m := cmp.Or(r.Machine, "not recorded")
			runs[m] = append(runs[m], r.ID)
		}
	}
	if len(runs) == 1 {
		for m := range runs {
			return m
		}
	}
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(runs)) {
		ids := runs[m]
		slices.Sort(ids)
		noun := "runs"
		if len(ids) == 1 {
			noun = "run"
		}
		parts = append(parts, fmt.Sprintf("%s (%s %s)", m, noun, joinIDs(ids)))
	}
	return strings.Join(parts, "; ")
}

// MetricName is what a workload's results are compared by (workload.Measured).
func MetricName(kind string) string { return workloads.MeasuresOf(kind).Headline }

// Metric is a run's headline figure: its workload's, or transactions per second
// when it has none (a run that ended before its window).
func Metric(sum *engine.Summary) float64 {
	if v, ok := sum.Measure(MetricName(sum.Workload)); ok {
		return v
	}
	return sum.TPS
}
