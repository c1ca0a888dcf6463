// Package findmax searches for the highest arrival rate a target carries within a
// latency objective: open-loop runs (engine.Spec.Rate) at rates chosen by
// bisection between one that met the objective and one that did not, then
// confirmation runs at the highest that met it, so that one lucky window does not
// decide. It stops when the bracket is narrow enough or the time budget is spent,
// and says how sure it is.
//
//	obj, _ := findmax.ParseObjective("p99<10ms", "<0.1%")
//	res, err := findmax.Search(ctx, spec, runOne, findmax.Options{Objective: obj})
package findmax

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// Objective is what a run must meet: a latency percentile under a limit and, when
// MaxErrors is not negative, a share of failed transactions at most MaxErrors.
type Objective struct {
	Quantile  float64 // 99 for p99, 99.9 for p99.9, 50 for the median
	Limit     time.Duration
	MaxErrors float64 // a share (0.001 for 0.1%); negative: not checked
}

func (o Objective) String() string {
	s := fmt.Sprintf("p%s < %s", strconv.FormatFloat(o.Quantile, 'f', -1, 64), o.Limit)
	if o.MaxErrors >= 0 {
		s += fmt.Sprintf(", errors <= %s%%", strconv.FormatFloat(100*o.MaxErrors, 'f', -1, 64))
	}
	return s
}

// ParseObjective reads a latency objective ("p99<10ms", "p99.9 < 50ms", "p50<2ms")
// and an error limit ("<0.1%", "" for none).
func ParseObjective(slo, errs string) (Objective, error) {
	o := Objective{MaxErrors: -1}
	s := strings.ReplaceAll(slo, " ", "")
	p, limit, ok := strings.Cut(s, "<")
	if !ok || !strings.HasPrefix(p, "p") {
		return o, fmt.Errorf("--slo %q: write a percentile and a limit, as p99<10ms or p99.9<50ms", slo)
	}
	q, err := strconv.ParseFloat(p[1:], 64)
	if err != nil || q <= 0 || q > 100 {
		return o, fmt.Errorf("--slo %q: the percentile %q is not one from p0 to p100", slo, p)
	}
	d, err := time.ParseDuration(strings.TrimPrefix(limit, "="))
	if err != nil || d <= 0 {
		return o, fmt.Errorf("--slo %q: the limit %q is not a duration such as 10ms", slo, limit)
	}
	o.Quantile, o.Limit = q, d
	if e := strings.ReplaceAll(errs, " ", ""); e != "" {
		bad := fmt.Errorf("--errors %q: write the most failed transactions allowed as a percentage, as <0.1%%", errs)
		v, ok := strings.CutPrefix(e, "<=")
		if !ok {
			if v, ok = strings.CutPrefix(e, "<"); !ok {
				return o, bad
			}
		}
		share, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || !strings.HasSuffix(v, "%") || share < 0 || share > 100 {
			return o, bad
		}
		o.MaxErrors = share / 100
	}
	return o, nil
}

// Check tells whether a run met the objective, and if not why. A run with a flag
// that makes it invalid did not: its figures are not to be trusted, and a target
// that fell behind its rate (the "rate" flag) did not carry it.
func (o Objective) Check(s *engine.Summary) (bool, string) {
	for _, f := range s.Flags {
		if f.Invalid {
			return false, f.Name + ": " + f.Reason
		}
	}
	if s.Status != store.StatusCompleted {
		return false, "the run did not complete: " + s.Status
	}
	if all := s.Transactions + s.Failed; o.MaxErrors >= 0 && all > 0 && float64(s.Failed) > o.MaxErrors*float64(all) {
		return false, fmt.Sprintf("%.3f%% of transactions failed", 100*float64(s.Failed)/float64(all))
	}
	ms, ok := s.LatencyAt(o.Quantile)
	if !ok {
		return false, "no transaction completed"
	}
	if limit := float64(o.Limit) / float64(time.Millisecond); ms > limit {
		return false, fmt.Sprintf("p%s was %.3f ms", strconv.FormatFloat(o.Quantile, 'f', -1, 64), ms)
	}
	return true, ""
}

