package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

// meets tells whether a run met the report's objective, by the rule find-max
// judges its runs by (findmax.Objective.Check), so that a report and the search
// never disagree: it counts (completed, no invalid flag: one that fell behind its
// rate does not), its failures are within the limit, and its latency at the
// objective's percentile is under it.
func (a *analysis) meets(run Run) bool {
	if a.r.Objective == nil || run.latency == nil {
		return false
	}
	sum := &engine.Summary{Status: run.Status, Transactions: run.Committed, Failed: run.Failed}
	for _, f := range run.Flags {
		sum.Flags = append(sum.Flags, engine.Flag{Name: f.Name, Invalid: f.Invalid, Reason: f.Reason})
	}
	sum.SetLatency(run.latency)
	met, _ := a.r.Objective.Check(sum)
	return met
}

// maxRates are, for one target and client count of an open-loop workload, the
// highest rate within the objective in each repetition or search: the rate steps
// are one curve per repetition, walked upwards, and a search's result is read
// back from its runs (findmax.Best: a confirmation that failed refutes the rate).
// One that met it at no rate counts 0. ids are the runs that set each (the
// first when none met it).
func (a *analysis) maxRates(wl workload, target string, clients int) (rates []float64, ids []int64) {
	type curve struct {
		steps []findmax.Step
		ids   []int64
	}
	type key struct {
		repeat int
		search string
	}
	curves := map[key]*curve{}
	var order []key
	for _, run := range wl.Runs {
		if run.Target != target || run.Clients != clients || run.Rate == 0 {
			continue
		}
		k := key{run.Repeat, run.Search}
		c := curves[k]
		if c == nil {
			c = &curve{}
			curves[k] = c
			order = append(order, k)
		}
		c.steps = append(c.steps, findmax.Step{Rate: float64(run.Rate), Met: a.meets(run)})
		c.ids = append(c.ids, run.ID)
	}
	slices.SortStableFunc(order, func(x, y key) int { return cmp.Or(cmp.Compare(x.repeat, y.repeat), cmp.Compare(x.search, y.search)) })
	for _, k := range order {
		c := curves[k]
		best, id := findmax.Read(c.steps).Rate, c.ids[0]
		for i, st := range c.steps {
			if best > 0 && st.Met && st.Rate == best {
				id = c.ids[i]
			}
		}
		rates, ids = append(rates, best), append(ids, id)
	}
	return rates, ids
}

// objectiveTable is, per client count, each target's highest rate within the
// objective, aggregated over its repetitions with their spread, and its ratio
// to the baseline's; empty without an objective or open-loop runs.
func (a *analysis) objectiveTable(wl workload) mdTable {
	if a.r.Objective == nil || len(wl.Rates) == 0 && !wl.Search {
		return mdTable{}
	}
	t := a.targetsTable("clients", true)
	clients := slices.Clone(wl.Clients)
	for _, c := range clients {
		rw := row{m: metric{key: "max_rate", label: "max rate", unit: " tx/s", higher: true}, kind: measured}
		for _, tg := range a.targets {
			vals, ids := a.maxRates(wl, tg.Name, c)
			v := value{vals: vals, ids: ids, ok: len(vals) > 0}
			if v.ok {
				v.sum = stats.Summarize(vals)
				v.agg = stats.Aggregate(a.aggregate, vals, true)
			}
			rw.vals = append(rw.vals, v)
		}
		rw.ratios = a.ratios(rw.vals, nil)
		t.add(a.targetCells(rw, nil, []string{strconv.Itoa(c)}, []string{""}, []string{"num"}))
	}
	return t
}

// objectiveLegend says what objectiveTable's cells are.
func (a *analysis) objectiveLegend(wl workload) string {
	if wl.Search {
		return fmt.Sprintf("The highest rate (tx/s) a find-max search found within the objective, %s: a valid run at it met the objective "+
			"and no run at it failed to, confirmations included; the %s over repetitions, a search that met it at no rate counting 0.", a.r.Objective, a.aggWord())
	}
	return fmt.Sprintf("The highest rate (tx/s) at which a valid run met the objective, %s, in each repetition of the rate steps; "+
		"the %s over repetitions, a run that fell behind its rate counting as not met.", a.r.Objective, a.aggWord())
}

