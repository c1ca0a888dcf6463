package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

const (
	statementsIntro = "Per statement, as pgbench -r times them: the average latency of each execution that succeeded, " +
		"in milliseconds, aggregated over the valid runs."
	seriesIntro = "Per second, each target's median run in full and its other repetitions faint; " +
		"runs left out are dashed. Vertical marks are checkpoints, shaded bands outages; " +
		"negative seconds are the warm-up."
	latencyIntro = "The latency distribution of each target's median run: percentiles on a log scale " +
		"of 1/(1-q), so p90, p99 and p99.9 are evenly spaced, and the maximum at the right."
)

// metaLines describe the report under its title.
func (a *analysis) metaLines() []string {
	var out []string
	if a.r.Source != "" {
		out = append(out, "Source: "+a.r.Source)
	}
	if g := a.generated(); g != "" {
		out = append(out, "Generated: "+g)
	}
	if a.compared() {
		out = append(out, "Baseline: "+a.baseName())
	}
	out = append(out, fmt.Sprintf("Repetitions summarised by their %s; noise threshold %s", a.aggWord(), percent(a.noise)))
	return out
}

func (wl workload) heading() string {
	return fmt.Sprintf("%s (%s, %s)", wl.Name, wl.Kind, wl.metrics[0].label)
}

// fullTable is a group's table of metrics by target, the verdicts in full; in
// the terminal, under the targets' names as names gives them.
func (a *analysis) fullTable(g group, names []string) *docTable {
	t := a.targetsTable("metric", false)
	t.termHead = []string{""}
	for c, i := range t.owner[1:] {
		if t.owner[c] == i {
			t.termHead = append(t.termHead, "vs "+ellipsis(names[a.base], 12))
		} else {
			t.termHead = append(t.termHead, names[i])
		}
	}
	for _, rw := range g.rows {
		leftOut := func(i int) bool { return rw.kind == runCount && len(g.cells[i].excluded) > 0 }
		t.add(a.targetCells(rw, leftOut, docCell{Text: rw.m.label})...)
	}
	return t
}

// targetCells are first and rw's cells for every target and, beside each but
// the baseline, its ratio and verdict, with the verdict's abbreviation for the
// terminal; leftOut marks the targets whose cell leaves runs out.
func (a *analysis) targetCells(rw row, leftOut func(i int) bool, first docCell) []docCell {
	cells := []docCell{first}
	for i := range a.targets {
		c := docCell{Text: a.cellText(rw, i), Title: hover(rw.vals[i], rw.m.unit), Class: "num"}
		if rw.vals[i].high {
			c.Class += " hv"
		}
		if leftOut != nil && leftOut(i) {
			c.Class += " left-out"
		}
		cells = append(cells, c)
		if i == a.base {
			continue
		}
		r := docCell{Text: a.ratioText(rw, i, false), short: a.ratioText(rw, i, true)}
		if rw.verdicts != nil && rw.verdicts[i] != nil {
			v := *rw.verdicts[i]
			r.Title, r.Class, r.note = a.reason(v, i), "verdict "+outcomeClass(v.Outcome), a.verdictNote(v, i, rw.m.label)
		}
		cells = append(cells, r)
	}
	return cells
}

// verdictNote says in full what an abbreviated verdict of target i on metric
// does not: within noise and how many more runs might tell, or too few runs.
// "" for faster and slower, which abbreviate to nothing less.
func (a *analysis) verdictNote(v stats.Verdict, i int, metric string) string {
	name, base := a.targets[i].Name, a.baseName()
	var s string
	switch v.Outcome {
	case stats.WithinNoise:
		s = fmt.Sprintf("%s is within noise of %s on %s", name, base, metric)
	case stats.Unknown:
		s = fmt.Sprintf("%s and %s on %s: not enough valid runs to compare (a verdict needs 2 of each)", name, base, metric)
	default:
		return ""
	}
	if v.MoreRuns > 0 && v.Outcome == stats.WithinNoise {
		s += fmt.Sprintf("; about %d more %s of each might tell them apart", v.MoreRuns, plural(v.MoreRuns, "run", "runs"))
	}
	return s
}

// reason is a verdict's reason with the baseline and target named.
func (a *analysis) reason(v stats.Verdict, i int) string {
	return fmt.Sprintf("a = %s, b = %s: %s", a.baseName(), a.targets[i].Name, v.Reason)
}

func outcomeClass(o stats.Outcome) string {
	switch o {
	case stats.Faster:
		return "faster"
	case stats.Slower:
		return "slower"
	case stats.WithinNoise:
		return "noise"
	}
	return "unknown"
}