// Options shape the search.
type Options struct {
	Objective Objective
	// Ceiling is the first rate known too high; 0 measures it: a closed-loop run
	// whose throughput is the most the target carries with these clients.
	Ceiling float64
	// Confirm is how many more runs at the rate found must meet the objective.
	Confirm int
	// Resolution stops the bisection when the rates that met and did not meet
	// the objective are closer than this share of the higher one (0.05: 5%).
	Resolution float64
	// Budget stops the search, with what it found so far, once this much time
	// has passed; 0 is no limit.
	Budget time.Duration
	// Progress receives a line per run; nil is none.
	Progress io.Writer
}

// Step is one run of the search.
type Step struct {
	Rate    float64 // requested; 0 for the closed-loop run that measured the ceiling
	Confirm bool    // a confirmation run
	// Met: the run met the objective; the closed-loop run did so at the
	// throughput it reached (Summary.TPS).
	Met     bool
	Why     string // why it did not meet the objective
	Summary *engine.Summary
}

// Result is what the search found.
type Result struct {
	Objective Objective
	// Found is the answer, as Read reads it back from Steps.
	Found Found
	// Above is the lowest open-loop rate that did not meet the objective, the
	// bracket's upper side (the ceiling when every rate tried met it).
	Above   float64
	Ceiling float64 // the closed-loop throughput the search started from
	Steps   []Step
	// Confirm is how many confirmation runs were asked for (Options.Confirm).
	Confirm int
	// BudgetSpent: the budget ended the search before the bracket was narrow
	// enough or the confirmations were run.
	BudgetSpent bool
}

// Answer is what the search found, in a few words: "900 tx/s", "900 tx/s, not
// confirmed (...)", "at least 20725 tx/s", "none: no rate met p99 < 5ms"; Sure
// says why and how sure, and Found.Doubt whether the runs can be trusted at all.
func (r *Result) Answer() string {
	f := r.Found
	if !f.OK {
		return "none: " + r.Objective.NoRate()
	}
	s := fmt.Sprintf("%.0f tx/s", f.Rate)
	switch {
	case f.Bound:
		s = "at least " + s
	case f.Confirmed < r.Confirm:
		s += fmt.Sprintf(", not confirmed (%d of %d confirmation runs made)", f.Confirmed, r.Confirm)
	}
	return s
}

// Sure says how sure the result is, in a sentence.
func (r *Result) Sure() string {
	f := r.Found
	edge := highestMet(r.Steps, math.Inf(1)) // the open-loop side of the bracket
	var s string
	switch {
	case len(r.Steps) == 0:
		return "no run was made"
	case !f.OK && edge == 0 && r.Above > 0 && r.Above < r.Ceiling:
		s = fmt.Sprintf("no rate met the objective: the lowest tried, %.0f tx/s, did not", r.Above)
	case !f.OK:
		s = "no rate met the objective"
	case f.Bound:
		s = fmt.Sprintf("the closed-loop run met the objective at %.0f tx/s, the most its clients carried, so the answer is at least that", f.Rate)
		if edge > 0 {
			s += fmt.Sprintf("; open loop, the edge lies between %.0f and %.0f tx/s", edge, r.Above)
		}
	default:
		s = fmt.Sprintf("the edge lies between %.0f and %.0f tx/s (%.1f%% apart)", f.Rate, r.Above, 100*(r.Above-f.Rate)/r.Above)
		if f.Confirmed > 0 {
			s += fmt.Sprintf("; %.0f tx/s met it again in %d confirmation run(s)", f.Rate, f.Confirmed)
		}
	}
	if r.BudgetSpent {
		s += "; the time budget ended the search early"
	}
	return s
}

// Runner makes one run of spec and returns its summary, as `pgbakeoff run` does.
type Runner func(ctx context.Context, spec engine.Spec) (*engine.Summary, error)

