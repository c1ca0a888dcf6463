package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

// meets tells whether a run met the report's objective, and if not why, by the
// rule find-max judges its runs by (findmax.Objective.Check), so that a report
// and the search never disagree: it counts (completed, no invalid flag: one that
// fell behind its rate does not), its failures are within the limit, and its
// latency at the objective's percentile is under it.
func (a *analysis) meets(run Run) (bool, string) {
	if a.r.Objective == nil || run.latency == nil {
		return false, "no latency histogram"
	}
	return a.r.Objective.Check(summaryOf(run))
}

// summaryOf is as much of an engine.Summary as judging a run by an objective and
// reading a search back from its runs take.
func summaryOf(run Run) *engine.Summary {
	sum := &engine.Summary{RunID: run.ID, TPS: run.TPS, Status: run.Status, Transactions: run.Committed, Failed: run.Failed}
	for _, f := range run.Flags {
		sum.Flags = append(sum.Flags, engine.Flag{Name: f.Name, Invalid: f.Invalid, Reason: f.Reason})
	}
	sum.SetLatency(run.latency)
	return sum
}

// search is one find-max search of a target at a client count, or one
// repetition of its rate steps, and what its runs say it found.
type search struct {
	found findmax.Found
	runs  []int64 // in the order made
	// by is the run that set the rate found; its first run when none did.
	by int64
}

// searches are, for one target and client count of an open-loop workload, what
// each search or repetition found within the objective: the rate steps are one
// curve per repetition, walked upwards, and a search's result is read back from
// its runs, its closed-loop ceiling included (findmax.Read: a confirmation that
// failed refutes the rate; a ceiling that met the objective is a lower bound).
func (a *analysis) searches(wl workload, target string, clients int) []search {
	type key struct {
		repeat int
		search string
	}
	steps := map[key][]findmax.Step{}
	found := map[key]*search{}
	var order []key
	for _, run := range wl.Runs {
		if run.Target != target || run.Clients != clients || run.Rate == 0 && run.Search == "" {
			continue
		}
		k := key{run.Repeat, run.Search}
		if found[k] == nil {
			found[k] = &search{by: run.ID}
			order = append(order, k)
		}
		st := findmax.Step{Rate: float64(run.Rate), Summary: summaryOf(run)}
		st.Met, st.Why = a.meets(run)
		steps[k] = append(steps[k], st)
		found[k].runs = append(found[k].runs, run.ID)
	}
	slices.SortStableFunc(order, func(x, y key) int { return cmp.Or(cmp.Compare(x.repeat, y.repeat), cmp.Compare(x.search, y.search)) })
	var out []search
	for _, k := range order {
		s := found[k]
		s.found = findmax.Read(steps[k])
		for _, st := range steps[k] {
			if s.found.OK && st.Met && (st.Rate == s.found.Rate || s.found.Bound && st.Rate == 0) {
				s.by = st.Summary.RunID
				break
			}
		}
		out = append(out, *s)
	}
	return out
}

// objectiveTable is, per client count, each target's highest rate within the
// objective, aggregated over its searches or repetitions with their spread, and
// beside it the verdict against the baseline's (SearchVersus): a search that found
// no rate is said so and stays out of both. Empty without an objective or
// open-loop runs.
func (a *analysis) objectiveTable(wl workload) *docTable {
	if a.r.Objective == nil || len(wl.Rates) == 0 && !wl.Search {
		return &docTable{}
	}
	t := a.targetsTable("clients", true)
	for _, c := range wl.Clients {
		cells := []docCell{{Text: strconv.Itoa(c), Class: "num"}}
		ss := make([][]search, len(a.targets))
		found := make([][]findmax.Found, len(a.targets))
		for i, tg := range a.targets {
			ss[i] = a.searches(wl, tg.Name, c)
			for _, s := range ss[i] {
				found[i] = append(found[i], s.found)
			}
		}
		for i := range a.targets {
			text, hover := a.searchCell(ss[i])
			cells = append(cells, docCell{Text: text, Title: hover, Class: "num"})
			if i != a.base {
				text, outcome := searchVersus(found[a.base], found[i], a.aggregate, a.noise)
				cells = append(cells, docCell{Text: text, Class: "verdict " + outcomeClass(outcome)})
			}
		}
		t.add(cells...)
	}
	return t
}

// searchCell is a target's cell of objectiveTable and its hover text: the
// aggregate of the rates its searches found with their spread, "≥" before it when
// one is a lower bound, and how many found none; o's NoRate when all did.
func (a *analysis) searchCell(ss []search) (text, hover string) {
	if len(ss) == 0 {
		return "-", ""
	}
	var fs []findmax.Found
	var parts []string
	for _, s := range ss {
		fs = append(fs, s.found)
		switch f := s.found; {
		case !f.OK:
			parts = append(parts, fmt.Sprintf("run %d: none", s.by))
		case f.Bound:
			parts = append(parts, fmt.Sprintf("run %d: at least %s", s.by, num(f.Rate)))
		default:
			parts = append(parts, fmt.Sprintf("run %d: %s", s.by, num(f.Rate)))
		}
	}
	hover = strings.Join(parts, ", ")
	rates := foundRates(fs)
	if len(rates) == 0 {
		return a.r.Objective.NoRate(), hover
	}
	sum := stats.Summarize(rates)
	text = num(stats.Aggregate(a.aggregate, rates, true))
	if bounded(fs) {
		text = "≥" + text
	}
	if sum.N >= 2 {
		text += " ±" + pct(sum.CV)
		if stats.HighVariance(sum, a.noise) {
			text += " !"
		}
	}
	if n := noneFound(fs); n > 0 {
		text += fmt.Sprintf(" (%d of %d found none)", n, len(fs))
	}
	return text, hover
}

