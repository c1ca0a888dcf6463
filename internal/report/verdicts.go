package report

import (
	"math"

	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

// Verdict is one target against the baseline in one group of a workload, by
// the headline figure, as the tables say it: the ratio of the medians and
// stats.Compare's outcome.
type Verdict struct {
	Workload, Group  string
	Target, Baseline string
	Metric           string
	Ratio            float64 // target's median over the baseline's; NaN when there is none
	Outcome          stats.Outcome
	Reason           string
}

// Slower is how much slower the target is than the baseline, as a share of the
// baseline's figure: 0.07 for 7% slower, negative when it is faster.
func (v Verdict) Slower() float64 {
	if math.IsNaN(v.Ratio) {
		return 0
	}
	return 1 - v.Ratio
}

// Fails tells whether the verdict fails --fail-if-slower at limit (0.05 for
// 5%): the target is slower beyond the noise, and by more than limit.
func (v Verdict) Fails(limit float64) bool {
	return v.Outcome == stats.Slower && v.Slower() > limit
}

// Verdicts are every target's verdicts against the baseline, workload by
// workload and group by group.
func Verdicts(r *Report) []Verdict {
	a := newAnalysis(r)
	var out []Verdict
	for _, wl := range a.workloads {
		for _, g := range wl.groups {
			for _, rw := range g.rows {
				for i, vd := range rw.verdicts {
					if vd == nil {
						continue
					}
					out = append(out, Verdict{Workload: wl.Name, Group: g.label(), Target: a.targets[i].Name,
						Baseline: a.targets[a.base].Name, Metric: rw.m.label, Ratio: vd.Ratio, Outcome: vd.Outcome, Reason: vd.Reason})
				}
			}
		}
	}
	return out
}