// Search finds the highest rate within the objective for spec's workload and
// clients. Every run is a whole run of spec (warm-up and window) at one rate.
func Search(ctx context.Context, spec engine.Spec, run Runner, o Options) (*Result, error) {
	if o.Resolution <= 0 {
		o.Resolution = 0.05
	}
	res := &Result{Objective: o.Objective, Confirm: o.Confirm}
	start := time.Now()
	out := o.Progress
	if out == nil {
		out = io.Discard
	}
	overBudget := func() bool {
		if o.Budget > 0 && time.Since(start) >= o.Budget {
			res.BudgetSpent = true
			return true
		}
		return false
	}
	step := func(rate float64, confirm bool) (bool, error) {
		s := spec
		s.Rate = rate
		s.Labels = map[string]string{}
		for k, v := range spec.Labels {
			s.Labels[k] = v
		}
		s.Labels["find_max_rate"] = strconv.FormatFloat(rate, 'f', -1, 64)
		sum, err := run(ctx, s)
		if sum == nil {
			return false, err
		}
		st := Step{Rate: rate, Confirm: confirm, Summary: sum}
		st.Met, st.Why = o.Objective.Check(sum)
		res.Steps = append(res.Steps, st)
		verdict := "met"
		if !st.Met {
			verdict = "not met: " + st.Why
		}
		what := fmt.Sprintf("%.0f tx/s", rate)
		if rate == 0 {
			// The ceiling's run measures; when it met the objective too, its
			// throughput is a lower bound of the answer.
			what, verdict = "closed loop", fmt.Sprintf("ceiling %.0f tx/s, objective %s", sum.TPS, verdict)
		} else if confirm {
			what += " (confirming)"
		}
		p, _ := sum.LatencyAt(o.Objective.Quantile)
		fmt.Fprintf(out, "find-max: run %d, %s: %.0f tps, p%s %.3f ms, %d failed: %s\n", sum.RunID, what, sum.TPS,
			strconv.FormatFloat(o.Objective.Quantile, 'f', -1, 64), p, sum.Failed, verdict)
		return st.Met, err
	}

	hi := o.Ceiling
	if hi <= 0 {
		if _, err := step(0, false); err != nil {
			return finish(res, 0), err
		}
		hi = res.Steps[0].Summary.TPS
		if hi <= 0 {
			return res, fmt.Errorf("the closed-loop run completed no transaction, so there is no rate to search below")
		}
	}
	res.Ceiling = hi
	lo := 0.0
	// Bisection from two thirds of the ceiling: a target meets most objectives
	// somewhere below its closed-loop peak.
	r := math.Floor(hi * 2 / 3)
	// Rates are whole transactions a second: the bracket is never narrower than one.
	open := func() bool { return hi-lo > max(1, o.Resolution*hi) && r > lo && r < hi }
	for {
		for open() && !overBudget() {
			met, err := step(r, false)
			if err != nil {
				return finish(res, hi), err
			}
			if met {
				lo = r
			} else {
				hi = r
			}
			r = math.Floor((lo + hi) / 2)
		}
		if lo == 0 || res.BudgetSpent {
			return finish(res, hi), nil
		}
		// Confirm the edge; a miss makes it the new upper side.
		confirmed := 0
		for confirmed < o.Confirm && !overBudget() {
			met, err := step(lo, true)
			if err != nil {
				return finish(res, hi), err
			}
			if !met {
				break
			}
			confirmed++
		}
		if confirmed == o.Confirm || res.BudgetSpent {
			return finish(res, hi), nil
		}
		hi, lo = lo, highestMet(res.Steps, lo)
		r = math.Floor((lo + hi) / 2)
	}
}

// highestMet is the highest open-loop rate below limit that met the objective
// in a run that was not then refuted by a confirmation at the same rate; 0 if
// none.
func highestMet(steps []Step, limit float64) float64 {
	best := 0.0
	failed := map[float64]bool{}
	for _, s := range steps {
		if !s.Met {
			failed[s.Rate] = true
		}
	}
	for _, s := range steps {
		if s.Met && s.Rate > 0 && s.Rate < limit && !failed[s.Rate] && s.Rate > best {
			best = s.Rate
		}
	}
	return best
}

// finish closes the search with hi the bracket's upper side and reads its answer back
// from its steps, as a report will.
func finish(res *Result, hi float64) *Result {
	res.Above = hi
	res.Found = Read(res.Steps)
	return res
}
