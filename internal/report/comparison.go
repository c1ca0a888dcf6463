package report

import (
	"math"
	"slices"
)

// Comparison is what `compare --json` prints: the tables compare shows, as
// figures. Per workload and group (client count, and rate for open-loop runs),
// each metric's figure for every target, its ratio to the baseline's and, on
// the headline metric, the verdict of the test the tables use (stats.Compare).
// Figures that do not exist are null, never NaN.
type Comparison struct {
	SchemaVersion int                `json:"schema_version"` // engine.SchemaVersion
	Source        string             `json:"source"`
	Baseline      string             `json:"baseline"`
	Noise         float64            `json:"noise"`     // 0.05: differences below 5% are within noise
	Aggregate     string             `json:"aggregate"` // median, mean or best
	Targets       []ComparedTarget   `json:"targets"`
	Workloads     []ComparedWorkload `json:"workloads"`
	// Gate is the judgement of --fail-if-slower; nil without it.
	Gate *Gate `json:"gate,omitempty"`
}

// ComparedTarget is one side of the comparison.
type ComparedTarget struct {
	Name    string            `json:"name"`
	Version string            `json:"version"`
	Labels  map[string]string `json:"labels"`
	Runs    []int64           `json:"runs"` // every run of the target compared, ascending
}

// ComparedWorkload is one workload's tables.
type ComparedWorkload struct {
	Name   string          `json:"name"`
	Kind   string          `json:"kind"`
	Metric string          `json:"metric"` // the headline metric: "tps", "NOPM"
	Groups []ComparedGroup `json:"groups"`
}

// ComparedGroup is one table: a workload at one client count and rate.
type ComparedGroup struct {
	Label   string           `json:"label"` // "8 clients", "8 clients at 5000 tx/s"
	Clients int              `json:"clients"`
	Rate    int              `json:"rate"` // 0: closed loop
	Metrics []ComparedMetric `json:"metrics"`
	// Runs are each target's runs in the group, those that count and those
	// that do not, with why.
	Runs []GroupRuns `json:"runs"`
}

// ComparedMetric is one row of a table.
type ComparedMetric struct {
	Name     string   `json:"name"`  // "metric" for the headline, "p99", "price" ...
	Label    string   `json:"label"` // as the table says it: "tps", "p99 ms"
	Higher   bool     `json:"higher_is_better"`
	Headline bool     `json:"headline"`
	Figures  []Figure `json:"figures"` // one per target, in the order of targets
}

// Figure is one target's figure in a row.
type Figure struct {
	Target string `json:"target"`
	// Value is the runs' aggregate, or the price; null when there is none.
	Value *float64 `json:"value"`
	// Values are the valid runs' figures, in the order of Runs; empty for
	// prices, which are not measured.
	Values []float64 `json:"values"`
	Runs   []int64   `json:"runs"`
	Min    *float64  `json:"min"`
	Max    *float64  `json:"max"`
	CV     *float64  `json:"cv"` // coefficient of variation of two runs or more
	// HighVariance: the runs spread more than the noise allows.
	HighVariance bool `json:"high_variance"`
	// Ratio is the value over the baseline's; Difference is Ratio-1. Both null
	// at the baseline and where either side has no figure.
	Ratio      *float64 `json:"ratio"`
	Difference *float64 `json:"difference"`
	// Verdict is the test's on the headline row, nil elsewhere and at the baseline.
	Verdict *ComparedVerdict `json:"verdict,omitempty"`
}

// ComparedVerdict is stats.Compare's verdict on a target against the baseline.
type ComparedVerdict struct {
	Outcome string `json:"outcome"` // faster, slower, within noise, not enough runs
	// MoreRuns estimates the repetitions per target that would tell the two
	// apart, when the outcome is within noise or not enough runs.
	MoreRuns int    `json:"more_runs"`
	Reason   string `json:"reason"`
}

// GroupRuns are one target's runs in a group.
type GroupRuns struct {
	Target   string        `json:"target"`
	Valid    []int64       `json:"valid"`
	Excluded []ExcludedRun `json:"excluded"`
}

// ExcludedRun is a run that does not count, and why.
type ExcludedRun struct {
	ID     int64  `json:"id"`
	Reason string `json:"reason"`
}

// Gate is --fail-if-slower's judgement: each target against the baseline on
// the headline metric, and whether all passed.
type Gate struct {
	Limit    float64       `json:"limit"` // 0.05 for 5%
	Passed   bool          `json:"passed"`
	Verdicts []GateVerdict `json:"verdicts"`
}

