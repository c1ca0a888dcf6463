package report

import (
	"fmt"
	"io"
	"strings"
)

// HTML writes the report as one self-contained page: inline CSS, the charts as
// inline SVG with hover values, no script and nothing fetched from the network, so
// the file can be mailed, archived or opened offline. It has a table of contents,
// the sections of Markdown, validity flags and warnings next to the results they
// concern, and a print style sheet.
func HTML(w io.Writer, r *Report) error {
	a := newAnalysis(r)
	fs := a.figures()
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	figs := func(list []figure) {
		p(`<div class="charts">` + "\n")
		for _, f := range list {
			p("<figure>\n")
			b.Write(f.svg)
			if f.caption != "" {
				p("<figcaption>%s</figcaption>\n", esc(f.caption))
			}
			p("</figure>\n")
		}
		p("</div>\n")
	}

	title := r.Title
	if title == "" {
		title = "pgbakeoff report"
	}
	p("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	p(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	p(`<meta name="generator" content="pgbakeoff">` + "\n")
	p("<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n<div class=\"page\">\n", esc(title), css)

	p("<header>\n<h1>%s</h1>\n<p class=\"meta\">", esc(title))
	for i, m := range a.metaLines() {
		if i > 0 {
			p("<br>")
		}
		p("%s", esc(m))
	}
	p("</p>\n</header>\n")

	// Table of contents, with the workloads under the sections that have them.
	p(`<nav class="toc" aria-label="Contents"><h2>Contents</h2><ol>` + "\n")
	for _, s := range a.sections() {
		p(`<li><a href="#%s">%s</a>`, s.id, esc(s.title))
		if sub := a.tocEntries(s.id); len(sub) > 0 {
			p("<ol>")
			for _, e := range sub {
				p(`<li><a href="#%s">%s</a></li>`, e.id, esc(e.title))
			}
			p("</ol>")
		}
		p("</li>\n")
	}
	p("</ol></nav>\n<main>\n")

	p(`<section id="summary"><h2>Summary</h2>` + "\n")
	if len(r.Env.Warnings) > 0 {
		p(`<div class="warn"><strong>Warnings about this comparison</strong><ul>`)
		for _, wn := range r.Env.Warnings {
			p("<li>%s</li>", esc(wn))
		}
		p("</ul></div>\n")
	}
	p(`<p class="legend">%s</p>`+"\n", esc(a.legend()))
	for _, wl := range a.workloads {
		p(`<h3 id="summary-%s">%s</h3>`+"\n", wl.slug, esc(wl.heading()))
		writeHTMLTable(&b, a.summaryTable(wl))
		if t := a.objectiveTable(wl); len(t.rows) > 0 {
			p(`<p class="legend">%s</p>`+"\n", esc(a.objectiveLegend(wl)))
			writeHTMLTable(&b, t)
			if notes := a.objectiveNotes(wl); len(notes) > 0 {
				p(`<ul class="notes">`)
				for _, n := range notes {
					p(`<li class="warning">%s</li>`, esc(n))
				}
				p("</ul>\n")
			}
		}
		p(`<ul class="verdicts">`)
		for _, s := range a.verdictSummaries(wl) {
			p("<li>%s</li>", esc(s))
		}
		for _, g := range wl.groups {
			if n := leftOut(g); n > 0 {
				p(`<li class="left-out">%d %s at %s left out: see <a href="#%s">the results</a>.</li>`,
					n, plural(n, "run", "runs"), g.label(), resultsID(wl, g))
			}
		}
		p("</ul>\n")
	}
	p("</section>\n")

	p(`<section id="results"><h2>Results</h2>` + "\n")
	p(`<p class="legend">Hover over a cell for every run's figure. Shaded cells vary by more than the noise threshold.</p>` + "\n")
	for _, wl := range a.workloads {
		for _, g := range wl.groups {
			p(`<h3 id="%s">%s, %s</h3>`+"\n", resultsID(wl, g), esc(wl.Name), g.label())
			writeHTMLTable(&b, a.fullTable(g))
			if t := a.statementTable(g); len(t.rows) > 0 {
				p(`<p class="legend">%s</p>`+"\n", esc(statementsIntro))
				writeHTMLTable(&b, t)
			}
			if notes := groupNotes(g); len(notes) > 0 {
				p(`<ul class="notes">`)
				for _, n := range notes {
					cl := "warning"
					if n.mark == "x" {
						cl = "left-out"
					}
					p(`<li class="%s">%s</li>`, cl, esc(n.text))
				}
				p("</ul>\n")
			}
		}
	}
	p("</section>\n")

	p(`<section id="throughput-and-p99-vs-clients"><h2>Throughput and p99 vs clients</h2>` + "\n")
	for _, wl := range a.workloads {
		p(`<h3 id="clients-%s">%s</h3>`+"\n", wl.slug, esc(wl.Name))
		figs(fs.clients[wl.slug])
	}
	p("</section>\n")

	p(`<section id="time-series"><h2>Time series</h2><p class="legend">%s</p>`+"\n", esc(seriesIntro))
	for _, wl := range a.workloads {
		list := fs.series[wl.slug]
		for i, g := range wl.groups {
			p(`<h3 id="series-%s-%s">%s, %s</h3>`+"\n", wl.slug, g.id(), esc(wl.Name), g.label())
			figs(list[i])
			if ev := seriesEvents(g); len(ev) > 0 {
				p(`<ul class="notes">`)
				for _, e := range ev {
					p(`<li class="warning">%s</li>`, esc(e))
				}
				p("</ul>\n")
			}
		}
	}
	p("</section>\n")

	p(`<section id="latency-distribution"><h2>Latency distribution</h2><p class="legend">%s</p>`+"\n", esc(latencyIntro))
	for _, wl := range a.workloads {
		p(`<h3 id="latency-%s">%s</h3>`+"\n", wl.slug, esc(wl.Name))
		figs(fs.latency[wl.slug])
	}
	p("</section>\n")

	p(`<section id="server-view"><h2>Server view</h2>` + "\n")
	for _, wl := range a.workloads {
		p(`<h3 id="server-%s">%s</h3>`+"\n", wl.slug, esc(wl.Name))
		if len(fs.server[wl.slug]) == 0 {
			p("<p>The server was not sampled.</p>\n")
			continue
		}
		figs(fs.server[wl.slug])
		if t := a.waitTable(wl); len(t.rows) > 0 {
			p("<p>Top wait events (share of active sessions, mean of the valid runs):</p>\n")
			writeHTMLTable(&b, t)
		}
	}
	p("</section>\n")

	p(`<section id="validity"><h2>Validity</h2>` + "\n")
	if t := a.validityTable(); len(t.rows) > 0 {
		p("<p>Runs that are left out of the figures above, or that carry flags or warnings:</p>\n")
		writeHTMLTable(&b, t)
	} else {
		p("<p>Every run completed, and none was flagged.</p>\n")
	}
	p("</section>\n")

	p(`<section id="environment"><h2>Environment</h2>` + "\n")
	if r.Env.Client != "" {
		p("<p>Client: %s</p>\n", esc(r.Env.Client))
	}
	writeHTMLTable(&b, a.targetTable())
	if len(r.Env.Differences) > 0 {
		p("<p>Settings that differ between targets:</p>\n<ul>")
		for _, d := range r.Env.Differences {
			p("<li>%s</li>", esc(d))
		}
		p("</ul>\n")
	}
	if len(r.Env.Warnings) > 0 {
		p(`<div class="warn"><strong>Warnings</strong><ul>`)
		for _, wn := range r.Env.Warnings {
			p("<li>%s</li>", esc(wn))
		}
		p("</ul></div>\n")
	}
	p("</section>\n")

	p(`<section id="price-performance"><h2>Price-performance</h2>` + "\n")
	if !a.priced {
		p("<p>No target has a price.</p>\n")
		if notes := a.priceNotes(); len(notes) > 0 {
			p("<ul>")
			for _, n := range notes {
				p("<li>%s</li>", esc(n))
			}
			p("</ul>\n")
		}
	} else {
		writeHTMLTable(&b, a.priceTable())
		if a.currency == "" {
			p("<p>The prices are in different currencies, so they are not compared.</p>\n")
		}
		for _, wl := range a.workloads {
			p(`<h3 id="price-%s">%s</h3>`+"\n", wl.slug, esc(wl.Name))
			p(`<p class="legend">%s</p>`+"\n", esc(a.pricePerfLegend(wl)))
			writeHTMLTable(&b, a.pricePerfTable(wl))
			if list := fs.price[wl.slug]; len(list) > 0 {
				figs(list)
			}
		}
	}
	p("</section>\n</main>\n")
	p("<footer>Written by pgbakeoff")
	if g := a.generated(); g != "" {
		p(" on %s", esc(g))
	}
	p(".</footer>\n</div>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func resultsID(wl workload, g group) string { return fmt.Sprintf("results-%s-%s", wl.slug, g.id()) }

// leftOut counts a group's runs that do not count.
func leftOut(g group) int {
	n := 0
	for _, c := range g.cells {
		n += len(c.excluded)
	}
	return n
}

// tocEntries are the workload entries under a section of the contents.
func (a *analysis) tocEntries(id string) []section {
	var out []section
	for _, wl := range a.workloads {
		switch id {
		case "summary":
			out = append(out, section{"summary-" + wl.slug, wl.Name})
		case "throughput-and-p99-vs-clients":
			out = append(out, section{"clients-" + wl.slug, wl.Name})
		case "latency-distribution":
			out = append(out, section{"latency-" + wl.slug, wl.Name})
		case "server-view":
			out = append(out, section{"server-" + wl.slug, wl.Name})
		case "results", "time-series":
			prefix := "results"
			if id == "time-series" {
				prefix = "series"
			}
			for _, g := range wl.groups {
				out = append(out, section{fmt.Sprintf("%s-%s-%s", prefix, wl.slug, g.id()),
					fmt.Sprintf("%s, %s", wl.Name, g.label())})
			}
		case "price-performance":
			if a.priced {
				out = append(out, section{"price-" + wl.slug, wl.Name})
			}
		}
	}
	return out
}

func writeHTMLTable(b *strings.Builder, t mdTable) {
	if len(t.header) == 0 {
		return
	}
	b.WriteString("<div class=\"scroll\"><table>\n<thead><tr>")
	for i, h := range t.header {
		cl := ""
		if i < len(t.right) && t.right[i] {
			cl = ` class="num"`
		}
		fmt.Fprintf(b, "<th%s>%s</th>", cl, esc(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for ri, r := range t.rows {
		b.WriteString("<tr>")
		for i, c := range r {
			var attrs string
			cl := ""
			if ri < len(t.class) && i < len(t.class[ri]) {
				cl = t.class[ri][i]
			}
			if cl == "" && i < len(t.right) && t.right[i] {
				cl = "num"
			}
			if cl != "" {
				attrs += fmt.Sprintf(` class="%s"`, esc(cl))
			}
			if ri < len(t.title) && i < len(t.title[ri]) && t.title[ri][i] != "" {
				attrs += fmt.Sprintf(` title="%s"`, esc(t.title[ri][i]))
			}
			// On a narrow screen a row's cells wrap under one another, each
			// named by its column's header (see the style sheet).
			if i < len(t.header) && t.header[i] != "" {
				attrs += fmt.Sprintf(` data-label="%s"`, esc(t.header[i]))
			}
			tag := "td"
			if i == 0 {
				tag = "th"
				attrs += ` scope="row"`
			}
			fmt.Fprintf(b, "<%s%s>%s</%s>", tag, attrs, esc(c), tag)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table></div>\n")
}

// css is the page's only style sheet: readable on a laptop screen, printable.
const css = `:root { --fg: #1f2328; --muted: #59636e; --line: #d8dee4; --accent: #0072B2; }
* { box-sizing: border-box; }
html { background: #f6f8fa; }
body { margin: 0; color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
.page { max-width: 1200px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; min-height: 100vh; }
h1 { font-size: 28px; margin: 0 0 6px; }
h2 { font-size: 22px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 17px; margin: 28px 0 8px; }
a { color: var(--accent); }
.meta, .legend, figcaption, footer { color: var(--muted); }
.legend { max-width: 80ch; }
nav.toc { margin: 20px 0; padding: 8px 20px 12px; border: 1px solid var(--line); border-radius: 6px; background: #fbfcfd; }
nav.toc h2 { font-size: 16px; margin: 8px 0; border: 0; padding: 0; }
nav.toc ol { margin: 0; padding-left: 22px; }
nav.toc ol ol { display: flex; flex-wrap: wrap; gap: 0 16px; padding-left: 0; list-style: none; font-size: 13px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 12px; font-variant-numeric: tabular-nums; font-size: 14px; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid var(--line); white-space: nowrap; }
tbody th { font-weight: 600; white-space: nowrap; }
.num { text-align: right; white-space: nowrap; }
td[title] { cursor: help; }
td.hv { background: #fff1d6; }
td.verdict { white-space: nowrap; }
.verdict.faster { color: #116329; font-weight: 600; }
.verdict.slower { color: #b3261e; font-weight: 600; }
.verdict.noise, .verdict.unknown { color: var(--muted); }
.left-out { color: #b3261e; }
tr td.left-out, tr th.left-out { background: #fdf0ef; }
ul.notes, ul.verdicts { margin: 4px 0 12px; padding-left: 22px; font-size: 14px; }
ul.notes li.warning { color: #7d4e00; }
.warn { margin: 12px 0; padding: 8px 14px; border-left: 4px solid #d4a72c; background: #fff8e5; }
.warn ul { margin: 4px 0; padding-left: 20px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr)); gap: 16px; margin: 8px 0 12px; }
figure { margin: 0; padding: 8px; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
figure svg.chart { display: block; width: 100%; height: auto; }
figcaption { font-size: 13px; margin-top: 4px; }
footer { margin-top: 40px; font-size: 13px; }
@media (max-width: 700px) { .page { padding: 12px; } .charts { grid-template-columns: 1fr; } }
@media screen and (max-width: 640px) {
  .scroll { overflow-x: visible; }
  .scroll table, .scroll tbody { display: block; }
  .scroll thead { display: none; }
  .scroll tr { display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 16px; padding: 6px 0; border-bottom: 1px solid var(--line); }
  .scroll th, .scroll td { display: block; padding: 0; border: 0; max-width: 100%; text-align: left; white-space: normal; overflow-wrap: anywhere; }
  .scroll tbody th { flex: 1 0 100%; }
  .scroll [data-label]::before { content: attr(data-label); display: block; font-size: 12px; font-weight: normal; color: var(--muted); }
}
@media print {
  @page { margin: 14mm; }
  html, .page { background: #fff; }
  body { font-size: 11pt; }
  .page { max-width: none; padding: 0; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  a { color: inherit; text-decoration: none; }
  .scroll { overflow: visible; }
  .charts { grid-template-columns: 1fr 1fr; }
  h2, h3 { break-after: avoid; }
  table, figure, .warn { break-inside: avoid; }
  td[title] { cursor: auto; }
}
`
