package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// termWidth is the width Terminal keeps every line within.
const termWidth = 100

// maxTargetHeader is the most columns a target's name takes in a table header;
// longer names are shortened in the middle.
const maxTargetHeader = 16

// maxLabel is the most columns a row's label takes in the terminal.
const maxLabel = 48

// Terminal writes what `pgbakeoff compare` prints: per workload and client count, a
// table whose rows are metrics and whose columns are targets, each non-baseline
// target followed by its ratio to the baseline (with the verdict on the headline
// metric), and the runs that do not count listed under their table with the reason.
// No line is wider than 100 columns: names and verdicts are abbreviated and, when
// there are too many targets for one table, the targets are split across several,
// each repeating the baseline.
func Terminal(w io.Writer, r *Report) error {
	var t termWriter
	for _, bl := range newDocument(newAnalysis(r)).Brief {
		t.block(bl)
	}
	t.flush()
	_, err := io.WriteString(w, t.b.String())
	return err
}

// termWriter writes a document's brief as lines of text.
type termWriter struct {
	b strings.Builder
	// pending are the notes of the cells the last table abbreviated: they
	// follow the list of notes under it.
	pending []string
}

func (t *termWriter) line(s string) { t.b.WriteString(s + "\n") }

// para wraps text within termWidth, the first line starting with first and the
// others with rest.
func (t *termWriter) para(text, first, rest string) {
	for _, l := range wrap(text, termWidth, first, rest) {
		t.line(l)
	}
}

func (t *termWriter) item(mark, text string) {
	first := "  "
	if mark != "" {
		first += mark + " "
	}
	t.para(text, first, "    ")
}

func (t *termWriter) flush() {
	for _, n := range t.pending {
		t.item("-", n)
	}
	t.pending = nil
}

func (t *termWriter) block(bl block) {
	if bl.Kind != listBlock {
		t.flush()
	}
	if bl.Gap {
		t.line("")
	}
	switch bl.Kind {
	case paraBlock:
		rest := ""
		if bl.Hang {
			rest = "  "
		}
		t.para(bl.Text, "", rest)
	case tableBlock:
		parts := termParts(bl.Table)
		for i, p := range parts {
			if i > 0 {
				t.line("")
			}
			if title := bl.Table.termTitle; title != "" {
				if len(parts) > 1 {
					title += fmt.Sprintf(" (%d of %d)", i+1, len(parts))
				}
				t.para(title, "", "  ")
			}
			for _, l := range p.lines() {
				t.line(l)
			}
			t.pending = append(t.pending, p.notes...)
		}
	case listBlock:
		for _, it := range bl.Items {
			t.item(it.Mark, it.Text)
		}
		t.flush()
	}
}

// textTable is a table laid out in columns of text, with the notes its
// abbreviated cells leave to be said under it.
type textTable struct {
	header []string
	rows   [][]string
	right  []bool // right-aligned columns
	notes  []string
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

// termParts lays a table out within termWidth: whole, in full or else with its
// cells abbreviated; if neither fits, split by its targets into as few parts as
// fit in full, each repeating the baseline's columns, a target too wide for any
// part in one of its own, abbreviated. A table without owners is never split.
func termParts(t *docTable) []textTable {
	if t.owner == nil {
		return []textTable{t.part(nil, false)}
	}
	var others []int
	for _, o := range t.owner {
		if o >= 0 && o != t.base && !slices.Contains(others, o) {
			others = append(others, o)
		}
	}
	fits := func(p textTable) bool { return p.width() <= termWidth }
	for _, short := range []bool{false, true} {
		if p := t.part(others, short); fits(p) {
			return []textTable{p}
		}
	}
	var parts []textTable
	var chunk []int
	for _, o := range others {
		next := append(slices.Clone(chunk), o)
		switch {
		case fits(t.part(next, false)):
			chunk = next
		case len(chunk) == 0:
			parts = append(parts, t.part(next, true)) // not even one target fits in full
		default:
			parts = append(parts, t.part(chunk, false))
			chunk = []int{o}
			if !fits(t.part(chunk, false)) {
				parts = append(parts, t.part(chunk, true))
				chunk = nil
			}
		}
	}
	if len(chunk) > 0 {
		parts = append(parts, t.part(chunk, false))
	}
	return parts
}

// part is the table with the columns every part repeats, the baseline's and
// those of targets, short abbreviating its cells; with no owners, every column.
func (t *docTable) part(targets []int, short bool) textTable {
	var cols []int
	for _, want := range append([]int{-1, t.base}, targets...) {
		for c, o := range t.owner {
			if o == want {
				cols = append(cols, c)
			}
		}
	}
	if t.owner == nil {
		for c := range t.Head {
			cols = append(cols, c)
		}
	}
	head := t.termHead
	if head == nil {
		head = t.Head
	}
	var p textTable
	for _, c := range cols {
		p.header, p.right = append(p.header, head[c]), append(p.right, t.Right[c])
	}
	for _, row := range t.Rows {
		var texts []string
		for k, c := range cols {
			cell := row[c]
			text := cell.Text
			if short && cell.short != "" {
				text = cell.short
				if cell.note != "" {
					p.notes = append(p.notes, cell.note)
				}
			}
			if k == 0 {
				text = ellipsis(text, maxLabel)
			}
			texts = append(texts, text)
		}
		p.rows = append(p.rows, texts)
	}
	return p
}