// GateVerdict is one Verdict, judged.
type GateVerdict struct {
	Workload string   `json:"workload"`
	Group    string   `json:"group"`
	Target   string   `json:"target"`
	Baseline string   `json:"baseline"`
	Metric   string   `json:"metric"`
	Ratio    *float64 `json:"ratio"`
	Outcome  string   `json:"outcome"`
	Reason   string   `json:"reason"`
	Failed   bool     `json:"failed"`
}

// Compared is the comparison of the report's targets.
func Compared(r *Report) *Comparison {
	a := newAnalysis(r)
	c := &Comparison{SchemaVersion: r.SchemaVersion, Source: r.Source, Baseline: a.baseName(), Noise: a.noise, Aggregate: a.aggregate,
		Targets: []ComparedTarget{}, Workloads: []ComparedWorkload{}}
	for _, t := range a.targets {
		ct := ComparedTarget{Name: t.Name, Version: t.Version, Labels: t.Labels, Runs: []int64{}}
		for _, w := range r.Workloads {
			for _, run := range w.Runs {
				if run.Target == t.Name {
					ct.Runs = append(ct.Runs, run.ID)
				}
			}
		}
		slices.Sort(ct.Runs)
		c.Targets = append(c.Targets, ct)
	}
	for _, wl := range a.workloads {
		cw := ComparedWorkload{Name: wl.Name, Kind: wl.Kind, Metric: wl.metrics[0].label, Groups: []ComparedGroup{}}
		for _, g := range wl.groups {
			cw.Groups = append(cw.Groups, a.comparedGroup(g))
		}
		c.Workloads = append(c.Workloads, cw)
	}
	return c
}

func (a *analysis) comparedGroup(g group) ComparedGroup {
	cg := ComparedGroup{Label: g.label(), Clients: g.clients, Rate: g.rate, Metrics: []ComparedMetric{}, Runs: []GroupRuns{}}
	for i, c := range g.cells {
		gr := GroupRuns{Target: a.targets[i].Name, Valid: []int64{}, Excluded: []ExcludedRun{}}
		for _, run := range c.valid {
			gr.Valid = append(gr.Valid, run.ID)
		}
		for _, run := range c.excluded {
			gr.Excluded = append(gr.Excluded, ExcludedRun{ID: run.ID, Reason: why(run)})
		}
		cg.Runs = append(cg.Runs, gr)
	}
	for _, rw := range g.rows {
		if rw.kind == runCount {
			continue // Runs says it
		}
		cm := ComparedMetric{Name: rw.m.key, Label: rw.m.label, Higher: rw.m.higher, Headline: rw.m.headline, Figures: []Figure{}}
		for i, v := range rw.vals {
			cm.Figures = append(cm.Figures, a.figure(rw, i, v))
		}
		cg.Metrics = append(cg.Metrics, cm)
	}
	return cg
}

// figure is target i's figure v in row rw.
func (a *analysis) figure(rw row, i int, v value) Figure {
	f := Figure{Target: a.targets[i].Name, Values: []float64{}, Runs: []int64{}}
	if v.ok {
		f.Value = finite(v.agg)
	}
	if v.sum.N > 0 {
		f.Values, f.Runs = append(f.Values, v.vals...), append(f.Runs, v.ids...)
		f.Min, f.Max = finite(v.sum.Min), finite(v.sum.Max)
		if v.sum.N >= 2 {
			f.CV = finite(v.sum.CV)
		}
		f.HighVariance = v.high
	}
	if i < len(rw.ratios) {
		if f.Ratio = finite(rw.ratios[i]); f.Ratio != nil {
			f.Difference = finite(*f.Ratio - 1)
		}
	}
	if i < len(rw.verdicts) && rw.verdicts[i] != nil {
		vd := rw.verdicts[i]
		f.Verdict = &ComparedVerdict{Outcome: string(vd.Outcome), MoreRuns: vd.MoreRuns, Reason: vd.Reason}
	}
	return f
}

// finite is x, or nil when x is NaN or infinite, which JSON cannot say.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Judge is --fail-if-slower's gate on verdicts: it fails when a target is
// slower than the baseline by more than limit (0.05 for 5%), beyond the noise.
func Judge(verdicts []Verdict, limit float64) *Gate {
	g := &Gate{Limit: limit, Passed: len(verdicts) > 0, Verdicts: []GateVerdict{}}
	for _, v := range verdicts {
		failed := v.Fails(limit)
		if failed {
			g.Passed = false
		}
		g.Verdicts = append(g.Verdicts, GateVerdict{Workload: v.Workload, Group: v.Group, Target: v.Target, Baseline: v.Baseline,
			Metric: v.Metric, Ratio: finite(v.Ratio), Outcome: string(v.Outcome), Reason: v.Reason, Failed: failed})
	}
	return g
}
