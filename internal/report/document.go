package report

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// document is a report laid out once for every renderer: the sections of the
// Markdown file and the HTML page, block by block, and the brief that Terminal
// prints. newDocument is the only code that decides what a report says and in
// what order; the renderers turn blocks into bytes. The brief reuses the
// sections' tables: compare shows the same figures, fewer of them, in its own
// order, and splits the tables that are too wide for a terminal.
type document struct {
	Title     string   // the report's title, or a default
	Meta      []string // the lines under the title
	Generated string   // when the report was made, "" when not known
	Sections  []docSection
	Brief     []block
}

// docSection is a section of the Markdown file and the HTML page, and an entry
// of their contents.
type docSection struct {
	ID, Title string
	Intro     string // a legend right under the section's title
	Blocks    []block
}

// blockKind is what a block is; the HTML template compares it with strings.
type blockKind string

const (
	headingBlock blockKind = "heading" // a workload's or group's heading, an entry of HTML's contents
	paraBlock    blockKind = "para"
	legendBlock  blockKind = "legend" // a paragraph that says what the tables or charts after it show
	tableBlock   blockKind = "table"
	listBlock    blockKind = "list"
	warnBlock    blockKind = "warn"   // a list of warnings under a heading of its own, framed in HTML
	chartsBlock  blockKind = "charts" // figures: linked chart files in Markdown, inline SVG in HTML
)

// medium restricts a block or an item to one of the rich renderers.
type medium int

const (
	everywhere medium = iota
	markdownOnly
	htmlOnly
)

// block is one element of a section or of the brief. Only the fields of its
// kind are set.
type block struct {
	Kind  blockKind
	Only  medium
	Text  string // a heading's, paragraph's or legend's text; a warn block's head
	ID    string // a heading's anchor
	TOC   string // a heading's entry in the HTML contents
	Class string // a list's CSS class
	Table *docTable
	Items []item
	Figs  []figure
	// For the terminal: Gap puts a blank line before the block, Hang indents a
	// paragraph's later lines.
	Gap, Hang bool
}

// item is an entry of a list. In HTML it may end with a link: Text, then
// LinkText linking to #Link, then Tail.
type item struct {
	Text                 string
	Mark                 string // the terminal's mark before it: "x" a run left out, "-" a warning, "" none
	Class                string
	Link, LinkText, Tail string
	Only                 medium
}

// docTable is a table: its cells' text for every renderer, hover text and CSS
// classes for HTML, and what the terminal needs to fit it in its width.
type docTable struct {
	Head  []string
	Right []bool // right-aligned columns
	Rows  [][]docCell
	// termHead are the headers in the terminal when they differ from Head
	// (targets' names shortened); termTitle heads each part of the table there.
	termHead  []string
	termTitle string
	// owner is, per column, the target whose figures it holds, -1 for columns
	// every part repeats; the terminal splits a table too wide by its targets,
	// the baseline's columns in every part. nil: never split.
	owner []int
	base  int
}

// docCell is one cell. short abbreviates text when the terminal must, and
// note then says under the table what the abbreviation leaves out.
type docCell struct {
	Text, Title, Class string
	short, note        string
}

func (t *docTable) add(cells ...docCell) { t.Rows = append(t.Rows, cells) }

// plain is a row of cells with text only.
func plain(texts ...string) []docCell {
	cells := make([]docCell, len(texts))
	for i, s := range texts {
		cells[i] = docCell{Text: s}
	}
	return cells
}

// SVG is a figure for the HTML template: written and escaped by svg.go.
func (f figure) SVG() template.HTML { return template.HTML(f.svg) }

// Caption is the figure's caption for the HTML template.
func (f figure) Caption() string { return f.caption }

func (s *docSection) add(bs ...block) { s.Blocks = append(s.Blocks, bs...) }

func heading(id, text, toc string) block {
	return block{Kind: headingBlock, ID: id, Text: text, TOC: toc}
}
func para(text string) block     { return block{Kind: paraBlock, Text: text} }
func legendOf(text string) block { return block{Kind: legendBlock, Text: text} }
func tableOf(t *docTable) block  { return block{Kind: tableBlock, Table: t} }
func charts(figs []figure) block { return block{Kind: chartsBlock, Figs: figs} }

func list(class string, items []item) block {
	return block{Kind: listBlock, Class: class, Items: items}
}

