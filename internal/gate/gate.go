// Package gate judges a run against pass/fail conditions (--fail-if), so that a
// benchmark in CI fails on a regression: p99<20ms, tps>1000, errors<0.1%,
// nopm>50000. A gate names a figure of the run's summary, a comparison and a
// bound; a latency bound carries its unit, an error share its percent sign.
package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// Gate is one condition a run must meet.
type Gate struct {
	Text   string  // as given
	Figure string  // "p99", "avg", "tps", "errors", or a workload's measure ("nopm", "qps", "tpm")
	Op     string  // "<", "<=", ">" or ">="
	Bound  float64 // milliseconds for latencies, a share (0-1) for errors, else the figure's unit
	// quantile is the latency percentile of a pNN figure; 0 for the others.
	quantile float64
}

// Parse reads a gate: FIGURE OP BOUND, as p99<20ms, p99.9<=0.5s, avg<5ms,
// tps>1000, errors<0.1%, nopm>=50000.
func Parse(text string) (Gate, error) {
	s := strings.ReplaceAll(strings.TrimSpace(text), " ", "")
	g := Gate{Text: text}
	i := strings.IndexAny(s, "<>")
	if i <= 0 {
		return g, fmt.Errorf("--fail-if %q: write a figure, < or > and a bound, as p99<20ms, tps>1000 or errors<0.1%%", text)
	}
	g.Figure, g.Op = strings.ToLower(s[:i]), s[i:i+1]
	bound := s[i+1:]
	if b, ok := strings.CutPrefix(bound, "="); ok {
		g.Op, bound = g.Op+"=", b
	}
	var err error
	switch {
	case g.Figure == "avg" || strings.HasPrefix(g.Figure, "p"):
		err = g.latency(bound)
	case g.Figure == "errors":
		err = g.share(bound)
	default:
		g.Bound, err = strconv.ParseFloat(bound, 64)
		if err != nil || math.IsNaN(g.Bound) || math.IsInf(g.Bound, 0) {
			err = fmt.Errorf("the bound %q is not a number", bound)
		}
	}
	if err != nil {
		return g, fmt.Errorf("--fail-if %q: %v", text, err)
	}
	return g, nil
}

// latency reads a latency gate's percentile and bound.
func (g *Gate) latency(bound string) error {
	if g.Figure != "avg" {
		q, err := strconv.ParseFloat(g.Figure[1:], 64)
		if err != nil || q <= 0 || q > 100 {
			return fmt.Errorf("%q is not a percentile from p0 to p100, nor avg", g.Figure)
		}
		g.quantile = q
	}
	d, err := time.ParseDuration(bound)
	if err != nil || d <= 0 {
		return fmt.Errorf("the bound %q is not a latency such as 20ms", bound)
	}
	g.Bound = float64(d) / float64(time.Millisecond)
	return nil
}

// share reads an errors gate's bound: a percentage.
func (g *Gate) share(bound string) error {
	v, pct := strings.CutSuffix(bound, "%")
	x, err := strconv.ParseFloat(v, 64)
	if !pct || err != nil || x < 0 || x > 100 {
		return fmt.Errorf("the bound %q is not a percentage such as 0.1%%", bound)
	}
	g.Bound = x / 100
	return nil
}

// Result is a gate judged on a run.
type Result struct {
	Gate
	Value float64 // the run's figure, in the gate's unit
	Known bool    // false: the run has no such figure
	Pass  bool
	// Invalid is the flag that makes the run invalid, when one does.
	Invalid string
}

// String is one line for people: what was asked, what was measured, the verdict.
func (r Result) String() string {
	verdict := "passed"
	if !r.Pass {
		verdict = "FAILED"
	}
	switch {
	case !r.Known:
		return fmt.Sprintf("gate %s: %s, the run has no %s", r.Text, verdict, r.Figure)
	case r.Invalid != "":
		return fmt.Sprintf("gate %s: %s, %s was %s but the run is invalid (%s)", r.Text, verdict, r.Figure, r.valueText(), r.Invalid)
	}
	return fmt.Sprintf("gate %s: %s, %s was %s", r.Text, verdict, r.Figure, r.valueText())
}

func (r Result) valueText() string {
	switch {
	case r.Figure == "errors":
		return strconv.FormatFloat(100*r.Value, 'g', 4, 64) + "%"
	case r.Figure == "avg" || r.quantile > 0:
		return strconv.FormatFloat(r.Value, 'f', 3, 64) + " ms"
	}
	return strconv.FormatFloat(r.Value, 'f', -1, 64)
}

// Judge judges every gate on the run's summary. A figure the run lacks fails its
// gate: a gate must not pass on nothing; so does every gate of a run flagged
// invalid (but for its faults, done on purpose), whose figures are not to be
// trusted either way.
func Judge(gates []Gate, s *engine.Summary) (results []Result, passed bool) {
	passed = true
	invalid := ""
	for _, f := range s.Flags {
		if f.Invalid && f.Name != "fault" && invalid == "" {
			invalid = f.Name
		}
	}
	for _, g := range gates {
		r := Result{Gate: g, Invalid: invalid}
		r.Value, r.Known = figure(g, s)
		if r.Known && invalid == "" {
			r.Pass = compare(r.Value, g.Op, g.Bound)
		}
		passed = passed && r.Pass
		results = append(results, r)
	}
	return results, passed
}

// figure is the run's value of the gate's figure.
func figure(g Gate, s *engine.Summary) (float64, bool) {
	switch {
	case g.Figure == "avg":
		return s.LatencyMs.Avg, s.Transactions > 0
	case g.quantile > 0:
		if v, ok := s.LatencyAt(g.quantile); ok {
			return v, true
		}
		return quantileOf(s, g.quantile)
	case g.Figure == "errors":
		all := s.Transactions + s.Failed
		if all == 0 {
			return 0, false
		}
		return float64(s.Failed) / float64(all), true
	}
	name := g.Figure
	if name != "tps" {
		name = strings.ToUpper(name) // the workloads' measures: NOPM, TPM, QPS
	}
	return s.Measure(name)
}

// quantileOf is one of the summary's stored percentiles, for a summary without
// its histogram.
func quantileOf(s *engine.Summary, q float64) (float64, bool) {
	l := s.LatencyMs
	for _, p := range []struct {
		q float64
		v float64
	}{{50, l.P50}, {90, l.P90}, {95, l.P95}, {99, l.P99}, {99.9, l.P999}, {100, l.Max}} {
		if p.q == q {
			return p.v, s.Transactions > 0
		}
	}
	return 0, false
}

func compare(v float64, op string, bound float64) bool {
	switch op {
	case "<":
		return v < bound
	case "<=":
		return v <= bound
	case ">":
		return v > bound
	}
	return v >= bound
}
