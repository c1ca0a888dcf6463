package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

// figure is one chart of a report. Markdown writes it to a file through a
// ChartWriter; HTML inlines it.
type figure struct {
	name    string // unique within a report and safe as a file name: "throughput-tpcc-10w"
	title   string
	caption string
	svg     []byte
}

// maxSeriesPoints bounds the points drawn per run; longer series are averaged
// in buckets, which keeps a one-hour run's chart small.
const maxSeriesPoints = 600

// The chart names of a workload; tests derive the expected list from them.
func throughputName(wl workload) string      { return "throughput-" + wl.slug }
func p99Name(wl workload) string             { return "p99-" + wl.slug }
func seriesName(wl workload, g group) string { return fmt.Sprintf("series-%s-%s", wl.slug, g.id()) }
func seriesP99Name(wl workload, g group) string {
	return fmt.Sprintf("series-p99-%s-%s", wl.slug, g.id())
}
func latencyName(wl workload, g group) string { return fmt.Sprintf("latency-%s-%s", wl.slug, g.id()) }
func serverName(key string, wl workload) string {
	return key + "-" + wl.slug
}
func waitsName(wl workload, g group) string { return fmt.Sprintf("waits-%s-%s", wl.slug, g.id()) }
func priceName(wl workload) string          { return "price-" + wl.slug }

// metricIndex is the position of the metric with key among a workload's, or -1.
func (wl workload) metricIndex(key string) int {
	return slices.IndexFunc(wl.metrics, func(m metric) bool { return m.key == key })
}

// rowOf is a group's row for the metric with key.
func (g group) rowOf(key string) (row, bool) {
	i := slices.IndexFunc(g.rows, func(r row) bool { return r.m.key == key })
	if i < 0 {
		return row{}, false
	}
	return g.rows[i], true
}

// clientAxis is the x axis of the "vs clients" charts: the client counts as ticks,
// or for a workload run open-loop its rates, on a log scale when they span a
// factor of four or more (doubling series).
func clientAxis(wl workload) axis {
	ax := axis{Label: wl.xLabel()}
	if len(wl.groups) == 0 {
		return ax
	}
	lo, hi := wl.groups[0].x(), wl.groups[len(wl.groups)-1].x()
	for _, g := range wl.groups {
		if !slices.ContainsFunc(ax.Ticks, func(t tick) bool { return t.V == g.x() }) {
			ax.Ticks = append(ax.Ticks, tick{V: g.x(), Label: strconv.FormatFloat(g.x(), 'f', -1, 64)})
		}
	}
	switch {
	case lo > 0 && hi/lo >= 4:
		ax.Log = true
		ax.Min, ax.Max = lo/1.25, hi*1.25
	case hi > lo:
		pad := (hi - lo) * 0.06
		ax.Min, ax.Max = lo-pad, hi+pad
	default:
		ax.Min, ax.Max = lo-1, hi+1
	}
	return ax
}

// clientCharts are the headline metric and p99 latency against clients, one line
// per target, whiskers spanning the runs.
func (a *analysis) clientCharts(wl workload) []figure {
	if len(wl.groups) == 0 {
		return nil // searches alone: their curve shows them
	}
	head := wl.metrics[0]
	var out []figure
	for _, spec := range []struct {
		name, key, title, ylabel string
	}{
		{throughputName(wl), head.key, fmt.Sprintf("%s vs %s — %s", head.label, wl.xLabel(), wl.Name), head.label + unitHint(head.label)},
		{p99Name(wl), "p99", fmt.Sprintf("p99 latency vs %s — %s", wl.xLabel(), wl.Name), "p99 latency (ms)"},
	} {
		ch := lineChart{Name: spec.name, Title: spec.title, X: clientAxis(wl),
			Y: axis{Label: spec.ylabel, FromZero: true}}
		// Against rates, a line for each client count: a line per target would
		// run back from the highest rate of one count to the lowest of the next.
		lines := []int{0}
		if len(wl.Rates) > 0 && len(wl.Clients) > 1 {
			lines = wl.Clients
		}
		for i, t := range a.targets {
			for _, c := range lines {
				s := series{Name: t.Name, Color: color(i), Dots: true}
				if c > 0 {
					s.Name = fmt.Sprintf("%s, %d clients", t.Name, c)
				}
				for _, g := range wl.groups {
					rw, ok := g.rowOf(spec.key)
					if !ok || !rw.vals[i].ok || c > 0 && g.clients != c || len(wl.Rates) > 0 && g.rate == 0 {
						continue
					}
					v := rw.vals[i]
					p := pt{X: g.x(), Y: v.agg, Lo: v.sum.Min, Hi: v.sum.Max,
						Title: fmt.Sprintf("%s, %s: %s%s (%s)", t.Name, g.label(), num(v.agg), rw.m.unit, a.spread(v))}
					s.Points = append(s.Points, p)
				}
				ch.Series = append(ch.Series, s)
			}
		}
		out = append(out, figure{name: spec.name, title: spec.title, svg: ch.svg(),
			caption: fmt.Sprintf("The %s of the valid runs at each %s; whiskers span the runs.", a.aggWord(), wl.xWord())})
	}
	return out
}

