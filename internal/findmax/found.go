package findmax

import (
	"fmt"
	"math"
	"strings"
)

// Found is what a search's runs say it found: the highest rate within the
// objective, how it is known and how far to trust it. Its zero value is a search
// that found no rate, which is not a rate of 0: it has no place in a median or a
// ratio, and is shown in the words of Objective.NoRate.
type Found struct {
	OK   bool    // some rate met the objective
	Rate float64 // the highest that did, when OK
	// Bound: Rate is the throughput of the closed-loop run that measured the
	// ceiling, which met the objective: the answer is at least Rate.
	Bound bool
	// Confirmed counts the runs at Rate after the first, each of which met the
	// objective again (one that did not would have refuted the rate).
	Confirmed int
	// Doubt says how the runs contradict each other beyond noise, and why the
	// one that failed did by its own flags; "" when they do not.
	Doubt string
}

// Margin is how far below a rate that met the objective another must fail for
// the two runs to contradict each other, rather than to lie on either side of a
// noisy edge: near its edge a target's latency climbs steeply, and the rate it
// carries varies from run to run by some percent.
const Margin = 0.2

// NoRate is how every output says that a search found no rate within o:
// "no rate met p99 < 5ms".
func (o Objective) NoRate() string { return "no rate met " + o.String() }

// Read is what a search whose runs were steps found, read back from the runs
// alone, as the results store keeps them: the highest open-loop rate that met
// the objective in a run not refuted by another at the same rate, or, when the
// closed-loop run met the objective at a higher throughput, that throughput as a
// lower bound. It is the Found that Search returns.
func Read(steps []Step) Found {
	var f Found
	if best := highestMet(steps, math.Inf(1)); best > 0 {
		f = Found{OK: true, Rate: best, Confirmed: -1}
		for _, s := range steps {
			if s.Rate == best {
				f.Confirmed++
			}
		}
	}
	for _, s := range steps {
		if tps := carried(s); s.Rate == 0 && s.Met && tps > f.Rate {
			f = Found{OK: true, Rate: tps, Bound: true}
		}
	}
	f.Doubt = doubt(steps)
	return f
}

// carried is the rate a step shows the target carried when it met the
// objective: the rate asked for, or the closed-loop run's throughput.
func carried(s Step) float64 {
	if s.Rate > 0 {
		return s.Rate
	}
	if s.Summary != nil {
		return s.Summary.TPS
	}
	return 0
}

// doubt finds the two runs of a search that contradict each other most: one
// that met the objective at a rate, and an open-loop one that did not at a rate
// more than Margin below it. It says which they were and why the second failed.
func doubt(steps []Step) string {
	var met, failed *Step
	worst := 1 / (1 - Margin)
	for i := range steps {
		m := &steps[i]
		if !m.Met || carried(*m) <= 0 {
			continue
		}
		for j := range steps {
			f := &steps[j]
			if f.Met || f.Rate <= 0 {
				continue
			}
			if r := carried(*m) / f.Rate; r >= worst {
				worst, met, failed = r, m, f
			}
		}
	}
	if met == nil {
		return ""
	}
	what := fmt.Sprintf("%.0f tx/s met the objective", met.Rate)
	if met.Rate == 0 {
		what = fmt.Sprintf("the closed-loop run met the objective at %.0f tx/s", carried(*met))
	}
	s := fmt.Sprintf("%s%s, yet %.0f tx/s did not%s: %s", what, runOf(*met), failed.Rate, runOf(*failed), failure(*failed))
	// The other runs' flags tell why too, but for "rate": a target that fell
	// behind is what a search looks for, not a reason to doubt it.
	var others []string
	for i := range steps {
		st := &steps[i]
		if st == failed || st.Summary == nil {
			continue
		}
		for _, fl := range st.Summary.Flags {
			if fl.Invalid && fl.Name != "rate" {
				others = append(others, fmt.Sprintf("run %d %s: %s", st.Summary.RunID, fl.Name, fl.Reason))
			}
		}
	}
	if len(others) > 0 {
		s += "; flagged: " + strings.Join(others, "; ")
	}
	return s
}

// runOf names a step's run, " in run 12", where its summary is known.
func runOf(s Step) string {
	if s.Summary == nil || s.Summary.RunID == 0 {
		return ""
	}
	return fmt.Sprintf(" in run %d", s.Summary.RunID)
}

// failure says why a run did not meet the objective: every flag that made it
// invalid, which is what tells a target that fell behind from a machine that
// was busy with something else, else Why.
func failure(s Step) string {
	var flags []string
	if s.Summary != nil {
		for _, fl := range s.Summary.Flags {
			if fl.Invalid {
				flags = append(flags, fl.Name+": "+fl.Reason)
			}
		}
	}
	if len(flags) > 0 {
		return strings.Join(flags, "; ")
	}
	if s.Why != "" {
		return s.Why
	}
	return "no flag of its own says why"
}
