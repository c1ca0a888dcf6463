package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

// termWidth is the width Terminal keeps every line within.
const termWidth = 100

// maxTargetHeader is the most columns a target's name takes in a table header;
// longer names are shortened in the middle.
const maxTargetHeader = 16

// Terminal writes what `pgbakeoff compare` prints: per workload and client count, a
// table whose rows are metrics and whose columns are targets, each non-baseline
// target followed by its ratio to the baseline (with the verdict on the headline
// metric), and the runs that do not count listed under their table with the reason.
// No line is wider than 100 columns: names and verdicts are abbreviated and, when
// there are too many targets for one table, the targets are split across several,
// each repeating the baseline.
func Terminal(w io.Writer, r *Report) error {
	a := newAnalysis(r)
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }
	para := func(text, first, rest string) {
		for _, l := range wrap(text, termWidth, first, rest) {
			line(l)
		}
	}

	if r.Title != "" {
		para(r.Title, "", "")
	}
	if r.Source != "" {
		para(r.Source, "", "  ")
	}
	var meta []string
	if g := a.generated(); g != "" {
		meta = append(meta, "generated "+g)
	}
	if a.compared() {
		meta = append(meta, "baseline "+a.baseName())
	}
	meta = append(meta, fmt.Sprintf("%d %s", len(a.targets), plural(len(a.targets), "target", "targets")))
	para(strings.Join(meta, "; "), "", "  ")
	names := a.headers()
	for i, t := range a.targets {
		if names[i] != t.Name {
			para(names[i]+" is "+t.Name, "", "  ")
		}
	}
	line("")
	para(a.legend(), "", "")

	for _, wl := range a.workloads {
		for _, g := range wl.groups {
			line("")
			tables := a.termTables(g, names)
			for i, t := range tables {
				title := fmt.Sprintf("%s (%s), %s", wl.Name, wl.Kind, g.label())
				if len(tables) > 1 {
					title += fmt.Sprintf(" (%d of %d)", i+1, len(tables))
				}
				if i > 0 {
					line("")
				}
				para(title, "", "  ")
				for _, l := range t.lines() {
					line(l)
				}
			}
			notes := groupNotes(g)
			for _, t := range tables {
				notes = append(notes, a.shortNotes(g, t)...)
			}
			for _, n := range notes {
				para(n.text, "  "+n.mark+" ", "    ")
			}
			if st := a.statementTable(g); len(st.rows) > 0 {
				line("")
				para(statementsIntro, "", "")
				t := textTable{header: st.header, right: st.right}
				t.header[0] = "statement"
				for i, h := range t.header { // the targets' names as the tables above show them
					if k := slices.IndexFunc(a.targets, func(tg Target) bool { return tg.Name == h }); k >= 0 {
						t.header[i] = names[k]
					}
				}
				for _, r := range st.rows {
					t.rows = append(t.rows, append([]string{ellipsis(r[0], 48)}, r[1:]...))
				}
				for _, l := range t.lines() {
					line(l)
				}
			}
		}
	}

	for _, wl := range a.workloads {
		if t := a.objectiveTable(wl); len(t.rows) > 0 {
			line("")
			para(wl.Name+": "+a.objectiveLegend(wl), "", "  ")
			for i, tt := range a.splitTable(t) {
				if i > 0 {
					line("")
				}
				for _, l := range tt.lines() {
					line(l)
				}
			}
			for _, n := range a.objectiveNotes(wl) {
				para(n, "  - ", "    ")
			}
		}
	}
	if notes := a.priceNotes(); !a.priced && len(notes) > 0 {
		line("")
		line("Prices")
		for _, n := range notes {
			para(n, "  ", "    ")
		}
	}
	if a.priced {
		line("")
		line("Prices")
		for _, t := range a.targets {
			p := t.Price
			if p == nil {
				para(t.Name+": "+cmp.Or(t.PriceNote, "no price"), "  ", "    ")
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
			para(s, "  ", "    ")
		}
	}
	env := r.Env
	if env.Client != "" || len(env.Differences) > 0 || len(env.Warnings) > 0 {
		line("")
		line("Environment")
		if env.Client != "" {
			para("client: "+env.Client, "  ", "    ")
		}
		for _, d := range env.Differences {
			para("differs: "+d, "  ", "    ")
		}
		for _, wn := range env.Warnings {
			para("warning: "+wn, "  ", "    ")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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

// note is a line under a table: a run that does not count, or a warning.
type note struct {
	mark string // "x" for a run left out, "-" for a warning
	text string
}

// groupNotes lists, for every target in a group, its runs that do not count and
// the flags and warnings of those that do.
func groupNotes(g group) []note {
	var out []note
	for _, c := range g.cells {
		for _, run := range c.runs {
			if !counts(run) {
				out = append(out, note{"x", runLabel(run) + " left out: " + why(run)})
				continue
			}
			for _, fl := range run.Flags {
				if !fl.Invalid {
					out = append(out, note{"-", runLabel(run) + ": " + flagText(fl)})
				}
			}
			for _, wn := range run.Warnings {
				out = append(out, note{"-", runLabel(run) + ": " + wn})
			}
		}
	}
	return out
}

// shortNotes spells out the abbreviated verdicts of a table.
func (a *analysis) shortNotes(g group, t textTable) []note {
	if !t.short {
		return nil
	}
	head := g.rows[0]
	var out []note
	for _, i := range t.targets {
		v := head.verdicts[i]
		if i == a.base || v == nil {
			continue
		}
		name, base, m := a.targets[i].Name, a.baseName(), head.m.label
		var s string
		switch v.Outcome {
		case stats.WithinNoise:
			s = fmt.Sprintf("%s is within noise of %s on %s", name, base, m)
		case stats.Unknown:
			s = fmt.Sprintf("%s and %s on %s: not enough valid runs to compare (a verdict needs 2 of each)", name, base, m)
		default:
			continue
		}
		if v.MoreRuns > 0 && v.Outcome == stats.WithinNoise {
			s += fmt.Sprintf("; about %d more %s of each might tell them apart",
				v.MoreRuns, plural(v.MoreRuns, "run", "runs"))
		}
		out = append(out, note{"-", s})
	}
	return out
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

// textTable is a table laid out in columns of text.
type textTable struct {
	header []string
	rows   [][]string
	right  []bool // right-aligned columns
	// targets are the indexes of the targets shown; short, whether their verdicts
	// are abbreviated.
	targets []int
	short   bool
}

func (t textTable) widths() []int {
	ws := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			ws[i] = max(ws[i], width(c))
		}
	}
	return ws
}

func (t textTable) width() int {
	total := 0
	for _, w := range t.widths() {
		total += w + 2
	}
	return total - 2
}

func (t textTable) lines() []string {
	ws := t.widths()
	var out []string
	for _, r := range append([][]string{t.header}, t.rows...) {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", ws[i]-width(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.right[i] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// termTables lays out a group for the terminal: the baseline and as many targets as
// fit in 100 columns, with verdicts in full if they fit, else abbreviated.
func (a *analysis) termTables(g group, names []string) []textTable {
	var others []int
	for i := range a.targets {
		if i != a.base {
			others = append(others, i)
		}
	}
	fits := func(t textTable) bool { return t.width() <= termWidth }
	for _, short := range []bool{false, true} {
		if t := a.termTable(g, names, others, short); fits(t) {
			return []textTable{t}
		}
	}
	var tables []textTable
	var chunk []int
	for _, o := range others {
		next := append(append([]int(nil), chunk...), o)
		if fits(a.termTable(g, names, next, false)) {
			chunk = next
			continue
		}
		if len(chunk) == 0 {
			// Not even one target fits with its verdict in full.
			tables = append(tables, a.termTable(g, names, next, true))
			continue
		}
		tables = append(tables, a.termTable(g, names, chunk, false))
		chunk = []int{o}
		if !fits(a.termTable(g, names, chunk, false)) {
			tables = append(tables, a.termTable(g, names, chunk, true))
			chunk = nil
		}
	}
	if len(chunk) > 0 {
		tables = append(tables, a.termTable(g, names, chunk, false))
	}
	return tables
}

// splitTable splits a table whose columns are targetsTable's into as few tables
// as fit within termWidth, each with the first column and the baseline's and the
// others' figures beside their verdicts; a target too wide for any table gets
// one of its own.
func (a *analysis) splitTable(t mdTable) []textTable {
	cols := map[int][]int{} // target: its columns
	next := 1
	for i := range a.targets {
		cols[i] = []int{next}
		if next++; i != a.base {
			cols[i] = append(cols[i], next)
			next++
		}
	}
	pick := func(targets []int) textTable {
		keep := []int{0}
		for _, i := range append([]int{a.base}, targets...) {
			keep = append(keep, cols[i]...)
		}
		tt := textTable{targets: targets}
		for _, c := range keep {
			tt.header, tt.right = append(tt.header, t.header[c]), append(tt.right, t.right[c])
		}
		for _, r := range t.rows {
			var row []string
			for _, c := range keep {
				row = append(row, r[c])
			}
			tt.rows = append(tt.rows, row)
		}
		return tt
	}
	var tables []textTable
	var chunk []int
	for i := range a.targets {
		if i == a.base {
			continue
		}
		if len(chunk) > 0 && pick(append(slices.Clone(chunk), i)).width() > termWidth {
			tables = append(tables, pick(chunk))
			chunk = nil
		}
		chunk = append(chunk, i)
	}
	return append(tables, pick(chunk))
}

// termTable is the table of the baseline and the targets in others.
func (a *analysis) termTable(g group, names []string, others []int, short bool) textTable {
	t := textTable{header: []string{""}, right: []bool{false}, short: short}
	if len(a.targets) == 0 {
		return t
	}
	cols := []int{a.base}
	t.header = append(t.header, names[a.base])
	t.right = append(t.right, true)
	for _, o := range others {
		cols = append(cols, o)
		t.header = append(t.header, names[o], "vs "+ellipsis(names[a.base], 12))
		t.right = append(t.right, true, false)
	}
	t.targets = cols
	for _, rw := range g.rows {
		r := []string{rw.m.label}
		for j, i := range cols {
			r = append(r, a.cellText(rw, i))
			if j > 0 {
				r = append(r, a.ratioText(rw, i, short))
			}
		}
		t.rows = append(t.rows, r)
	}
	return t
}