// curveChart is latency against throughput for an open-loop workload: for each
// target (and client count), the p99 of the valid runs at each rate against the
// throughput they reached, so that the knee where latency climbs shows.
func (a *analysis) curveChart(wl workload) (figure, bool) {
	if len(wl.Rates) == 0 && !wl.Search {
		return figure{}, false
	}
	name := "curve-" + wl.slug
	title := "p99 latency against throughput — " + wl.Name
	ch := lineChart{Name: name, Title: title, X: axis{Label: "throughput (tps)", FromZero: true}, Y: axis{Label: "p99 latency (ms)", Log: true}}
	for i, t := range a.targets {
		for _, c := range wl.Clients {
			s := series{Name: t.Name, Color: color(i), Dots: true}
			if len(wl.Clients) > 1 {
				s.Name = fmt.Sprintf("%s, %d clients", t.Name, c)
			}
			if wl.Search {
				s.Points = searchPoints(wl, t.Name, c)
			}
			for _, g := range wl.groups {
				if g.clients != c || g.rate == 0 {
					continue
				}
				tps, p99 := a.stat(metricOf(wl, "tps"), g.cells[i]), a.stat(metricOf(wl, "p99"), g.cells[i])
				if !tps.ok || !p99.ok || p99.agg <= 0 {
					continue
				}
				s.Points = append(s.Points, pt{X: tps.agg, Y: p99.agg, Lo: p99.sum.Min, Hi: p99.sum.Max,
					Title: fmt.Sprintf("%s, %s: %s tps, p99 %s ms", t.Name, g.label(), num(tps.agg), num(p99.agg))})
			}
			if len(s.Points) > 0 {
				ch.Series = append(ch.Series, s)
			}
		}
	}
	if len(ch.Series) == 0 {
		return figure{}, false
	}
	caption := fmt.Sprintf("Each point is one rate: the %s throughput and p99 of its valid runs, whiskers spanning the runs' p99; "+
		"runs whose target fell behind its rate are left out, so the curve ends at the last rate carried.", a.aggWord())
	if wl.Search {
		caption = "Each point is one valid run of a find-max search: its throughput and p99, the curve each target's searches walked; " +
			"runs whose target fell behind its rate are left out."
	}
	return figure{name: name, title: title, svg: ch.svg(), caption: caption}, true
}

// searchPoints are the valid open-loop runs of a target's searches at a client
// count, by throughput.
func searchPoints(wl workload, target string, clients int) []pt {
	var pts []pt
	for _, r := range wl.Runs {
		if r.Target != target || r.Clients != clients || r.Rate == 0 || !counts(r) || r.TPS <= 0 || r.Latency.P99 <= 0 {
			continue
		}
		pts = append(pts, pt{X: r.TPS, Y: r.Latency.P99, Lo: r.Latency.P99, Hi: r.Latency.P99,
			Title: fmt.Sprintf("%s, run %d at %d tx/s: %s tps, p99 %s ms", target, r.ID, r.Rate, num(r.TPS), num(r.Latency.P99))})
	}
	slices.SortFunc(pts, func(x, y pt) int { return cmp.Compare(x.X, y.X) })
	return pts
}

// metricOf is the metric of a workload's tables with key, or one reading a run's
// figure by that key (tps, p99) where the tables have none.
func metricOf(wl workload, key string) metric {
	for _, m := range wl.metrics {
		if m.key == key {
			return m
		}
	}
	switch key {
	case "tps":
		return metric{key: "tps", get: func(r Run) (float64, bool) { return r.TPS, r.TPS > 0 }}
	case "p99":
		return metric{key: "p99", get: func(r Run) (float64, bool) { return r.Latency.P99, r.Latency.P99 > 0 }}
	}
	return metric{key: key, get: func(Run) (float64, bool) { return math.NaN(), false }}
}
