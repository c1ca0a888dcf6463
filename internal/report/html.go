package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
)

// pageText is the page's template and style sheet.
//
//go:embed report.html.tmpl
var pageText string

var pageTemplate = template.Must(template.New("report").Parse(pageText))

// HTML writes the report as one self-contained page: inline CSS, the charts as
// inline SVG with hover values, no script and nothing fetched from the network, so
// the file can be mailed, archived or opened offline. It has a table of contents,
// the sections of Markdown, validity flags and warnings next to the results they
// concern, and a print style sheet.
func HTML(w io.Writer, r *Report) error {
	return pageTemplate.Execute(w, newDocument(newAnalysis(r)))
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

// TOC are a section's headings, its entries in the page's contents.
func (s docSection) TOC() []block {
	var out []block
	for _, b := range s.Blocks {
		if b.Kind == headingBlock && b.TOC != "" {
			out = append(out, b)
		}
	}
	return out
}

// InHTML tells the template whether the page shows a block.
func (b block) InHTML() bool { return b.Only != markdownOnly }

// InHTML tells the template whether the page shows an item.
func (it item) InHTML() bool { return it.Only != markdownOnly }

// htmlCell is a table cell as the template writes it: its CSS class (num for
// a right-aligned column without one of its own), hover text, the header that
// names it on a narrow screen, where a row's cells wrap under one another, and
// whether it heads its row.
type htmlCell struct {
	Text, Class, Title, Label string
	Row                       bool
}

// HTMLRows are the table's rows for the template.
func (t *docTable) HTMLRows() [][]htmlCell {
	out := make([][]htmlCell, len(t.Rows))
	for r, row := range t.Rows {
		for i, c := range row {
			h := htmlCell{Text: c.Text, Class: c.Class, Title: c.Title, Row: i == 0}
			if h.Class == "" && t.Right[i] {
				h.Class = "num"
			}
			if i < len(t.Head) {
				h.Label = t.Head[i]
			}
			out[r] = append(out[r], h)
		}
	}
	return out
}
