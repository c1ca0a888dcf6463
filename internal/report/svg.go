package report

// The charts are SVG written by hand. The Go charting libraries considered either
// draw through a rasteriser and embed TrueType fonts (wcharczuk/go-chart,
// go-analyze/charts: large dependencies, large SVGs), emit JavaScript that loads
// ECharts from a CDN (go-echarts: not self-contained), or lack what these charts need
// (riclib/gosvgchart, small and dependency-free, has no log axes, vertical marks or
// shaded spans). Three chart shapes are enough here: lines on linear or log axes,
// grouped bars and stacked bars, each a few hundred lines of plain SVG that any
// browser and GitHub render, with hover values as <title> elements.

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Geometry of every chart, in SVG user units (pixels at 100%).
const (
	chartW       = 640.0
	chartH       = 360.0
	padLeft      = 68.0
	padRight     = 18.0
	padBottom    = 50.0
	titleY       = 22.0
	legendRowH   = 18.0
	fontSize     = 12.0
	charW        = 6.6 // rough width of a character at fontSize, for layout
	legendGap    = 16.0
	legendSwatch = 14.0
)

// palette holds colours told apart by most colour-blind readers (Okabe and Ito,
// with black moved last); targets take them in study order.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

// waitPalette colours the wait classes of stacked bars; CPU keeps its own.
var waitPalette = []string{"#4E79A7", "#F28E2B", "#E15759", "#76B7B2", "#EDC948", "#B07AA1", "#FF9DA7", "#9C755F"}

func color(i int) string { return palette[i%len(palette)] }

// axis is one axis of a line chart. Min and Max are found from the data when both
// are zero; Ticks replace the computed ticks when set.
type axis struct {
	Label    string
	Log      bool
	Min, Max float64
	Ticks    []tick
	// FromZero makes a linear axis start at zero when all data are positive.
	FromZero bool
}

type tick struct {
	V     float64
	Label string
}

// pt is one point of a series; Title, when set, is shown on hover.
type pt struct {
	X, Y  float64
	Title string
	// Lo and Hi draw a whisker (the spread of repeated runs) when Hi > Lo.
	Lo, Hi float64
}

type series struct {
	Name   string
	Color  string
	Points []pt
	Title  string // hover text of the whole line
	Faint  bool   // drawn thin and translucent: a repetition behind the main run
	Dashed bool
	Dots   bool // a marker on every point (carrying its Title)
	NoLine bool // markers alone, no line joining them (with Dots); not in the legend
}

// vmark is a vertical line at X, such as a checkpoint.
type vmark struct {
	X     float64
	Color string
	Title string
}

// vspan is a shaded band between X0 and X1, such as an outage or the warm-up.
type vspan struct {
	X0, X1 float64
	Color  string
	Title  string
	Label  string // written at the top of the band
}

// legendItem is one legend entry; Kind is "line", "faint", "dashed", "box", "mark"
// or "span".
type legendItem struct {
	Label, Color, Kind string
}

// lineChart is lines over two axes, with optional marks and spans.
type lineChart struct {
	Name, Title string
	X, Y        axis
	Series      []series
	Marks       []vmark
	Spans       []vspan
	Legend      []legendItem // from Series when nil
}

// barChart draws Values[series][group]: side by side within each group, or stacked
// when Stacked.
type barChart struct {
	Name, Title string
	XLabel      string
	YLabel      string
	Unit        string // after values in hover text
	Groups      []string
	Series      []barSeries
	Stacked     bool
	// Max fixes the top of the value axis (100 for shares); found from data when 0.
	Max float64
}

type barSeries struct {
	Name   string
	Color  string
	Values []float64 // one per group; NaN for none
}

// svgWriter accumulates one SVG document.
type svgWriter struct{ b bytes.Buffer }

