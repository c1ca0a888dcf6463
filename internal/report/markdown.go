package report

import (
	"fmt"
	"io"
	"strings"
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
	d := newDocument(newAnalysis(r))
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(d.Title))
	for _, m := range d.Meta {
		fmt.Fprintf(&b, "%s  \n", mdEscape(m))
	}
	b.WriteString("\n")
	for _, s := range d.Sections {
		fmt.Fprintf(&b, "- [%s](#%s)\n", s.Title, s.ID)
	}
	b.WriteString("\n")
	for _, s := range d.Sections {
		fmt.Fprintf(&b, "## %s\n\n", s.Title)
		if s.Intro != "" {
			fmt.Fprintf(&b, "%s\n\n", mdEscape(s.Intro))
		}
		var blocks []block
		for _, bl := range s.Blocks {
			if bl.Only != htmlOnly {
				blocks = append(blocks, bl)
			}
		}
		for i, bl := range blocks {
			// Lists one after another run together, as one list.
			joined := i+1 < len(blocks) && blocks[i+1].Kind == listBlock
			if err := writeMDBlock(&b, bl, charts, joined); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// writeMDBlock writes one block, and a blank line after it unless it is a list
// that the next one continues (joined).
func writeMDBlock(b *strings.Builder, bl block, charts ChartWriter, joined bool) error {
	switch bl.Kind {
	case headingBlock:
		fmt.Fprintf(b, "### %s\n\n", mdEscape(bl.Text))
	case paraBlock, legendBlock:
		fmt.Fprintf(b, "%s\n\n", mdEscape(bl.Text))
	case tableBlock:
		writeMDTable(b, bl.Table)
	case warnBlock, listBlock:
		if bl.Kind == warnBlock {
			fmt.Fprintf(b, "%s:\n\n", mdEscape(bl.Text))
		}
		for _, it := range bl.Items {
			if it.Only != htmlOnly {
				fmt.Fprintf(b, "- %s\n", mdEscape(it.Text))
			}
		}
		if !joined {
			b.WriteString("\n")
		}
	case chartsBlock:
		for _, f := range bl.Figs {
			path, err := charts.Write(f.name+".svg", f.svg)
			if err != nil {
				return fmt.Errorf("write chart %s: %w", f.name, err)
			}
			if strings.ContainsAny(path, " ()<>") {
				path = "<" + path + ">"
			}
			fmt.Fprintf(b, "![%s](%s)\n", mdEscape(f.title), path)
		}
		b.WriteString("\n")
	}
	return nil
}

func writeMDTable(b *strings.Builder, t *docTable) {
	if len(t.Head) == 0 {
		return
	}
	b.WriteString("|")
	for _, h := range t.Head {
		b.WriteString(" " + mdEscape(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Head {
		if t.Right[i] {
			b.WriteString("--:|")
		} else {
			b.WriteString(":--|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + mdEscape(c.Text) + " |")
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