// unitHint completes a throughput axis label with its unit of time.
func unitHint(label string) string {
	switch label {
	case "NOPM", "TPM":
		return " (per minute)"
	case "tps", "QPS":
		return " (per second)"
	}
	return ""
}

// spread says how many runs a value aggregates and how they vary.
func (a *analysis) spread(v value) string {
	if v.sum.N < 2 {
		return fmt.Sprintf("%d valid run", v.sum.N)
	}
	s := fmt.Sprintf("%s of %d runs, %s–%s, CV %s", a.aggWord(), v.sum.N, num(v.sum.Min), num(v.sum.Max), pct(v.sum.CV))
	if v.high {
		s += ", high variance"
	}
	return s
}

// seriesCharts are a group's runs second by second, targets on the same axes:
// throughput, then p99 latency. Each target's representative run (the median) is
// drawn in full, its other repetitions faint and the runs that do not count dashed;
// checkpoints of the representative runs are vertical marks and outages shaded.
func (a *analysis) seriesCharts(wl workload, g group) []figure {
	tps := func(p Point) float64 { return p.TPS }
	p99 := func(p Point) float64 { return p.P99 }
	return []figure{
		a.seriesChart(g, seriesName(wl, g), fmt.Sprintf("Throughput over time — %s, %s", wl.Name, g.label()), "transactions per second", tps),
		a.seriesChart(g, seriesP99Name(wl, g), fmt.Sprintf("p99 latency over time — %s, %s", wl.Name, g.label()), "p99 latency (ms)", p99),
	}
}

// seriesChart is one figure of a group's runs over time, get giving its y.
func (a *analysis) seriesChart(g group, name, title, ylabel string, get func(Point) float64) figure {
	ch := lineChart{Name: name, Title: title,
		X: axis{Label: "seconds from the start of the measured window"},
		Y: axis{Label: ylabel, FromZero: true}}
	var faint, dashed, outage bool
	minT := math.Inf(1)
	for i, c := range g.cells {
		ch.Legend = append(ch.Legend, legendItem{Label: a.targets[i].Name, Color: color(i), Kind: "line"})
		for _, run := range c.runs {
			if len(whole(run.Series)) == 0 {
				continue
			}
			main := c.rep != nil && c.rep.ID == run.ID
			faint, dashed, outage = faint || !main, dashed || !counts(run), outage || len(run.Outages) > 0
			minT = min(minT, seriesRun(&ch, run, i, a.targets[i].Name, main, get))
		}
	}
	if minT < 0 {
		ch.Spans = append([]vspan{{X0: minT, X1: 0, Color: "#888888", Title: "warm-up: not measured", Label: "warm-up"}}, ch.Spans...)
	}
	for _, l := range []struct {
		show bool
		item legendItem
	}{
		{faint, legendItem{Label: "other repetitions", Color: "#666666", Kind: "faint"}},
		{dashed, legendItem{Label: "left out", Color: "#666666", Kind: "dashed"}},
		{len(ch.Marks) > 0, legendItem{Label: "checkpoint", Color: "#666666", Kind: "mark"}},
		{outage, legendItem{Label: "outage", Color: "#666666", Kind: "span"}},
	} {
		if l.show {
			ch.Legend = append(ch.Legend, l.item)
		}
	}
	return figure{name: name, title: title, svg: ch.svg()}
}