// items makes list items of texts, all with one mark and class.
func items(texts []string, mark, class string) []item {
	out := make([]item, len(texts))
	for i, s := range texts {
		out[i] = item{Text: s, Mark: mark, Class: class}
	}
	return out
}

// workloadTables are the tables of a workload that both the sections and the
// brief show, made once: per group its full table and its statements' (nil for
// none), and the objective's table with its notes.
type workloadTables struct {
	full, statements []*docTable
	objective        *docTable
	objectiveNotes   []string
}

func newDocument(a *analysis) *document {
	d := &document{Title: cmp.Or(a.r.Title, "pgbakeoff report"), Meta: a.metaLines(), Generated: a.generated()}
	tables := make([]workloadTables, len(a.workloads))
	names := a.headers()
	for i, wl := range a.workloads {
		for _, g := range wl.groups {
			full := a.fullTable(g, names)
			full.termTitle = fmt.Sprintf("%s (%s), %s", wl.Name, wl.Kind, g.label())
			tables[i].full = append(tables[i].full, full)
			tables[i].statements = append(tables[i].statements, a.statementTable(g, names))
		}
		tables[i].objective = a.objectiveTable(wl)
		tables[i].objectiveNotes = a.objectiveNotes(wl)
	}
	d.Sections = []docSection{a.summarySection(tables), a.resultsSection(tables), a.clientsSection(),
		a.seriesSection(), a.latencySection(), a.serverSection(), a.validitySection(),
		a.environmentSection(), a.priceSection()}
	if s, ok := a.recoverySection(); ok {
		// After the results: what the targets' faults cost, for reports of runs with any.
		d.Sections = slices.Insert(d.Sections, 2, s)
	}
	d.Brief = a.brief(tables, names)
	return d
}

func (a *analysis) summarySection(tables []workloadTables) docSection {
	s := docSection{ID: "summary", Title: "Summary"}
	if ws := a.r.Env.Warnings; len(ws) > 0 {
		s.add(block{Kind: warnBlock, Only: htmlOnly, Text: "Warnings about this comparison", Items: items(ws, "", "")})
	}
	s.add(legendOf(a.legend()))
	for i, wl := range a.workloads {
		s.add(heading("summary-"+wl.slug, wl.heading(), wl.Name), tableOf(a.summaryTable(wl)))
		if t := tables[i].objective; len(t.Rows) > 0 {
			s.add(legendOf(a.objectiveLegend(wl)), tableOf(t))
			if notes := tables[i].objectiveNotes; len(notes) > 0 {
				s.add(list("notes", items(notes, "-", "warning")))
			}
		}
		verdicts := items(a.verdictSummaries(wl), "", "")
		for _, g := range wl.groups {
			if n := leftOut(g); n > 0 {
				verdicts = append(verdicts, item{Only: htmlOnly, Class: "left-out",
					Text: fmt.Sprintf("%d %s at %s left out: see ", n, plural(n, "run", "runs"), g.label()),
					Link: resultsID(wl, g), LinkText: "the results", Tail: "."})
			}
		}
		s.add(list("verdicts", verdicts))
	}
	return s
}

func (a *analysis) resultsSection(tables []workloadTables) docSection {
	s := docSection{ID: "results", Title: "Results"}
	s.add(block{Kind: legendBlock, Only: htmlOnly,
		Text: "Hover over a cell for every run's figure. Shaded cells vary by more than the noise threshold."})
	for i, wl := range a.workloads {
		for j, g := range wl.groups {
			title := wl.Name + ", " + g.label()
			s.add(heading(resultsID(wl, g), title, title), tableOf(tables[i].full[j]))
			if t := tables[i].statements[j]; t != nil {
				s.add(legendOf(statementsIntro), tableOf(t))
			}
			if notes := groupNotes(g); len(notes) > 0 {
				s.add(list("notes", notes))
			}
		}
	}
	return s
}

func (a *analysis) clientsSection() docSection {
	s := docSection{ID: "throughput-and-p99-vs-clients", Title: "Throughput and p99 vs clients"}
	for _, wl := range a.workloads {
		figs := a.clientCharts(wl)
		if f, ok := a.curveChart(wl); ok {
			figs = append(figs, f)
		}
		s.add(heading("clients-"+wl.slug, wl.Name, wl.Name), charts(figs))
	}
	return s
}