func (s *svgWriter) printf(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

// esc escapes text and attribute values; its output is valid in HTML and XML.
func esc(s string) string { return html.EscapeString(s) }

// f formats a coordinate compactly.
func f(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// open writes the root element, background and title; the root carries class
// "chart" and data-chart-name so tests and pages can find every chart.
func (s *svgWriter) open(name, title string, h float64) {
	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart-name="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="%s">`+"\n",
		esc(name), f(chartW), f(h), f(chartW), f(h), esc(title), f(fontSize))
	s.printf(`<rect width="%s" height="%s" fill="#fff"/>`+"\n", f(chartW), f(h))
	s.printf(`<text x="%s" y="%s" text-anchor="middle" font-size="14" font-weight="bold" fill="#222">%s</text>`+"\n",
		f(chartW/2), f(titleY), esc(title))
}

func (s *svgWriter) close() { s.printf("</svg>\n") }

// legend lays out items in rows under the title and returns the y where the plot
// may start.
func (s *svgWriter) legend(items []legendItem) float64 {
	top := titleY + 10
	if len(items) == 0 {
		return top + 8
	}
	x, y := padLeft, top+legendRowH/2+2
	s.printf(`<g class="legend">` + "\n")
	for _, it := range items {
		w := legendSwatch + 5 + float64(len([]rune(it.Label)))*charW
		if x+w > chartW-padRight && x > padLeft {
			x = padLeft
			y += legendRowH
		}
		sx := x
		switch it.Kind {
		case "box":
			s.printf(`<rect x="%s" y="%s" width="%s" height="10" fill="%s"/>`, f(sx), f(y-5), f(legendSwatch), it.Color)
		case "span":
			s.printf(`<rect x="%s" y="%s" width="%s" height="10" fill="%s" fill-opacity="0.18" stroke="%s" stroke-opacity="0.5"/>`,
				f(sx), f(y-5), f(legendSwatch), it.Color, it.Color)
		case "mark":
			s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="3,2"/>`,
				f(sx+legendSwatch/2), f(y-6), f(sx+legendSwatch/2), f(y+6), it.Color)
		case "dashed":
			s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="4,2"/>`,
				f(sx), f(y), f(sx+legendSwatch), f(y), it.Color)
		case "faint":
			s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1" stroke-opacity="0.45"/>`,
				f(sx), f(y), f(sx+legendSwatch), f(y), it.Color)
		default:
			s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"/>`,
				f(sx), f(y), f(sx+legendSwatch), f(y), it.Color)
		}
		s.printf(`<text x="%s" y="%s" fill="#333">%s</text>`+"\n", f(sx+legendSwatch+5), f(y+4), esc(it.Label))
		x += w + legendGap
	}
	s.printf("</g>\n")
	return y + legendRowH/2 + 8
}

// scale maps data values to pixels along one axis.
type scale struct {
	log          bool
	lo, hi       float64 // data range (already positive for log)
	pixLo, pixHi float64
}

func (sc scale) at(v float64) float64 {
	a, b, x := sc.lo, sc.hi, v
	if sc.log {
		if x <= 0 {
			x = sc.lo
		}
		a, b, x = math.Log10(a), math.Log10(b), math.Log10(x)
	}
	if b == a {
		return (sc.pixLo + sc.pixHi) / 2
	}
	return sc.pixLo + (x-a)/(b-a)*(sc.pixHi-sc.pixLo)
}

// niceNum is Heckbert's "nice number": 1, 2 or 5 times a power of ten near x.
func niceNum(x float64, round bool) float64 {
	if x <= 0 {
		return 1
	}
	e := math.Floor(math.Log10(x))
	fr := x / math.Pow(10, e)
	var n float64
	switch {
	case round && fr < 1.5, !round && fr <= 1:
		n = 1
	case round && fr < 3, !round && fr <= 2:
		n = 2
	case round && fr < 7, !round && fr <= 5:
		n = 5
	default:
		n = 10
	}
	return n * math.Pow(10, e)
}

// linearTicks widens [lo, hi] to nice bounds and returns about n ticks across it.
func linearTicks(lo, hi float64, n int) (float64, float64, []tick) {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if lo == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)*0.1, hi+math.Abs(hi)*0.1
		}
	}
	step := niceNum(niceNum(hi-lo, false)/float64(n-1), true)
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	// Whole multiples of step, rounded to its decimals so that 0.1*3 is 0.3.
	at := func(k float64) float64 {
		p := math.Pow(10, float64(dec))
		return math.Round(k*step*p) / p
	}
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	var ts []tick
	for k := first; k <= last; k++ {
		ts = append(ts, tick{V: at(k), Label: compact(at(k), dec)})
	}
	return at(first), at(last), ts
}