// summaryTable is a workload's headline metric by client count and target.
func (a *analysis) summaryTable(wl workload) *docTable {
	if len(wl.groups) == 0 {
		return &docTable{} // searches alone: the objective's table is their summary
	}
	t := a.targetsTable(wl.groupHeader(), true)
	for _, g := range wl.groups {
		t.add(a.targetCells(g.rows[0], nil, docCell{Text: g.short(), Class: "num"})...)
	}
	return t
}

// verdictSummaries say in a sentence per target how it compares with the baseline
// on the headline metric: "pg16 vs pg11: faster at 8 and 16 clients (1.25x); within
// noise at 32 clients (1.02x)".
func (a *analysis) verdictSummaries(wl workload) []string {
	if !a.compared() {
		return []string{"Only one target: nothing to compare."}
	}
	if len(wl.groups) == 0 {
		return nil
	}
	var out []string
	for i, t := range a.targets {
		if i == a.base {
			continue
		}
		type part struct {
			outcome stats.Outcome
			groups  []group
			ratios  []float64
		}
		var parts []*part
		for _, g := range wl.groups {
			v := g.rows[0].verdicts[i]
			if v == nil {
				continue
			}
			k := slices.IndexFunc(parts, func(p *part) bool { return p.outcome == v.Outcome })
			if k < 0 {
				parts = append(parts, &part{outcome: v.Outcome})
				k = len(parts) - 1
			}
			parts[k].groups = append(parts[k].groups, g)
			if r := g.rows[0].ratios[i]; !math.IsNaN(r) {
				parts[k].ratios = append(parts[k].ratios, r)
			}
		}
		var phrases []string
		for _, p := range parts {
			s := fmt.Sprintf("%s at %s", p.outcome, groupsPhrase(p.groups))
			if len(p.ratios) > 0 {
				lo, hi := slices.Min(p.ratios), slices.Max(p.ratios)
				if fmt.Sprintf("%.2f", lo) == fmt.Sprintf("%.2f", hi) {
					s += fmt.Sprintf(" (%.2fx)", lo)
				} else {
					s += fmt.Sprintf(" (%.2fx–%.2fx)", lo, hi)
				}
			}
			phrases = append(phrases, s)
		}
		if len(phrases) == 0 {
			phrases = []string{"no runs to compare"}
		}
		out = append(out, fmt.Sprintf("%s vs %s on %s: %s.", t.Name, a.baseName(), wl.metrics[0].label, strings.Join(phrases, "; ")))
	}
	return out
}

// groupsPhrase names groups in a sentence: "8 and 16 clients", or for open-loop
// runs "1000 and 2000 tx/s with 8 clients, 1000 tx/s with 16 clients".
func groupsPhrase(gs []group) string {
	var clients []int
	rates := map[int][]int{}
	for _, g := range gs {
		if !slices.Contains(clients, g.clients) {
			clients = append(clients, g.clients)
		}
		if g.rate > 0 {
			rates[g.clients] = append(rates[g.clients], g.rate)
		}
	}
	if len(rates) == 0 {
		return andList(clients) + " clients"
	}
	var parts []string
	for _, c := range clients {
		if rs := rates[c]; len(rs) > 0 {
			parts = append(parts, fmt.Sprintf("%s tx/s with %d clients", andList(rs), c))
		} else {
			parts = append(parts, fmt.Sprintf("%d clients in a closed loop", c))
		}
	}
	return strings.Join(parts, ", ")
}