func (a *analysis) seriesSection() docSection {
	s := docSection{ID: "time-series", Title: "Time series", Intro: seriesIntro}
	for _, wl := range a.workloads {
		for _, g := range wl.groups {
			title := wl.Name + ", " + g.label()
			s.add(heading(fmt.Sprintf("series-%s-%s", wl.slug, g.id()), title, title), charts(a.seriesCharts(wl, g)))
			if ev := seriesEvents(g); len(ev) > 0 {
				s.add(list("notes", items(ev, "-", "warning")))
			}
		}
	}
	return s
}

func (a *analysis) latencySection() docSection {
	s := docSection{ID: "latency-distribution", Title: "Latency distribution", Intro: latencyIntro}
	for _, wl := range a.workloads {
		var figs []figure
		for _, g := range wl.groups {
			figs = append(figs, a.latencyChart(wl, g))
		}
		s.add(heading("latency-"+wl.slug, wl.Name, wl.Name), charts(figs))
	}
	return s
}

func (a *analysis) serverSection() docSection {
	s := docSection{ID: "server-view", Title: "Server view"}
	for _, wl := range a.workloads {
		s.add(heading("server-"+wl.slug, wl.Name, wl.Name))
		figs := a.serverCharts(wl)
		if len(figs) == 0 {
			s.add(para("The server was not sampled."))
			continue
		}
		s.add(charts(figs))
		if t := a.waitTable(wl); len(t.Rows) > 0 {
			s.add(para("Top wait events (share of active sessions, mean of the valid runs):"), tableOf(t))
		}
	}
	return s
}

// recoveryIntro says what the recovery tables show.
const recoveryIntro = "Runs with faults done on purpose (run --fault), one row each: how long the clients saw no commit " +
	"(the run's longest gap, and the longest of any client), when the throughput was back to 90% of what it was before, " +
	"the acknowledged commits the ledger found missing afterwards with the recovery point (RPO: from the acknowledgement of the " +
	"earliest lost commit to the failure, at least the ledger's 20 ms between commits), and the transactions " +
	"lost with their connection, whose outcome the clients cannot know. These runs are left out of the throughput comparisons."

// recoverySection is a table per workload of the runs with faults; false when
// no run had one.
func (a *analysis) recoverySection() (docSection, bool) {
	s := docSection{ID: "recovery", Title: "Recovery", Intro: recoveryIntro}
	any := false
	for _, wl := range a.workloads {
		t := &docTable{Head: []string{"target", "clients", "run", "fault", "no commits", "longest client", "back to 90%", "tps before", "lost commits", "in doubt"},
			Right: []bool{false, true, true, false, true, true, true, true, true, true}}
		for _, g := range wl.groups {
			for i, c := range g.cells {
				for _, run := range c.runs {
					for _, f := range run.Faults {
						t.add(a.recoveryRow(a.targets[i].Name, g, run, f)...)
					}
				}
			}
		}
		if len(t.Rows) > 0 {
			any = true
			s.add(heading("recovery-"+wl.slug, wl.Name, wl.Name), tableOf(t))
			if outs := a.commandOutputs(wl); len(outs) > 0 {
				s.add(para(commandsIntro), list("", outs))
			}
			s.add(legendOf(haIntro), tableOf(a.haTable(wl)))
		}
	}
	return s, any
}

// haIntro says what the table of what each target's resilience costs shows.
const haIntro = "What each target's resilience costs beside what it bought, at each client count: its latency in the runs " +
	"without faults (a synchronous standby adds a round trip to every commit), its price, and over its runs with faults " +
	"the median and longest time without commits and the acknowledged commits lost."

// haTable is, per client count (and rate) and target, the target's
// steady-state latency and price beside its recovery: the cost of a standby
// next to what it buys, compared between runs of the same load.
func (a *analysis) haTable(wl workload) *docTable {
	t := &docTable{Head: []string{"target", "clients", "p50 ms", "p99 ms", "price a month", "faults", "no commits, median", "longest", "lost commits"},
		Right: []bool{false, true, true, true, true, true, true, true, true}}
	for _, g := range wl.groups {
		for i, tg := range a.targets {
			var p50, p99, gaps []float64
			faults, lost := 0, int64(0)
			for _, run := range g.cells[i].runs {
				if len(run.Faults) == 0 && counts(run) {
					p50, p99 = append(p50, run.Latency.P50), append(p99, run.Latency.P99)
				}
				for _, f := range run.Faults {
					faults++
					gaps = append(gaps, f.NoCommitsMs)
					lost += max(f.Lost, 0)
				}
			}
			if len(p50) == 0 && faults == 0 {
				continue
			}
			price := "-"
			if tg.Price != nil && tg.Price.Monthly > 0 {
				price = fmt.Sprintf("%.2f %s", tg.Price.Monthly, tg.Price.Currency)
			}
			row := plain(tg.Name, g.clientsText(), medianText(p50, "%.3f"), medianText(p99, "%.3f"), price, strconv.Itoa(faults),
				medianText(gaps, "%.0f ms"), maxText(gaps, "%.0f ms"), strconv.FormatInt(lost, 10))
			for j := 1; j < len(row); j++ {
				row[j].Class = "num"
			}
			t.add(row...)
		}
	}
	return t
}

