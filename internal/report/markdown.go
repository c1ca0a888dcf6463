package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

// ChartWriter stores a chart of a Markdown report and returns the path the
// Markdown links it by, relative to the Markdown file. name is unique within a
// report and safe as a file name ("throughput-tpcc.svg"); the caller decides where
// the files go.
type ChartWriter interface {
	Write(name string, svg []byte) (path string, err error)
}

// Markdown writes the report as GitHub Markdown: the tables of Terminal, a summary
// of the verdicts, and the charts, each written through charts and linked by the
// path it returns. Sections: summary, results by client count, throughput and p99
// vs clients, time series, latency distribution, server view, validity,
// environment and price-performance.
func Markdown(w io.Writer, r *Report, charts ChartWriter) error {
	a := newAnalysis(r)
	fs := a.figures()
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	image := func(f figure) error {
		path, err := charts.Write(f.name+".svg", f.svg)
		if err != nil {
			return fmt.Errorf("write chart %s: %w", f.name, err)
		}
		if strings.ContainsAny(path, " ()<>") {
			path = "<" + path + ">"
		}
		p("![%s](%s)\n", mdEscape(f.title), path)
		return nil
	}
	images := func(list []figure) error {
		for _, f := range list {
			if err := image(f); err != nil {
				return err
			}
		}
		p("\n")
		return nil
	}

	title := r.Title
	if title == "" {
		title = "pgbakeoff report"
	}
	p("# %s\n\n", mdEscape(title))
	for _, m := range a.metaLines() {
		p("%s  \n", mdEscape(m))
	}
	p("\n")
	sections := a.sections()
	for _, s := range sections {
		p("- [%s](#%s)\n", s.title, s.id)
	}
	p("\n")

	p("## Summary\n\n%s\n\n", mdEscape(a.legend()))
	for _, wl := range a.workloads {
		p("### %s\n\n", mdEscape(wl.heading()))
		writeMDTable(&b, a.summaryTable(wl))
		if t := a.objectiveTable(wl); len(t.rows) > 0 {
			p("%s\n\n", mdEscape(a.objectiveLegend(wl)))
			writeMDTable(&b, t)
			for _, n := range a.objectiveNotes(wl) {
				p("- %s\n", mdEscape(n))
			}
		}
		for _, s := range a.verdictSummaries(wl) {
			p("- %s\n", mdEscape(s))
		}
		p("\n")
	}

	p("## Results\n\n")
	for _, wl := range a.workloads {
		for _, g := range wl.groups {
			p("### %s, %s\n\n", mdEscape(wl.Name), g.label())
			writeMDTable(&b, a.fullTable(g))
			if t := a.statementTable(g); len(t.rows) > 0 {
				p("%s\n\n", mdEscape(statementsIntro))
				writeMDTable(&b, t)
			}
			if notes := groupNotes(g); len(notes) > 0 {
				for _, n := range notes {
					p("- %s\n", mdEscape(n.text))
				}
				p("\n")
			}
		}
	}

	p("## Throughput and p99 vs clients\n\n")
	for _, wl := range a.workloads {
		p("### %s\n\n", mdEscape(wl.Name))
		if err := images(fs.clients[wl.slug]); err != nil {
			return err
		}
	}

	p("## Time series\n\n%s\n\n", mdEscape(seriesIntro))
	for _, wl := range a.workloads {
		list := fs.series[wl.slug]
		for i, g := range wl.groups {
			p("### %s, %s\n\n", mdEscape(wl.Name), g.label())
			if err := images(list[i]); err != nil {
				return err
			}
			if ev := seriesEvents(g); len(ev) > 0 {
				for _, e := range ev {
					p("- %s\n", mdEscape(e))
				}
				p("\n")
			}
		}
	}

	p("## Latency distribution\n\n%s\n\n", mdEscape(latencyIntro))
	for _, wl := range a.workloads {
		p("### %s\n\n", mdEscape(wl.Name))
		if err := images(fs.latency[wl.slug]); err != nil {
			return err
		}
	}

	p("## Server view\n\n")
	for _, wl := range a.workloads {
		p("### %s\n\n", mdEscape(wl.Name))
		if len(fs.server[wl.slug]) == 0 {
			p("The server was not sampled.\n\n")
			continue
		}
		if err := images(fs.server[wl.slug]); err != nil {
			return err
		}
		if t := a.waitTable(wl); len(t.rows) > 0 {
			p("Top wait events (share of active sessions, mean of the valid runs):\n\n")
			writeMDTable(&b, t)
		}
	}

	p("## Validity\n\n")
	if t := a.validityTable(); len(t.rows) > 0 {
		p("Runs that are left out of the figures above, or that carry flags or warnings:\n\n")
		writeMDTable(&b, t)
	} else {
		p("Every run completed, and none was flagged.\n\n")
	}

	p("## Environment\n\n")
	if r.Env.Client != "" {
		p("Client: %s\n\n", mdEscape(r.Env.Client))
	}
	writeMDTable(&b, a.targetTable())
	if len(r.Env.Differences) > 0 {
		p("Settings that differ between targets:\n\n")
		for _, d := range r.Env.Differences {
			p("- %s\n", mdEscape(d))
		}
		p("\n")
	}
	if len(r.Env.Warnings) > 0 {
		p("Warnings:\n\n")
		for _, wn := range r.Env.Warnings {
			p("- %s\n", mdEscape(wn))
		}
		p("\n")
	}

	p("## Price-performance\n\n")
	if !a.priced {
		p("No target has a price.\n")
		for _, n := range a.priceNotes() {
			p("\n- %s", mdEscape(n))
		}
	} else {
		writeMDTable(&b, a.priceTable())
		if a.currency == "" {
			p("The prices are in different currencies, so they are not compared.\n\n")
		}
		for _, wl := range a.workloads {
			p("### %s\n\n%s\n\n", mdEscape(wl.Name), mdEscape(a.pricePerfLegend(wl)))
			writeMDTable(&b, a.pricePerfTable(wl))
			if err := images(fs.price[wl.slug]); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

const (
	statementsIntro = "Per statement, as pgbench -r times them: the average latency of each execution that succeeded, " +
		"in milliseconds, aggregated over the valid runs."
	seriesIntro = "Per second, each target's median run in full and its other repetitions faint; " +
		"runs left out are dashed. Vertical marks are checkpoints, shaded bands outages; " +
		"negative seconds are the warm-up."
	latencyIntro = "The latency distribution of each target's median run: percentiles on a log scale " +
		"of 1/(1-q), so p90, p99 and p99.9 are evenly spaced, and the maximum at the right."
)

// section is an entry of the table of contents.
type section struct{ id, title string }

func (a *analysis) sections() []section {
	return []section{
		{"summary", "Summary"},
		{"results", "Results"},
		{"throughput-and-p99-vs-clients", "Throughput and p99 vs clients"},
		{"time-series", "Time series"},
		{"latency-distribution", "Latency distribution"},
		{"server-view", "Server view"},
		{"validity", "Validity"},
		{"environment", "Environment"},
		{"price-performance", "Price-performance"},
	}
}

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

// mdTable is a table for Markdown and HTML: cells are plain text, escaped by the
// writer; title holds hover text per cell (HTML only), class a CSS class.
type mdTable struct {
	header []string
	right  []bool
	rows   [][]string
	title  [][]string
	class  [][]string
}

func (t *mdTable) add(cells []string, titles, classes []string) {
	t.rows = append(t.rows, cells)
	t.title = append(t.title, titles)
	t.class = append(t.class, classes)
}

func writeMDTable(b *strings.Builder, t mdTable) {
	if len(t.header) == 0 {
		return
	}
	b.WriteString("|")
	for _, h := range t.header {
		b.WriteString(" " + mdEscape(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.header {
		if i < len(t.right) && t.right[i] {
			b.WriteString("--:|")
		} else {
			b.WriteString(":--|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// mdEscape keeps text literal in Markdown, in tables too.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '#':
			b.WriteByte('\\')
		case '\n':
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fullTable is a group's table as Terminal shows it, every target in one table and
// the verdicts in full.
func (a *analysis) fullTable(g group) mdTable {
	t := a.targetsTable("metric", false)
	for _, rw := range g.rows {
		leftOut := func(i int) bool { return rw.kind == runCount && len(g.cells[i].excluded) > 0 }
		t.add(a.targetCells(rw, leftOut, []string{rw.m.label}, []string{""}, []string{""}))
	}
	return t
}

// targetCells appends to a table row's cells, titles and classes rw's value for
// every target and, beside each but the baseline, its ratio and verdict; leftOut
// marks the targets whose cell leaves runs out.
func (a *analysis) targetCells(rw row, leftOut func(i int) bool, cells, titles, classes []string) ([]string, []string, []string) {
	for i := range a.targets {
		cells = append(cells, a.cellText(rw, i))
		titles = append(titles, hover(rw.vals[i], rw.m.unit))
		cl := "num"
		if rw.vals[i].high {
			cl += " hv"
		}
		if leftOut != nil && leftOut(i) {
			cl += " left-out"
		}
		classes = append(classes, cl)
		if i != a.base {
			cells = append(cells, a.ratioText(rw, i, false))
			var tt, c string
			if rw.verdicts != nil && rw.verdicts[i] != nil {
				v := rw.verdicts[i]
				tt, c = a.reason(*v, i), "verdict "+outcomeClass(v.Outcome)
			}
			titles = append(titles, tt)
			classes = append(classes, c)
		}
	}
	return cells, titles, classes
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
func (a *analysis) summaryTable(wl workload) mdTable {
	if len(wl.groups) == 0 {
		return mdTable{} // searches alone: the objective's table is their summary
	}
	t := a.targetsTable(wl.groupHeader(), true)
	for _, g := range wl.groups {
		t.add(a.targetCells(g.rows[0], nil, []string{g.short()}, []string{""}, []string{"num"}))
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
func (a *analysis) waitTable(wl workload) mdTable {
	t := mdTable{header: []string{wl.groupHeader(), "target", "top wait events"}, right: []bool{true, false, false}}
	for _, g := range wl.groups {
		for i, c := range g.cells {
			shares := meanWaits(c.valid, allClasses(c.valid))
			if len(shares) == 0 {
				continue
			}
			classes := make([]string, 0, len(shares))
			for k := range shares {
				classes = append(classes, k)
			}
			slices.SortFunc(classes, func(x, y string) int {
				if shares[x] != shares[y] {
					if shares[x] > shares[y] {
						return -1
					}
					return 1
				}
				return strings.Compare(x, y)
			})
			if len(classes) > 5 {
				classes = classes[:5]
			}
			parts := make([]string, len(classes))
			for k, cl := range classes {
				parts[k] = fmt.Sprintf("%s %s", cl, strconv.FormatFloat(100*shares[cl], 'f', 0, 64)+"%")
			}
			t.add([]string{g.short(), a.targets[i].Name, strings.Join(parts, ", ")}, nil, nil)
		}
	}
	return t
}

// statementTable is a group's per-statement latencies (pgbench -r): each
// statement's average in milliseconds, aggregated over the valid runs, and its
// ratio to the baseline's. Empty when no run timed its statements.
func (a *analysis) statementTable(g group) mdTable {
	type key struct {
		script, text string
		nth          int // the same text again in the script
	}
	// Each valid run's statements by key, and the keys in the order they come.
	runs := map[int64]map[key]Statement{}
	var order []key
	scripts := map[string]bool{}
	for _, c := range g.cells {
		for _, run := range c.valid {
			byKey := map[key]Statement{}
			for _, st := range run.Statements {
				k := key{st.Script, st.Text, 0}
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
	if len(order) == 0 {
		return mdTable{}
	}
	t := a.targetsTable("statement (avg ms)", false)
	for _, k := range order {
		label := k.text
		if len(scripts) > 1 {
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
		t.add(a.targetCells(rw, nil, []string{label}, []string{""}, []string{""}))
	}
	return t
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
func (a *analysis) validityTable() mdTable {
	t := mdTable{header: []string{"run", "target", "workload", "clients", "repeat", "status", "counted", "flags and warnings"},
		right: []bool{true, false, false, true, true, false, false, false}}
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
					t.add([]string{strconv.FormatInt(run.ID, 10), run.Target, wl.Name, strconv.Itoa(run.Clients), rep,
						run.Status, counted, strings.Join(notes, "; ")}, nil, []string{cl, cl, cl, cl, cl, cl, cl, cl})
				}
			}
		}
	}
	return t
}

// targetTable describes the targets.
func (a *analysis) targetTable() mdTable {
	t := mdTable{header: []string{"target", "version", "address", "labels", "settings"}}
	for i, tg := range a.targets {
		name := tg.Name
		if i == a.base && a.compared() {
			name += " (baseline)"
		}
		t.add([]string{name, tg.Version, tg.Address, kv(tg.Labels), kv(tg.Settings)}, nil, nil)
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
func (a *analysis) priceTable() mdTable {
	used := map[string]bool{}
	var dated, fetched bool
	for _, tg := range a.targets {
		if tg.Price == nil {
			continue
		}
		for _, c := range tg.Price.Hourly {
			used[priceColumn(c.Name)] = true
		}
		dated = dated || tg.Price.Date != ""
		fetched = fetched || !tg.Price.Fetched.IsZero()
	}
	t := mdTable{header: []string{"target", "per hour", "per month"}, right: []bool{false, true, true}}
	for _, c := range priceColumns {
		if used[c.name] {
			t.header, t.right = append(t.header, c.header), append(t.right, true)
		}
	}
	t.header, t.right = append(t.header, "made up of (a month)", "source"), append(t.right, false, false)
	if dated {
		t.header, t.right = append(t.header, "effective"), append(t.right, false)
	}
	if fetched {
		t.header, t.right = append(t.header, "fetched"), append(t.right, false)
	}
	for _, tg := range a.targets {
		p := tg.Price
		if p == nil {
			row := []string{tg.Name, "-", "-"}
			for _, c := range priceColumns {
				if used[c.name] {
					row = append(row, "")
				}
			}
			row = append(row, cmp.Or(tg.PriceNote, "no price"), "")
			if dated {
				row = append(row, "")
			}
			if fetched {
				row = append(row, "")
			}
			t.add(row, nil, nil)
			continue
		}
		row := []string{tg.Name, hourlyMoney(p.Monthly/cost.HoursPerMonth, p.Currency), money(p.Monthly, p.Currency)}
		per := map[string]float64{}
		for _, c := range p.Hourly {
			per[priceColumn(c.Name)] += c.PerHour
		}
		for _, c := range priceColumns {
			if !used[c.name] {
				continue
			}
			if v, ok := per[c.name]; ok {
				row = append(row, hourlyMoney(v, p.Currency))
			} else {
				row = append(row, "-")
			}
		}
		row = append(row, p.Detail, p.Source)
		if dated {
			row = append(row, p.Date)
		}
		if fetched {
			f := ""
			if !p.Fetched.IsZero() {
				f = p.Fetched.UTC().Format("2006-01-02 15:04 UTC")
			}
			row = append(row, f)
		}
		t.add(row, nil, nil)
	}
	return t
}

// pricePerfTable is, by client count, how much of the headline metric each target
// gives for one unit of monthly price, and in brackets the monthly price of one
// unit of the metric.
func (a *analysis) pricePerfTable(wl workload) mdTable {
	t := mdTable{header: []string{wl.groupHeader()}, right: []bool{true}}
	var priced []int
	for i, tg := range a.targets {
		if tg.Price == nil {
			continue
		}
		priced = append(priced, i)
		t.header = append(t.header, tg.Name)
		t.right = append(t.right, true)
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
		t.add(cells, nil, nil)
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
// after each but the baseline, its ratio to the baseline.
func (a *analysis) targetsTable(first string, rightFirst bool) mdTable {
	t := mdTable{header: []string{first}, right: []bool{rightFirst}}
	for i, tg := range a.targets {
		t.header = append(t.header, tg.Name)
		t.right = append(t.right, true)
		if i != a.base {
			t.header = append(t.header, "vs "+a.baseName())
			t.right = append(t.right, false)
		}
	}
	return t
}