// logTicks widens [lo, hi] to powers of ten and ticks every power, adding 2 and 5
// times each when the range spans fewer than three decades.
func logTicks(lo, hi float64) (float64, float64, []tick) {
	if lo <= 0 {
		lo = hi / 1000
	}
	if hi <= lo {
		hi = lo * 10
	}
	a, b := math.Floor(math.Log10(lo)+1e-9), math.Ceil(math.Log10(hi)-1e-9)
	if b == a {
		b++
	}
	var ts []tick
	for e := a; e <= b; e++ {
		p := math.Pow(10, e)
		ts = append(ts, tick{V: p, Label: compact(p, max(0, int(-e)))})
		if b-a < 3 && e < b {
			for _, m := range []float64{2, 5} {
				ts = append(ts, tick{V: m * p, Label: compact(m*p, max(0, int(-e)))})
			}
		}
	}
	return math.Pow(10, a), math.Pow(10, b), ts
}

// compact writes a tick value: 2.5, 800, 12k, 1.5M.
func compact(v float64, dec int) string {
	av := math.Abs(v)
	switch {
	case av >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case av >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// dataRange is the extent of the points' values picked by get, NaN skipped.
func dataRange(ss []series, get func(pt) []float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.Points {
			for _, v := range get(p) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				lo, hi, ok = min(lo, v), max(hi, v), true
			}
		}
	}
	return lo, hi, ok
}

// resolve fixes an axis's range and ticks from the data range.
func (a axis) resolve(lo, hi float64, ok bool, n int) (float64, float64, []tick) {
	if a.Min != 0 || a.Max != 0 {
		lo, hi, ok = a.Min, a.Max, true
	}
	if !ok {
		lo, hi = 0, 1
		if a.Log {
			lo = 1
		}
	}
	if a.Log {
		if a.Ticks != nil {
			return lo, hi, a.Ticks
		}
		return logTicks(lo, hi)
	}
	if a.FromZero && lo > 0 {
		lo = 0
	}
	if a.Ticks != nil {
		return lo, hi, a.Ticks
	}
	return linearTicks(lo, hi, n)
}

// clipID is an element id unique within a page holding many charts.
func clipID(name string) string {
	var b strings.Builder
	b.WriteString("clip-")
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// plotFrame draws grid lines, tick labels and axis labels around the plot area.
func (s *svgWriter) plotFrame(x, y scale, xt, yt []tick, xLabel, yLabel string) {
	top, bottom := y.pixHi, y.pixLo
	left, right := x.pixLo, x.pixHi
	s.printf(`<g class="grid" stroke="#e5e5e5" stroke-width="1">`)
	for _, t := range yt {
		py := y.at(t.V)
		s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(left), f(py), f(right), f(py))
	}
	for _, t := range xt {
		px := x.at(t.V)
		s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(px), f(top), f(px), f(bottom))
	}
	s.printf("</g>\n")
	s.printf(`<g class="axes" fill="#444">`)
	for _, t := range yt {
		s.printf(`<text x="%s" y="%s" text-anchor="end">%s</text>`, f(left-6), f(y.at(t.V)+4), esc(t.Label))
	}
	for _, t := range xt {
		s.printf(`<text x="%s" y="%s" text-anchor="middle">%s</text>`, f(x.at(t.V)), f(bottom+16), esc(t.Label))
	}
	s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, f(left), f(bottom), f(right), f(bottom))
	s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, f(left), f(top), f(left), f(bottom))
	s.printf(`<text x="%s" y="%s" text-anchor="middle" fill="#222">%s</text>`, f((left+right)/2), f(bottom+38), esc(xLabel))
	s.printf(`<text transform="translate(16 %s) rotate(-90)" text-anchor="middle" fill="#222">%s</text>`, f((top+bottom)/2), esc(yLabel))
	s.printf("</g>\n")
}