// medianText is the median of vs in format, "-" for none.
func medianText(vs []float64, format string) string {
	if len(vs) == 0 {
		return "-"
	}
	s := slices.Sorted(slices.Values(vs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(format, m)
}

// maxText is the largest of vs in format, "-" for none.
func maxText(vs []float64, format string) string {
	if len(vs) == 0 {
		return "-"
	}
	return fmt.Sprintf(format, slices.Max(vs))
}

// commandsIntro heads what the fault commands printed.
const commandsIntro = "What each fault command printed, the end of it (lines joined by ⏎), with any password replaced:"

// maxShownOutput is how much of a fault command's output a report shows: its
// last lines, no more than this many characters of them.
const (
	maxShownOutput = 300
	maxShownLines  = 5
)

// commandOutputs are the workload's fault commands, one item each: the run,
// the command, how it ended and the end of what it printed.
func (a *analysis) commandOutputs(wl workload) []item {
	var out []item
	for _, g := range wl.groups {
		for i, c := range g.cells {
			for _, run := range c.runs {
				for _, f := range run.Faults {
					if f.Command == "" {
						continue
					}
					text := fmt.Sprintf("%s, %s, run %d: command at %s s, %s", a.targets[i].Name, g.label(), run.ID, num(f.AtS), engine.RedactCommand(f.Command))
					switch {
					case !f.Done:
						text += ": not done"
					default:
						text += fmt.Sprintf(": exit %d, %s", f.ExitCode, shownOutput(f.Output))
					}
					out = append(out, item{Text: text})
				}
			}
		}
	}
	return out
}

// shownOutput is the end of a command's output as a report shows it: its last
// lines joined by ⏎, cut to maxShownOutput characters, passwords replaced.
func shownOutput(output string) string {
	lines := strings.Split(strings.TrimRight(engine.RedactCommand(output), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return "no output"
	}
	cut := len(lines) > maxShownLines
	lines = lines[max(len(lines)-maxShownLines, 0):]
	text := strings.Join(lines, " ⏎ ")
	if r := []rune(text); len(r) > maxShownOutput {
		text, cut = string(r[len(r)-maxShownOutput:]), true
	}
	if cut {
		text = "…" + text
	}
	return "output " + strconv.Quote(text)
}

// recoveryRow is one fault of a run in the recovery table.
func (a *analysis) recoveryRow(target string, g group, run Run, f Fault) []docCell {
	ms := func(v float64) string {
		if v < 0 {
			return "never"
		}
		return fmt.Sprintf("%.0f ms", v)
	}
	fault := fmt.Sprintf("%s at %s s", f.Kind, num(f.AtS))
	switch {
	case !f.Done:
		fault += " (not done)"
	case f.Error != "":
		fault += " (failed: " + f.Error + ")"
	}
	lost := "not read"
	if f.Lost >= 0 {
		lost = strconv.FormatInt(f.Lost, 10)
		if f.Lost > 0 {
			lost += ", RPO " + ms(f.RPOMs)
		}
	}
	cells := plain(target, strconv.Itoa(g.clients), strconv.FormatInt(run.ID, 10), fault, ms(f.NoCommitsMs), ms(f.ClientMaxMs),
		ms(f.RecoveredMs), fmt.Sprintf("%.1f", f.BeforeTPS), lost, strconv.FormatInt(f.InDoubt, 10))
	for i := 1; i < len(cells); i++ {
		if i != 3 {
			cells[i].Class = "num"
		}
	}
	if f.Lost > 0 {
		cells[8].Class = "num left-out" // data lost: red
	}
	return cells
}

func (a *analysis) validitySection() docSection {
	s := docSection{ID: "validity", Title: "Validity"}
	if t := a.validityTable(); len(t.Rows) > 0 {
		s.add(para("Runs that are left out of the figures above, or that carry flags or warnings:"), tableOf(t))
	} else {
		s.add(para("Every run completed, and none was flagged."))
	}
	return s
}

func (a *analysis) environmentSection() docSection {
	s := docSection{ID: "environment", Title: "Environment"}
	env := a.r.Env
	if env.Client != "" {
		s.add(para("Client: " + env.Client))
	}
	s.add(tableOf(a.targetTable()))
	if len(env.Differences) > 0 {
		s.add(para("Settings that differ between targets:"), list("", items(env.Differences, "", "")))
	}
	if len(env.Warnings) > 0 {
		s.add(block{Kind: warnBlock, Text: "Warnings", Items: items(env.Warnings, "", "")})
	}
	return s
}

func (a *analysis) priceSection() docSection {
	s := docSection{ID: "price-performance", Title: "Price-performance"}
	if !a.priced {
		s.add(para("No target has a price."))
		if notes := a.priceNotes(); len(notes) > 0 {
			s.add(list("", items(notes, "", "")))
		}
		return s
	}
	s.add(tableOf(a.priceTable()))
	if a.currency == "" {
		s.add(para("The prices are in different currencies, so they are not compared."))
	}
	for _, wl := range a.workloads {
		s.add(heading("price-"+wl.slug, wl.Name, wl.Name), legendOf(a.pricePerfLegend(wl)), tableOf(a.pricePerfTable(wl)))
		figs := charts(nil)
		if f, ok := a.priceChart(wl); ok {
			figs.Figs = []figure{f}
		} else {
			figs.Only = markdownOnly // the page leaves out what Markdown marks with a blank line
		}
		s.add(figs)
	}
	return s
}

// brief is what Terminal prints: a few lines about the report, then per group
// its table, the runs left out and the flags under it, and its statements; the
// objectives' tables; the prices; the environment.
func (a *analysis) brief(tables []workloadTables, names []string) []block {
	hang := func(text string) block { return block{Kind: paraBlock, Text: text, Hang: true} }
	var out []block
	if a.r.Title != "" {
		out = append(out, para(a.r.Title))
	}
	if a.r.Source != "" {
		out = append(out, hang(a.r.Source))
	}
	var meta []string
	if g := a.generated(); g != "" {
		meta = append(meta, "generated "+g)
	}
	if a.compared() {
		meta = append(meta, "baseline "+a.baseName())
	}
	meta = append(meta, fmt.Sprintf("%d %s", len(a.targets), plural(len(a.targets), "target", "targets")))
	out = append(out, hang(strings.Join(meta, "; ")))
	for i, t := range a.targets {
		if names[i] != t.Name {
			out = append(out, hang(names[i]+" is "+t.Name))
		}
	}
	out = append(out, block{Kind: paraBlock, Text: a.legend(), Gap: true})
	for i, wl := range a.workloads {
		for j, g := range wl.groups {
			out = append(out, block{Kind: tableBlock, Table: tables[i].full[j], Gap: true}, list("", groupNotes(g)))
			if t := tables[i].statements[j]; t != nil {
				out = append(out, block{Kind: paraBlock, Text: statementsIntro, Gap: true}, tableOf(t))
			}
		}
	}
	for i, wl := range a.workloads {
		if t := tables[i].objective; len(t.Rows) > 0 {
			out = append(out, block{Kind: paraBlock, Text: wl.Name + ": " + a.objectiveLegend(wl), Gap: true, Hang: true},
				tableOf(t), list("", items(tables[i].objectiveNotes, "-", "")))
		}
	}
	return append(out, a.briefEnd()...)
}

// briefEnd is the end of the brief: the targets' prices, or why they have none,
// and the environment.
func (a *analysis) briefEnd() []block {
	var out []block
	heading := block{Kind: paraBlock, Gap: true}
	if notes := a.priceNotes(); !a.priced && len(notes) > 0 {
		heading.Text = "Prices"
		out = append(out, heading, list("", items(notes, "", "")))
	}
	if a.priced {
		heading.Text = "Prices"
		out = append(out, heading, list("", items(a.priceLines(), "", "")))
	}
	env := a.r.Env
	var lines []string
	if env.Client != "" {
		lines = append(lines, "client: "+env.Client)
	}
	for _, d := range env.Differences {
		lines = append(lines, "differs: "+d)
	}
	for _, wn := range env.Warnings {
		lines = append(lines, "warning: "+wn)
	}
	if len(lines) > 0 {
		heading.Text = "Environment"
		out = append(out, heading, list("", items(lines, "", "")))
	}
	return out
}
