package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// chartNames are the charts a report of the fixture's shape must have, by the
// names the CLI and the Markdown files use.
func chartNames(r *Report) []string {
	var names []string
	priced := slices.ContainsFunc(r.Targets, func(t Target) bool { return t.Price != nil })
	for _, w := range r.Workloads {
		s := slug(w.Name)
		names = append(names, "throughput-"+s, "p99-"+s)
		for _, c := range w.Clients {
			names = append(names, fmt.Sprintf("series-%s-c%d", s, c), fmt.Sprintf("series-p99-%s-c%d", s, c))
		}
		for _, c := range w.Clients {
			names = append(names, fmt.Sprintf("latency-%s-c%d", s, c))
		}
		names = append(names, "cpu-"+s, "iops-"+s, "wal-"+s)
		for _, c := range w.Clients {
			names = append(names, fmt.Sprintf("waits-%s-c%d", s, c))
		}
		if priced {
			names = append(names, "price-"+s)
		}
	}
	return names
}

// page is what TestHTML learns from walking a page's elements.
type page struct {
	charts   []string        // data-chart-name of each svg.chart, in order
	marks    map[string]int  // drawn data marks (lines, bars, points) per chart
	titles   map[string]int  // hover titles per chart
	ids      map[string]int  // element ids and how often each occurs
	links    []string        // in-page links
	external []string        // anything that would load from elsewhere
	sections map[string]bool // section ids
	text     strings.Builder // all text, for content checks
	elements map[string]int  // element counts by name
}

// parsePage walks an HTML page with encoding/xml in its lenient HTML mode, which
// is enough for a page this package writes.
func parsePage(t *testing.T, doc []byte) *page {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	p := &page{marks: map[string]int{}, titles: map[string]int{}, ids: map[string]int{}, sections: map[string]bool{},
		elements: map[string]int{}}
	var chart string // the chart being walked
	depth, chartDepth := 0, -1
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			name := strings.ToLower(tok.Name.Local)
			p.elements[name]++
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[strings.ToLower(a.Name.Local)] = a.Value
			}
			if id, ok := attr["id"]; ok {
				p.ids[id]++
				if name == "section" {
					p.sections[id] = true
				}
			}
			for _, k := range []string{"src", "href", "xlink:href", "action", "data", "poster"} {
				v, ok := attr[k]
				switch {
				case !ok:
				case k == "href" && strings.HasPrefix(v, "#"):
					p.links = append(p.links, v[1:])
				default:
					p.external = append(p.external, fmt.Sprintf("<%s %s=%q>", name, k, v))
				}
			}
			if name == "link" || name == "iframe" || name == "object" || name == "embed" || name == "img" {
				p.external = append(p.external, "<"+name+">")
			}
			if name == "script" {
				p.external = append(p.external, "<script>") // the page needs none
			}
			if name == "svg" && slices.Contains(strings.Fields(attr["class"]), "chart") {
				chart, chartDepth = attr["data-chart-name"], depth
				p.charts = append(p.charts, chart)
			}
			if chart != "" {
				cl := strings.Fields(attr["class"])
				if name == "circle" || slices.Contains(cl, "line") || slices.Contains(cl, "bar") {
					p.marks[chart]++
				}
				if name == "title" {
					p.titles[chart]++
				}
			}
		case xml.EndElement:
			if depth == chartDepth {
				chart, chartDepth = "", -1
			}
			depth--
		case xml.CharData:
			p.text.Write(tok)
		}
	}
	return p
}

func TestHTML(t *testing.T) {
	for _, rc := range reports {
		t.Run("report="+rc.name, func(t *testing.T) {
			r := rc.report()
			var b bytes.Buffer
			if err := HTML(&b, r); err != nil {
				t.Fatal(err)
			}
			doc := b.String()
			for _, bad := range []string{"<script", "<link", "@import", "@font-face", "<img", "<iframe"} {
				if strings.Contains(strings.ToLower(doc), bad) {
					t.Errorf("the page contains %q: it must not load anything", bad)
				}
			}
			// url() may only point inside the page (the charts' clip paths).
			if u := regexp.MustCompile(`url\(\s*['"]?[^#'"\s]`).FindString(doc); u != "" {
				t.Errorf("the page loads %s...", u)
			}
			p := parsePage(t, b.Bytes())
			if len(p.external) > 0 {
				t.Errorf("the page refers to other resources: %v", p.external)
			}
			want := chartNames(r)
			got := slices.Clone(p.charts)
			slices.Sort(got)
			slices.Sort(want)
			if len(got) != rc.charts || !slices.Equal(got, want) {
				t.Errorf("%d charts %v\nwant %d %v", len(got), got, rc.charts, want)
			}
			for _, c := range p.charts {
				if p.marks[c] == 0 {
					t.Errorf("chart %s draws no line, bar or point", c)
				}
				if p.titles[c] == 0 {
					t.Errorf("chart %s has no hover titles", c)
				}
			}
			for id, n := range p.ids {
				if n > 1 {
					t.Errorf("id %q occurs %d times", id, n)
				}
			}
			for _, l := range p.links {
				if p.ids[l] == 0 {
					t.Errorf("link to #%s leads nowhere", l)
				}
			}
			for _, s := range []string{"summary", "results", "throughput-and-p99-vs-clients", "time-series",
				"latency-distribution", "server-view", "validity", "environment", "price-performance"} {
				if !p.sections[s] {
					t.Errorf("no section %q", s)
				}
			}
			if p.elements["nav"] != 1 || p.elements["style"] != 1 {
				t.Errorf("want one nav (contents) and one style sheet, have %d and %d", p.elements["nav"], p.elements["style"])
			}
			if !strings.Contains(doc, "@media print") {
				t.Error("no print style sheet")
			}
			text := p.text.String()
			for _, w := range r.Env.Warnings {
				if !strings.Contains(text, w) {
					t.Errorf("the environment warning %q is not shown", w)
				}
			}
		})
	}
}

// TestHTMLValidityNextToResults checks that a run left out is named right under
// the table of its cell, and the high-variance cells are marked.
func TestHTMLValidityNextToResults(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, testReport()); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	start := strings.Index(doc, `<h3 id="results-tpcc-10w-c16">`)
	end := strings.Index(doc, `<h3 id="results-tpcc-10w-c32">`)
	if start < 0 || end < start {
		t.Fatalf("no results section for tpcc-10w at 16 clients")
	}
	cell := doc[start:end]
	for _, want := range []string{
		`<li class="left-out">run 14 (pg16, repeat 2) left out: server_restarted: the postmaster start time changed during the window</li>`,
		`class="num hv"`,
		`class="verdict faster"`,
		`2/3`,
	} {
		if !strings.Contains(cell, want) {
			t.Errorf("the 16-client tpcc results lack %s", want)
		}
	}
	if strings.Contains(doc[end:strings.Index(doc, `id="throughput-and-p99-vs-clients"`)], "run 14 (pg16") {
		t.Error("run 14 is listed under another cell's results")
	}
}