// noData writes a notice in the middle of an empty plot.
func (s *svgWriter) noData(x, y scale) {
	s.printf(`<text x="%s" y="%s" text-anchor="middle" fill="#888">no data</text>`+"\n",
		f((x.pixLo+x.pixHi)/2), f((y.pixLo+y.pixHi)/2))
}

// svg renders the line chart.
func (c *lineChart) svg() []byte {
	var s svgWriter
	s.open(c.Name, c.Title, chartH)
	items := c.Legend
	if items == nil {
		for _, sr := range c.Series {
			if !sr.Faint && !sr.NoLine {
				items = append(items, legendItem{Label: sr.Name, Color: sr.Color, Kind: "line"})
			}
		}
	}
	xs, ys, xt, yt := c.scales(s.legend(items))
	s.plotFrame(xs, ys, xt, yt, c.X.Label, c.Y.Label)
	id := clipID(c.Name)
	s.printf(`<defs><clipPath id="%s"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>`+"\n",
		id, f(xs.pixLo), f(ys.pixHi), f(xs.pixHi-xs.pixLo), f(ys.pixLo-ys.pixHi))
	s.printf(`<g clip-path="url(#%s)">`+"\n", id)
	c.spans(&s, xs, ys)
	drawn := c.lines(&s, xs, ys)
	s.printf("</g>\n")
	c.dots(&s, xs, ys)
	if drawn == 0 {
		s.noData(xs, ys)
	}
	s.close()
	return s.b.Bytes()
}

// scales fit the axes to the data, marks included, below top, and tick them.
func (c *lineChart) scales(top float64) (xs, ys scale, xt, yt []tick) {
	xlo, xhi, xok := dataRange(c.Series, func(p pt) []float64 { return []float64{p.X} })
	for _, m := range c.Marks {
		xlo, xhi, xok = min(xlo, m.X), max(xhi, m.X), true
	}
	ylo, yhi, yok := dataRange(c.Series, func(p pt) []float64 {
		if p.Hi > p.Lo {
			return []float64{p.Y, p.Lo, p.Hi}
		}
		return []float64{p.Y}
	})
	if c.X.Log {
		xlo, xhi, xok = positiveRange(c.Series, func(p pt) float64 { return p.X })
	}
	if c.Y.Log {
		ylo, yhi, yok = positiveRange(c.Series, func(p pt) float64 { return p.Y })
	}
	xmin, xmax, xt := c.X.resolve(xlo, xhi, xok, 8)
	ymin, ymax, yt := c.Y.resolve(ylo, yhi, yok, 6)
	if c.X.Ticks == nil && !c.X.Log && xok {
		// A time axis ends where the data end, not at the next round number.
		xmin, xmax = xlo, xhi
		if xmin == xmax {
			xmax = xmin + 1
		}
		xt = slices.DeleteFunc(xt, func(t tick) bool { return t.V < xmin-1e-9 || t.V > xmax+1e-9 })
	}
	xs = scale{log: c.X.Log, lo: xmin, hi: xmax, pixLo: padLeft, pixHi: chartW - padRight}
	ys = scale{log: c.Y.Log, lo: ymin, hi: ymax, pixLo: chartH - padBottom, pixHi: top}
	return xs, ys, xt, yt
}

// spans draws the shaded spans and the vertical marks.
func (c *lineChart) spans(s *svgWriter, xs, ys scale) {
	for _, sp := range c.Spans {
		x0, x1 := xs.at(max(sp.X0, xs.lo)), xs.at(min(sp.X1, xs.hi))
		if x1 <= x0 {
			x1 = x0 + 1
		}
		s.printf(`<rect class="span" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.15"><title>%s</title></rect>`,
			f(x0), f(ys.pixHi), f(x1-x0), f(ys.pixLo-ys.pixHi), sp.Color, esc(sp.Title))
		if sp.Label != "" {
			s.printf(`<text x="%s" y="%s" fill="#666" font-size="10">%s</text>`, f(x0+3), f(ys.pixHi+11), esc(sp.Label))
		}
		s.printf("\n")
	}
	for _, m := range c.Marks {
		px := xs.at(m.X)
		s.printf(`<line class="mark" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.2" stroke-dasharray="4,3" stroke-opacity="0.8"><title>%s</title></line>`+"\n",
			f(px), f(ys.pixHi), f(px), f(ys.pixLo), m.Color, esc(m.Title))
	}
}