// seriesRun draws a run of target i (named target) on a chart over time: its
// line, in full when it is the target's main run, dashed when it does not
// count; the main run's checkpoints; its outages. It returns the earliest
// second drawn.
func seriesRun(ch *lineChart, run Run, i int, target string, main bool, get func(Point) float64) float64 {
	s := series{Name: target, Color: color(i), Faint: !main, Dashed: !counts(run), Title: seriesTitle(run, main)}
	minT := math.Inf(1)
	for _, p := range thin(whole(run.Series), maxSeriesPoints) {
		s.Points = append(s.Points, pt{X: p.T, Y: get(p)})
		minT = min(minT, p.T)
	}
	ch.Series = append(ch.Series, s)
	if main {
		for _, cp := range run.Checkpoints {
			ch.Marks = append(ch.Marks, vmark{X: cp, Color: color(i),
				Title: fmt.Sprintf("checkpoint at %s s: %s run %d", num(cp), target, run.ID)})
		}
	}
	for _, f := range run.Faults {
		end := f.T + max(f.ResumedMs, 0)/1000 // to the first commit after it
		ch.Spans = append(ch.Spans, vspan{X0: f.T, X1: end, Color: "#c0392b", Label: f.Kind,
			Title: fmt.Sprintf("%s at %s s, no commits until %s s: %s run %d", f.Kind, num(f.T), num(end), target, run.ID)})
	}
	for _, o := range run.Outages {
		title := fmt.Sprintf("outage %s–%s s: %s run %d", num(o.Start), num(o.End), target, run.ID)
		if o.Cause != "" {
			title += ", " + o.Cause
		}
		ch.Spans = append(ch.Spans, vspan{X0: o.Start, X1: o.End, Color: color(i), Title: title, Label: "outage"})
	}
	return minT
}

func seriesTitle(run Run, main bool) string {
	s := runLabel(run)
	if main {
		s += ", the median run"
	}
	if !counts(run) {
		s += ", left out: " + why(run)
	}
	return s
}

// partial is the length, as a share of a series' usual interval, below which an
// interval is left out of the series. The last interval ends with the window and
// often lasts a few milliseconds, and one may begin just before the window opens:
// the rate of such a sliver counts the few transactions that happened to end in it
// and its p99 rests on a handful of them, so it would draw a plunge and a spike
// that did not happen. It is dropped rather than weighted by its length, because a
// point on a line carries no weight: it would be drawn all the same. Half an
// interval or more still rests on half of a whole one's transactions, and stays.
const partial = 0.5

// whole is the series without its partial intervals. Points of unknown length
// count as whole.
func whole(ps []Point) []Point {
	var lens []float64
	for _, p := range ps {
		if p.Secs > 0 {
			lens = append(lens, p.Secs)
		}
	}
	if len(lens) == 0 {
		return ps
	}
	usual := stats.Median(lens)
	return slices.DeleteFunc(slices.Clone(ps), func(p Point) bool { return p.Secs > 0 && p.Secs < partial*usual })
}

// thin averages a series down to at most n points, in buckets of equal count.
func thin(ps []Point, n int) []Point {
	if len(ps) <= n {
		return ps
	}
	out := make([]Point, 0, n)
	for i := range n {
		lo, hi := i*len(ps)/n, (i+1)*len(ps)/n
		var p Point
		for _, q := range ps[lo:hi] {
			p.T += q.T
			p.TPS += q.TPS
			p.P99 += q.P99
		}
		k := float64(hi - lo)
		p.T, p.TPS, p.P99 = p.T/k, p.TPS/k, p.P99/k
		out = append(out, p)
	}
	return out
}

// quantileLabel is "p99.9" for 99.9 and "max" for 100.
func quantileLabel(q float64) string {
	if q >= 100 {
		return "max"
	}
	return "p" + strconv.FormatFloat(q, 'f', -1, 64)
}

// percentiles of a run: the stored distribution, else the latency summary.
func percentiles(run Run) []Percentile {
	if len(run.Percentiles) > 0 {
		return run.Percentiles
	}
	l := run.Latency
	var out []Percentile
	for _, p := range []Percentile{{50, l.P50}, {90, l.P90}, {99, l.P99}, {99.9, l.P999}, {100, l.Max}} {
		if p.Ms > 0 {
			out = append(out, p)
		}
	}
	return out
}