// andList is "8", "8 and 16", "8, 16 and 32".
func andList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// seriesEvents list what the time series of a group mark: outages, and runs left
// out.
func seriesEvents(g group) []string {
	var out []string
	for _, c := range g.cells {
		for _, run := range c.runs {
			for _, o := range run.Outages {
				s := fmt.Sprintf("%s: outage from %s s to %s s", runLabel(run), num(o.Start), num(o.End))
				if o.Cause != "" {
					s += " (" + o.Cause + ")"
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// waitTable lists each target's top wait events by client count.
func (a *analysis) waitTable(wl workload) *docTable {
	t := &docTable{Head: []string{wl.groupHeader(), "target", "top wait events"}, Right: []bool{true, false, false}}
	for _, g := range wl.groups {
		for i, c := range g.cells {
			shares := meanWaits(c.valid, allClasses(c.valid))
			if len(shares) == 0 {
				continue
			}
			classes := slices.SortedFunc(maps.Keys(shares), func(x, y string) int {
				return cmp.Or(cmp.Compare(shares[y], shares[x]), strings.Compare(x, y)) // largest first
			})
			if len(classes) > 5 {
				classes = classes[:5]
			}
			parts := make([]string, len(classes))
			for k, cl := range classes {
				parts[k] = fmt.Sprintf("%s %s", cl, strconv.FormatFloat(100*shares[cl], 'f', 0, 64)+"%")
			}
			t.add(plain(g.short(), a.targets[i].Name, strings.Join(parts, ", "))...)
		}
	}
	return t
}

// statementKey is a statement of a script; nth counts the same text again in it.
type statementKey struct {
	script, text string
	nth          int
}

// statementTable is a group's per-statement latencies (pgbench -r): each
// statement's average in milliseconds, aggregated over the valid runs, and its
// ratio to the baseline's; in the terminal under the targets' names as names
// gives them, never split. nil when no run timed its statements.
func (a *analysis) statementTable(g group, names []string) *docTable {
	runs, order, scripts := statementsOf(g)
	if len(order) == 0 {
		return nil
	}
	t := a.targetsTable("statement (avg ms)", false)
	t.termHead = slices.Clone(t.Head)
	t.termHead[0] = "statement"
	for c, i := range t.owner {
		if i >= 0 && t.Head[c] == a.targets[i].Name {
			t.termHead[c] = names[i]
		}
	}
	t.owner = nil
	for _, k := range order {
		label := k.text
		if scripts > 1 {
			label = k.script + ": " + label
		}
		m := metric{key: "statement", label: label, unit: " ms", get: func(r Run) (float64, bool) {
			st, ok := runs[r.ID][k]
			return st.AvgMs, ok && st.AvgMs > 0
		}}
		rw := row{m: m, kind: measured}
		for _, c := range g.cells {
			rw.vals = append(rw.vals, a.stat(m, c))
		}
		rw.ratios = a.ratios(rw.vals, nil)
		t.add(a.targetCells(rw, nil, docCell{Text: label})...)
	}
	return t
}

// statementsOf are each valid run's statements of a group by key, the keys in
// the order they come, and how many scripts they are from.
func statementsOf(g group) (map[int64]map[statementKey]Statement, []statementKey, int) {
	runs := map[int64]map[statementKey]Statement{}
	var order []statementKey
	scripts := map[string]bool{}
	for _, c := range g.cells {
		for _, run := range c.valid {
			byKey := map[statementKey]Statement{}
			for _, st := range run.Statements {
				k := statementKey{st.Script, st.Text, 0}
				for ; ; k.nth++ {
					if _, dup := byKey[k]; !dup {
						break
					}
				}
				byKey[k] = st
				if !slices.Contains(order, k) {
					order = append(order, k)
				}
				scripts[st.Script] = true
			}
			runs[run.ID] = byKey
		}
	}
	return runs, order, len(scripts)
}

// allClasses are the wait events of some runs, so that none is folded into "other".
func allClasses(runs []Run) []string {
	var out []string
	for _, run := range runs {
		for _, w := range run.Waits {
			if !slices.Contains(out, w.Class) {
				out = append(out, w.Class)
			}
		}
	}
	return out
}

// validityTable lists the runs left out and the runs with flags or warnings.
func (a *analysis) validityTable() *docTable {
	t := &docTable{Head: []string{"run", "target", "workload", "clients", "repeat", "status", "counted", "flags and warnings"},
		Right: []bool{true, false, false, true, true, false, false, false}}
	for _, wl := range a.workloads {
		for _, g := range wl.groups {
			for _, c := range g.cells {
				for _, run := range c.runs {
					var notes []string
					for _, fl := range run.Flags {
						s := flagText(fl)
						if fl.Invalid {
							s = "invalid: " + s
						}
						notes = append(notes, s)
					}
					notes = append(notes, run.Warnings...)
					if counts(run) && len(notes) == 0 {
						continue
					}
					counted := "yes"
					cl := ""
					if !counts(run) {
						counted, cl = "no", "left-out"
					}
					rep := ""
					if run.Repeat > 0 {
						rep = strconv.Itoa(run.Repeat)
					}
					cells := plain(strconv.FormatInt(run.ID, 10), run.Target, wl.Name, strconv.Itoa(run.Clients), rep,
						run.Status, counted, strings.Join(notes, "; "))
					for k := range cells {
						cells[k].Class = cl
					}
					t.add(cells...)
				}
			}
		}
	}
	return t
}

// targetTable describes the targets.
func (a *analysis) targetTable() *docTable {
	t := &docTable{Head: []string{"target", "version", "address", "labels", "settings"}, Right: make([]bool, 5)}
	for i, tg := range a.targets {
		name := tg.Name
		if i == a.base && a.compared() {
			name += " (baseline)"
		}
		t.add(plain(name, tg.Version, tg.Address, kv(tg.Labels), kv(tg.Settings))...)
	}
	return t
}

// kv writes a map as "a=1, b=2", keys sorted.
func kv(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ", ")
}

// priceColumns are the parts of prices that tables give a column each, per
// hour; the rest (backup, network, fees, a price given as one figure) is
// "other".
var priceColumns = []struct{ name, header string }{
	{"compute", "compute/h"}, {"storage", "storage/h"}, {"iops", "IOPS/h"},
	{"throughput", "throughput/h"}, {"ha", "HA/h"}, {"other", "other/h"},
}

// priceColumn is the column of priceColumns a component goes in.
func priceColumn(name string) string {
	for _, c := range priceColumns[:len(priceColumns)-1] {
		if c.name == name {
			return name
		}
	}
	return "other"
}

// priceTable lists the targets' prices, per hour and per month, broken down
// by the hour where the price is, and where they come from: the source, its
// date, and when a price looked up was fetched.
func (a *analysis) priceTable() *docTable {
	rows := make([]map[string]string, len(a.targets))
	for i, tg := range a.targets {
		rows[i] = priceCells(tg)
	}
	has := func(col string) bool {
		return slices.ContainsFunc(rows, func(r map[string]string) bool { _, ok := r[col]; return ok })
	}
	t := &docTable{Head: []string{"target", "per hour", "per month"}, Right: []bool{false, true, true}}
	for _, c := range priceColumns {
		if has(c.header) {
			t.Head, t.Right = append(t.Head, c.header), append(t.Right, true)
		}
	}
	for _, h := range []string{"made up of (a month)", "source", "effective", "fetched"} {
		if h == "made up of (a month)" || h == "source" || has(h) {
			t.Head, t.Right = append(t.Head, h), append(t.Right, false)
		}
	}
	for i, tg := range a.targets {
		var row []string
		for c, h := range t.Head {
			v, ok := rows[i][h]
			if !ok && tg.Price != nil && c >= 3 && t.Right[c] {
				v = "-" // a part this price has none of
			}
			row = append(row, v)
		}
		t.add(plain(row...)...)
	}
	return t
}

// priceCells are a target's cells of priceTable by column header; a column
// the target has nothing in is left out.
func priceCells(tg Target) map[string]string {
	p := tg.Price
	if p == nil {
		return map[string]string{"target": tg.Name, "per hour": "-", "per month": "-",
			"made up of (a month)": cmp.Or(tg.PriceNote, "no price")}
	}
	cells := map[string]string{"target": tg.Name, "per hour": hourlyMoney(p.Monthly/cost.HoursPerMonth, p.Currency),
		"per month": money(p.Monthly, p.Currency), "made up of (a month)": p.Detail, "source": p.Source}
	per := map[string]float64{}
	for _, c := range p.Hourly {
		per[priceColumn(c.Name)] += c.PerHour
	}
	for _, c := range priceColumns {
		if v, ok := per[c.name]; ok {
			cells[c.header] = hourlyMoney(v, p.Currency)
		}
	}
	if p.Date != "" {
		cells["effective"] = p.Date
	}
	if !p.Fetched.IsZero() {
		cells["fetched"] = p.Fetched.UTC().Format("2006-01-02 15:04 UTC")
	}
	return cells
}

// pricePerfTable is, by client count, how much of the headline metric each target
// gives for one unit of monthly price, and in brackets the monthly price of one
// unit of the metric.
func (a *analysis) pricePerfTable(wl workload) *docTable {
	t := &docTable{Head: []string{wl.groupHeader()}, Right: []bool{true}}
	var priced []int
	for i, tg := range a.targets {
		if tg.Price == nil {
			continue
		}
		priced = append(priced, i)
		t.Head = append(t.Head, tg.Name)
		t.Right = append(t.Right, true)
	}
	for _, g := range wl.groups {
		units, ok1 := g.rowOf("units_per_price")
		per, ok2 := g.rowOf("price_per_unit")
		if !ok1 || !ok2 {
			continue
		}
		cells := []string{g.short()}
		for _, i := range priced {
			c := a.cellText(units, i)
			if per.vals[i].ok {
				c += " (" + a.cellText(per, i) + ")"
			}
			cells = append(cells, c)
		}
		t.add(plain(cells...)...)
	}
	return t
}

// pricePerfLegend says what pricePerfTable's cells are.
func (a *analysis) pricePerfLegend(wl workload) string {
	head := wl.metrics[0].label
	return fmt.Sprintf("%s per %s/month (in brackets, %s/month per %s): the %s %s against each target's monthly price.",
		head, a.sym(), a.sym(), head, a.aggWord(), head)
}

// targetsTable starts a table whose first column is first, then each target with,
// after each but the baseline, its ratio to the baseline, each column owned by
// its target so that the terminal may split the table.
func (a *analysis) targetsTable(first string, rightFirst bool) *docTable {
	t := &docTable{Head: []string{first}, Right: []bool{rightFirst}, owner: []int{-1}, base: a.base}
	for i, tg := range a.targets {
		t.Head, t.Right, t.owner = append(t.Head, tg.Name), append(t.Right, true), append(t.owner, i)
		if i != a.base {
			t.Head, t.Right, t.owner = append(t.Head, "vs "+a.baseName()), append(t.Right, false), append(t.owner, i)
		}
	}
	return t
}

// groupNotes lists, for every target in a group, its runs that do not count
// (marked x) and the flags and warnings of those that do (marked -).
func groupNotes(g group) []item {
	var out []item
	for _, c := range g.cells {
		for _, run := range c.runs {
			if !counts(run) {
				out = append(out, item{Mark: "x", Class: "left-out", Text: runLabel(run) + " left out: " + why(run)})
				continue
			}
			for _, fl := range run.Flags {
				if !fl.Invalid {
					out = append(out, item{Mark: "-", Class: "warning", Text: runLabel(run) + ": " + flagText(fl)})
				}
			}
			for _, wn := range run.Warnings {
				out = append(out, item{Mark: "-", Class: "warning", Text: runLabel(run) + ": " + wn})
			}
		}
	}
	return out
}

// priceLines say each target's price in a line: by the month, or by the hour
// and its parts when it is broken down, and where it comes from.
func (a *analysis) priceLines() []string {
	var out []string
	for _, t := range a.targets {
		p := t.Price
		if p == nil {
			out = append(out, t.Name+": "+cmp.Or(t.PriceNote, "no price"))
			continue
		}
		s := fmt.Sprintf("%s: %s/month", t.Name, money(p.Monthly, p.Currency))
		if len(p.Hourly) > 1 || len(p.Hourly) == 1 && p.Hourly[0].Name != "total" {
			// A price broken down: by the hour, as price lists give it.
			parts := make([]string, len(p.Hourly))
			for i, c := range p.Hourly {
				parts[i] = cost.Component{Name: c.Name}.Label() + " " + hourlyMoney(c.PerHour, p.Currency)
			}
			s = fmt.Sprintf("%s: %s/hour (%s) = %s/month", t.Name, hourlyMoney(p.Monthly/cost.HoursPerMonth, p.Currency),
				strings.Join(parts, " + "), money(p.Monthly, p.Currency))
		} else if p.Detail != "" {
			s += ", " + p.Detail
		}
		var from []string
		if p.Source != "" {
			from = append(from, p.Source)
		}
		if p.Date != "" {
			from = append(from, "effective "+p.Date)
		}
		if !p.Fetched.IsZero() {
			from = append(from, "fetched "+p.Fetched.UTC().Format("2006-01-02 15:04 UTC"))
		}
		if len(from) > 0 {
			s += " (" + strings.Join(from, ", ") + ")"
		}
		out = append(out, s)
	}
	return out
}

// legend explains the cells once, above the tables.
func (a *analysis) legend() string {
	s := fmt.Sprintf("Cells: the %s of a target's valid runs ± their coefficient of variation; "+
		"! marks variation above the %s noise threshold.", a.aggWord(), percent(a.noise))
	if a.compared() {
		s += fmt.Sprintf(" \"vs %s\" is the ratio to the baseline. On the headline metric a target is "+
			"faster or slower only when every run beats every run of the other and the medians differ "+
			"by more than the threshold; otherwise it is within noise, with an estimate of the runs "+
			"that might settle it.", a.baseName())
	}
	return s
}

// headers are the targets' names as table headers, shortened in the middle to
// maxTargetHeader columns and, where that makes two alike, numbered: "pg17-…me[4]".
func (a *analysis) headers() []string {
	names := make([]string, len(a.targets))
	seen := map[string]int{}
	for i, t := range a.targets {
		names[i] = ellipsis(t.Name, maxTargetHeader)
		seen[names[i]]++
	}
	for i, t := range a.targets {
		if seen[names[i]] > 1 {
			k := fmt.Sprintf("[%d]", i+1)
			names[i] = ellipsis(t.Name, maxTargetHeader-width(k)) + k
		}
	}
	return names
}