// off tells whether a point cannot be drawn: no value, or not positive on a log
// axis.
func (c *lineChart) off(p pt) bool {
	return math.IsNaN(p.Y) || (c.Y.Log && p.Y <= 0) || (c.X.Log && p.X <= 0)
}

// lines draws the series' lines, the faint ones first so that the main runs are
// drawn over them, and returns how many series show.
func (c *lineChart) lines(s *svgWriter, xs, ys scale) int {
	drawn := 0
	for _, faint := range []bool{true, false} {
		for _, sr := range c.Series {
			if sr.Faint != faint {
				continue
			}
			if sr.NoLine {
				if sr.Dots && len(sr.Points) > 0 {
					drawn++
				}
				continue
			}
			var d strings.Builder
			pen := 'M'
			for _, p := range sr.Points {
				if c.off(p) {
					pen = 'M'
					continue
				}
				fmt.Fprintf(&d, "%c%s %s", pen, f(xs.at(p.X)), f(ys.at(p.Y)))
				pen = 'L'
			}
			if d.Len() == 0 {
				continue
			}
			drawn++
			width, opacity, dash := "2", "1", ""
			if sr.Faint {
				width, opacity = "1", "0.45"
			}
			if sr.Dashed {
				dash = ` stroke-dasharray="6,3"`
			}
			s.printf(`<path class="line" d="%s" fill="none" stroke="%s" stroke-width="%s" stroke-opacity="%s"%s stroke-linejoin="round">`,
				d.String(), sr.Color, width, opacity, dash)
			if sr.Title != "" {
				s.printf(`<title>%s</title>`, esc(sr.Title))
			}
			s.printf("</path>\n")
		}
	}
	return drawn
}