// objectiveLegend says what objectiveTable's cells are.
func (a *analysis) objectiveLegend(wl workload) string {
	if wl.Search {
		return fmt.Sprintf("The highest rate (tx/s) a find-max search found within the objective, %s: a valid run at it met the objective "+
			"and no run at it failed to, confirmations included; ≥ marks a lower bound, the throughput of a closed-loop run that met it. "+
			"The %s over repetitions: a search that found no rate is said so and left out of it and of the ratios.", a.r.Objective, a.aggWord())
	}
	return fmt.Sprintf("The highest rate (tx/s) at which a valid run met the objective, %s, in each repetition of the rate steps; "+
		"the %s over repetitions, a run that fell behind its rate counting as not met, and a repetition in which no rate met it "+
		"said so and left out of it and of the ratios.", a.r.Objective, a.aggWord())
}

// objectiveNotes say what a table of searches cannot: the searches whose runs
// contradict each other and why, the answers that are a closed-loop run's lower
// bound, and those no confirmation run confirmed.
func (a *analysis) objectiveNotes(wl workload) []string {
	if a.r.Objective == nil || len(wl.Rates) == 0 && !wl.Search {
		return nil
	}
	var notes []string
	for _, tg := range a.targets {
		for _, c := range wl.Clients {
			for _, s := range a.searches(wl, tg.Name, c) {
				what := fmt.Sprintf("%s, %d clients, runs %s", tg.Name, c, idRange(s.runs))
				switch f := s.found; {
				case f.Bound:
					notes = append(notes, fmt.Sprintf("%s: at least %s tx/s, the closed-loop run %d's throughput, which met the objective: its clients carried no more.",
						what, num(f.Rate), s.by))
				case f.OK && wl.Search && f.Confirmed == 0:
					notes = append(notes, fmt.Sprintf("%s: %s tx/s met the objective in run %d, and no other run confirmed it.", what, num(f.Rate), s.by))
				}
				if d := s.found.Doubt; d != "" {
					notes = append(notes, fmt.Sprintf("%s: unreliable: %s.", what, d))
				}
			}
		}
	}
	return notes
}

// idRange is a list of run ids, consecutive ones as a range: "3-9, 12".
func idRange(ids []int64) string {
	ids = slices.Sorted(slices.Values(ids))
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, strconv.FormatInt(ids[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// curveChart is latency against throughput for an open-loop workload, drawn as
// such a curve is read: for each target (and client count) a line through each
// rate's throughput and p99, in the order of the rates, so that the knee where
// latency climbs shows, and every valid run a point beside it. The rates of
// several searches, or the repetitions of rate steps, join one line.
func (a *analysis) curveChart(wl workload) (figure, bool) {
	if len(wl.Rates) == 0 && !wl.Search {
		return figure{}, false
	}
	name := "curve-" + wl.slug
	title := "p99 latency against throughput — " + wl.Name
	ch := lineChart{Name: name, Title: title, X: axis{Label: "throughput (tps)", FromZero: true}, Y: axis{Label: "p99 latency (ms)", Log: true}}
	for i, t := range a.targets {
		for _, c := range wl.Clients {
			label := t.Name
			if len(wl.Clients) > 1 {
				label = fmt.Sprintf("%s, %d clients", t.Name, c)
			}
			line, runs := a.curve(wl, t.Name, c, label)
			if len(line) == 0 {
				continue
			}
			ch.Series = append(ch.Series, series{Name: label, Color: color(i), Points: line, Title: label},
				series{Name: label, Color: color(i), Points: runs, Dots: true, NoLine: true})
		}
	}
	if len(ch.Series) == 0 {
		return figure{}, false
	}
	runs := "each valid run of the rate steps"
	if wl.Search {
		runs = "each valid open-loop run of a find-max search"
	}
	caption := fmt.Sprintf("The line joins, rate by rate in the order of the rates asked for, the %s throughput and p99 of the valid runs at each; "+
		"a point is %s. Runs whose target fell behind its rate are left out, so the curve ends at the last rate carried.", a.aggWord(), runs)
	return figure{name: name, title: title, svg: ch.svg(), caption: caption}, true
}

// curve is one target's latency-throughput curve at a client count: line has a
// point per rate asked for, ascending, at the aggregate throughput and p99 of its
// valid runs; runs a point per valid run.
func (a *analysis) curve(wl workload, target string, clients int, label string) (line, runs []pt) {
	// The runs' points carry their figures as hover text; the line is theirs.
	byRate := map[int][]Run{}
	for _, r := range wl.Runs {
		if r.Target != target || r.Clients != clients || r.Rate == 0 || !counts(r) || r.TPS <= 0 || r.Latency.P99 <= 0 {
			continue
		}
		byRate[r.Rate] = append(byRate[r.Rate], r)
		runs = append(runs, pt{X: r.TPS, Y: r.Latency.P99,
			Title: fmt.Sprintf("%s, run %d at %d tx/s: %s tps, p99 %s ms", label, r.ID, r.Rate, num(r.TPS), num(r.Latency.P99))})
	}
	for _, rate := range slices.Sorted(maps.Keys(byRate)) {
		var tps, p99 []float64
		for _, r := range byRate[rate] {
			tps, p99 = append(tps, r.TPS), append(p99, r.Latency.P99)
		}
		line = append(line, pt{X: stats.Aggregate(a.aggregate, tps, true), Y: stats.Aggregate(a.aggregate, p99, false)})
	}
	return line, runs
}