// latencyChart is the latency distribution of each target's median run, the
// quantile q at 1/(1-q) on a log axis so that p99, p99.9 and p99.99 are equally
// spaced, and the maximum one decade past the last quantile.
func (a *analysis) latencyChart(wl workload, g group) figure {
	name := latencyName(wl, g)
	title := fmt.Sprintf("Latency distribution — %s, %s", wl.Name, g.label())
	maxFinite := 2.0
	for _, c := range g.cells {
		if c.rep == nil {
			continue
		}
		for _, p := range percentiles(*c.rep) {
			if p.Quantile < 100 {
				maxFinite = max(maxFinite, 1/(1-p.Quantile/100))
			}
		}
	}
	maxPos := math.Pow(10, math.Floor(math.Log10(maxFinite)+1e-9)+1)
	xpos := func(q float64) float64 {
		if q >= 100 {
			return maxPos
		}
		return 1 / (1 - q/100)
	}
	ax := axis{Label: "percentile (log scale of 1/(1-q))", Log: true, Min: 1.6, Max: maxPos * 1.3}
	for _, q := range []float64{50, 90, 99, 99.9, 99.99, 99.999, 99.9999} {
		if x := xpos(q); x <= maxFinite*1.001 {
			ax.Ticks = append(ax.Ticks, tick{V: x, Label: quantileLabel(q)})
		}
	}
	ax.Ticks = append(ax.Ticks, tick{V: maxPos, Label: "max"})

	ch := lineChart{Name: name, Title: title, X: ax, Y: axis{Label: "latency (ms)", FromZero: true}}
	lo, hi := math.Inf(1), 0.0
	for i, c := range g.cells {
		s := series{Name: a.targets[i].Name, Color: color(i), Dots: true}
		if c.rep != nil {
			s.Title = seriesTitle(*c.rep, true)
			for _, p := range percentiles(*c.rep) {
				s.Points = append(s.Points, pt{X: xpos(p.Quantile), Y: p.Ms,
					Title: fmt.Sprintf("%s %s: %s ms (run %d)", a.targets[i].Name, quantileLabel(p.Quantile), num(p.Ms), c.rep.ID)})
				if p.Ms > 0 {
					lo, hi = min(lo, p.Ms), max(hi, p.Ms)
				}
			}
		}
		ch.Series = append(ch.Series, s)
	}
	if hi > 0 && hi/lo >= 20 {
		ch.Y = axis{Label: "latency (ms, log scale)", Log: true}
	}
	return figure{name: name, title: title, svg: ch.svg(),
		caption: "Each target's median run; the tail is on the right."}
}

// serverCharts are bars of the server's CPU, IOPS and WAL rate by client count,
// and the wait events of each client count as stacked shares.
func (a *analysis) serverCharts(wl workload) []figure {
	var out []figure
	for _, spec := range []struct{ key, title, ylabel string }{
		{"cpu", "Server CPU", "cores busy"},
		{"iops", "Server IOPS", "reads + writes per second"},
		{"wal", "WAL written", "MB per second"},
	} {
		if wl.metricIndex(spec.key) < 0 {
			continue
		}
		ch := barChart{Name: serverName(spec.key, wl), Title: spec.title + " — " + wl.Name,
			XLabel: "clients", YLabel: spec.ylabel}
		for _, g := range wl.groups {
			ch.Groups = append(ch.Groups, g.label())
		}
		for i, t := range a.targets {
			ch.Series = append(ch.Series, barSeries{Name: t.Name, Color: color(i), Values: groupValues(wl, spec.key, i)})
			ch.Unit = " " + spec.ylabel
		}
		out = append(out, figure{name: ch.Name, title: ch.Title, svg: ch.svg(),
			caption: fmt.Sprintf("The %s over the valid runs, sampled from the server during the measured window.", a.aggWord())})
	}
	classes := waitClasses(wl)
	if len(classes) == 0 {
		return out
	}
	for _, g := range wl.groups {
		out = append(out, a.waitsChart(wl, g, classes))
	}
	return out
}