// dots draws the points of the series that have them, with their whiskers,
// outside the clip so that a point on the edge stays whole.
func (c *lineChart) dots(s *svgWriter, xs, ys scale) {
	for _, sr := range c.Series {
		if !sr.Dots {
			continue
		}
		for _, p := range sr.Points {
			if c.off(p) {
				continue
			}
			px, py := xs.at(p.X), ys.at(p.Y)
			if p.Hi > p.Lo {
				s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`,
					f(px), f(ys.at(p.Lo)), f(px), f(ys.at(p.Hi)), sr.Color)
			}
			s.printf(`<circle cx="%s" cy="%s" r="4" fill="%s" stroke="#fff" stroke-width="1"><title>%s</title></circle>`+"\n",
				f(px), f(py), sr.Color, esc(p.Title))
		}
	}
}

// positiveRange is the extent of the positive values picked by get, for log axes.
func positiveRange(ss []series, get func(pt) float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.Points {
			v := get(p)
			if v > 0 && !math.IsInf(v, 0) {
				lo, hi, ok = min(lo, v), max(hi, v), true
			}
		}
	}
	return lo, hi, ok
}

// svg renders the bar chart.
func (c *barChart) svg() []byte {
	var s svgWriter
	s.open(c.Name, c.Title, chartH)
	var items []legendItem
	for _, sr := range c.Series {
		items = append(items, legendItem{Label: sr.Name, Color: sr.Color, Kind: "box"})
	}
	top := s.legend(items)
	hi, ok := c.top()
	ymin, ymax, yt := linearTicks(0, hi, 6)
	if c.Max > 0 {
		ymax = c.Max
		yt = slices.DeleteFunc(yt, func(t tick) bool { return t.V > c.Max+1e-9 })
	}
	ys := scale{lo: ymin, hi: ymax, pixLo: chartH - padBottom, pixHi: top}
	// The x "scale" maps group i's centre: data i+0.5 over [0, n].
	xs := scale{lo: 0, hi: float64(max(len(c.Groups), 1)), pixLo: padLeft, pixHi: chartW - padRight}
	var xt []tick
	for i, g := range c.Groups {
		xt = append(xt, tick{V: float64(i) + 0.5, Label: g})
	}
	s.plotFrameBars(xs, ys, xt, yt, c.XLabel, c.YLabel)
	if drawn := c.bars(&s, xs, ys); drawn == 0 || !ok {
		s.noData(xs, ys)
	}
	s.close()
	return s.b.Bytes()
}

// top is the highest value or stack of the chart, or its Max when fixed, and
// whether it has any value.
func (c *barChart) top() (float64, bool) {
	hi, ok := 0.0, false
	for g := range c.Groups {
		stack := 0.0
		for _, sr := range c.Series {
			if g >= len(sr.Values) || math.IsNaN(sr.Values[g]) {
				continue
			}
			ok = true
			if c.Stacked {
				stack += sr.Values[g]
				hi = max(hi, stack)
			} else {
				hi = max(hi, sr.Values[g])
			}
		}
	}
	if c.Max > 0 {
		hi = c.Max
	}
	return hi, ok
}

// bars draws the bars, side by side within each group or stacked, and returns
// how many.
func (c *barChart) bars(s *svgWriter, xs, ys scale) int {
	gw := (xs.pixHi - xs.pixLo) / xs.hi
	inner := gw * 0.8
	per := len(c.Series)
	if c.Stacked || per == 0 {
		per = 1
	}
	bw := inner / float64(per)
	drawn := 0
	for g, group := range c.Groups {
		x0 := xs.pixLo + gw*float64(g) + (gw-inner)/2
		base := 0.0
		for i, sr := range c.Series {
			if g >= len(sr.Values) || math.IsNaN(sr.Values[g]) {
				continue
			}
			v := sr.Values[g]
			bx := x0 + bw*float64(i)
			y0, y1 := ys.at(0), ys.at(v)
			if c.Stacked {
				bx = x0
				y0, y1 = ys.at(base), ys.at(base+v)
				base += v
			}
			if y0 < y1 {
				y0, y1 = y1, y0
			}
			title := fmt.Sprintf("%s · %s: %s%s", group, sr.Name, num(v), c.Unit)
			s.printf(`<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`+"\n",
				f(bx+0.5), f(y1), f(max(bw-1, 1)), f(max(y0-y1, 0.5)), sr.Color, esc(title))
			drawn++
		}
	}
	return drawn
}

// plotFrameBars is plotFrame for category groups: horizontal grid only.
func (s *svgWriter) plotFrameBars(x, y scale, xt, yt []tick, xLabel, yLabel string) {
	left, right := x.pixLo, x.pixHi
	top, bottom := y.pixHi, y.pixLo
	s.printf(`<g class="grid" stroke="#e5e5e5" stroke-width="1">`)
	for _, t := range yt {
		py := y.at(t.V)
		s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(left), f(py), f(right), f(py))
	}
	s.printf("</g>\n")
	s.printf(`<g class="axes" fill="#444">`)
	for _, t := range yt {
		s.printf(`<text x="%s" y="%s" text-anchor="end">%s</text>`, f(left-6), f(y.at(t.V)+4), esc(t.Label))
	}
	gw := (right - left) / math.Max(float64(len(xt)), 1)
	maxChars := max(int(gw/charW), 4)
	for _, t := range xt {
		s.printf(`<text x="%s" y="%s" text-anchor="middle">%s</text>`, f(x.at(t.V)), f(bottom+16), esc(ellipsis(t.Label, maxChars)))
	}
	s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, f(left), f(bottom), f(right), f(bottom))
	s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, f(left), f(top), f(left), f(bottom))
	s.printf(`<text x="%s" y="%s" text-anchor="middle" fill="#222">%s</text>`, f((left+right)/2), f(bottom+38), esc(xLabel))
	s.printf(`<text transform="translate(16 %s) rotate(-90)" text-anchor="middle" fill="#222">%s</text>`, f((top+bottom)/2), esc(yLabel))
	s.printf("</g>\n")
}