// groupValues are target i's aggregates of the metric with key, one per group
// of a workload, NaN where it has none.
func groupValues(wl workload, key string, i int) []float64 {
	var out []float64
	for _, g := range wl.groups {
		rw, ok := g.rowOf(key)
		v := math.NaN()
		if ok && rw.vals[i].ok {
			v = rw.vals[i].agg
		}
		out = append(out, v)
	}
	return out
}

// waitsChart is the shares of a group's wait event classes by target, stacked.
func (a *analysis) waitsChart(wl workload, g group, classes []string) figure {
	ch := barChart{Name: waitsName(wl, g), Title: fmt.Sprintf("Wait events — %s, %s", wl.Name, g.label()),
		XLabel: "target", YLabel: "% of active sessions", Unit: "%", Stacked: true, Max: 100}
	for _, t := range a.targets {
		ch.Groups = append(ch.Groups, t.Name)
	}
	shares := make([]map[string]float64, len(g.cells))
	for i, c := range g.cells {
		shares[i] = meanWaits(c.valid, classes)
	}
	for k, cl := range append(slices.Clone(classes), otherWaits) {
		bs := barSeries{Name: cl, Color: waitColor(k, cl)}
		seen := false
		for i := range g.cells {
			v, ok := shares[i][cl]
			if !ok {
				v = math.NaN()
			}
			seen = seen || ok
			bs.Values = append(bs.Values, 100*v)
		}
		if seen {
			ch.Series = append(ch.Series, bs)
		}
	}
	return figure{name: ch.Name, title: ch.Title, svg: ch.svg(),
		caption: "Shares of active sessions by wait event, averaged over the valid runs."}
}

// otherWaits is the stack of the wait events outside the top ones.
const otherWaits = "other"

// topWaits is how many wait events the charts and tables name.
const topWaits = 6

// waitClasses are a workload's most common wait events over all its runs, largest
// first.
func waitClasses(wl workload) []string {
	total := map[string]float64{}
	for _, run := range wl.Runs {
		for _, w := range run.Waits {
			total[w.Class] += w.Share
		}
	}
	classes := make([]string, 0, len(total))
	for c := range total {
		classes = append(classes, c)
	}
	slices.SortFunc(classes, func(x, y string) int {
		if total[x] != total[y] {
			if total[x] > total[y] {
				return -1
			}
			return 1
		}
		if x < y {
			return -1
		}
		return 1
	})
	if len(classes) > topWaits {
		classes = classes[:topWaits]
	}
	return classes
}

// meanWaits averages runs' wait shares over classes, the rest summed as "other";
// nil without runs or waits.
func meanWaits(runs []Run, classes []string) map[string]float64 {
	out := map[string]float64{}
	n := 0
	for _, run := range runs {
		if len(run.Waits) == 0 {
			continue
		}
		n++
		for _, w := range run.Waits {
			if slices.Contains(classes, w.Class) {
				out[w.Class] += w.Share
			} else {
				out[otherWaits] += w.Share
			}
		}
	}
	if n == 0 {
		return nil
	}
	for k := range out {
		out[k] /= float64(n)
	}
	return out
}

func waitColor(k int, class string) string {
	if class == otherWaits {
		return "#BAB0AC"
	}
	return waitPalette[k%len(waitPalette)]
}

// priceChart is the headline metric bought by one unit of money a month, by client
// count: taller is better value. None when prices are missing or in different
// currencies.
func (a *analysis) priceChart(wl workload) (figure, bool) {
	if !a.priced || a.currency == "" {
		return figure{}, false
	}
	head := wl.metrics[0]
	label := fmt.Sprintf("%s per %s/month", head.label, a.sym())
	ch := barChart{Name: priceName(wl), Title: "Price-performance — " + wl.Name, XLabel: "clients", YLabel: label,
		Unit: " " + label}
	for _, g := range wl.groups {
		ch.Groups = append(ch.Groups, g.label())
	}
	for i, t := range a.targets {
		if t.Price == nil {
			continue
		}
		ch.Series = append(ch.Series, barSeries{Name: t.Name, Color: color(i), Values: groupValues(wl, "units_per_price", i)})
	}
	return figure{name: ch.Name, title: ch.Title, svg: ch.svg(),
		caption: fmt.Sprintf("The %s %s divided by the monthly price: taller is more for the money.", a.aggWord(), head.label)}, true
}
