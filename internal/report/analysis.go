package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/stats"
	workloads "github.com/pgbakeoff/pgbakeoff/internal/workload"
)

// DefaultNoise is the relative difference below which targets are within noise:
// what compare, reports and studies use unless told otherwise.
const DefaultNoise = 0.05

// analysis is a Report reduced to what every renderer shows: for each workload and
// client count, one table of metrics by target. Renderers differ only in layout.
type analysis struct {
	r         *Report
	noise     float64
	aggregate string // median, mean or best
	targets   []Target
	base      int // index of the baseline in targets
	workloads []workload
	// currency is the one currency of all priced targets; "" when there are none or
	// they differ, and then prices are shown but not compared.
	currency string
	priced   bool
}

// workload is one Workload with its tables.
type workload struct {
	*Workload
	slug    string // for chart names and anchors
	metrics []metric
	groups  []group // one per client count, ascending
}

// group is one workload at one client count, and for open-loop runs one rate:
// one table.
type group struct {
	clients int
	rate    int    // 0 for closed-loop runs
	ceiling bool   // the closed-loop runs that measured find-max searches' ceilings
	cells   []cell // one per target, in target order
	rows    []row
}

// cell is one target's runs in a group.
type cell struct {
	runs     []Run // all, by repetition
	valid    []Run // completed and not invalid: the runs that count
	excluded []Run // the others, listed with their reasons
	rep      *Run  // the valid run with the median headline figure, nil if none
}

// metric is one figure of a run that a table shows as a row.
type metric struct {
	key      string // CSV-ish name, also used in chart names
	label    string // row label: "NOPM", "p99 ms"
	unit     string // after values in hover text: " NOPM", " ms"
	higher   bool   // higher is better
	headline bool
	get      func(Run) (float64, bool)
}

// row is one metric across the targets of a group.
type row struct {
	m      metric
	kind   rowKind
	vals   []value
	ratios []float64 // target against baseline; NaN where there is none
	// verdicts is set on the headline row only, nil at the baseline.
	verdicts []*stats.Verdict
}

type rowKind int

const (
	measured rowKind = iota // a figure of the runs, aggregated
	monthly                 // the target's price
	perUnit                 // price per unit of the headline metric
	unitsPer                // headline metric per unit of price
	runCount                // valid runs of all runs
)

// value is one target's figure in a row.
type value struct {
	ok   bool
	agg  float64
	sum  stats.Summary // N is 0 for figures that are not aggregated runs
	vals []float64     // the valid runs' figures, in run order
	ids  []int64
	high bool // high variance
	text string
}

func newAnalysis(r *Report) *analysis {
	a := &analysis{r: r, noise: r.Noise, aggregate: r.Aggregate}
	if a.noise <= 0 {
		a.noise = DefaultNoise
	}
	if a.aggregate == "" {
		a.aggregate = stats.AggregateMedian
	}
	a.targets = slices.Clone(r.Targets)
	known := map[string]bool{}
	for _, t := range a.targets {
		known[t.Name] = true
	}
	// Runs of targets the report does not list still show, after the listed ones.
	for _, w := range r.Workloads {
		for _, run := range w.Runs {
			if !known[run.Target] {
				known[run.Target] = true
				a.targets = append(a.targets, Target{Name: run.Target})
			}
		}
	}
	for i, t := range a.targets {
		if t.Name == r.Baseline {
			a.base = i
		}
	}
	currencies := map[string]bool{}
	for _, t := range a.targets {
		if t.Price != nil {
			a.priced = true
			currencies[t.Price.Currency] = true
		}
	}
	if len(currencies) == 1 {
		for c := range currencies {
			a.currency = c
		}
	}
	slugs := map[string]bool{}
	for i := range r.Workloads {
		w := &r.Workloads[i]
		s := slug(w.Name)
		for n := 2; slugs[s]; n++ {
			s = fmt.Sprintf("%s-%d", slug(w.Name), n)
		}
		slugs[s] = true
		a.workloads = append(a.workloads, a.analyse(w, s))
	}
	return a
}

// compared reports whether there is anything to compare: two targets or more.
func (a *analysis) compared() bool { return len(a.targets) > 1 }

func (a *analysis) baseName() string {
	if len(a.targets) == 0 {
		return ""
	}
	return a.targets[a.base].Name
}

// aggWord is how repetitions are summarised, for legends: "median".
func (a *analysis) aggWord() string { return a.aggregate }

func (a *analysis) analyse(w *Workload, s string) workload {
	out := workload{Workload: w, slug: s, metrics: metricsOf(w)}
	clients := slices.Clone(w.Clients)
	for _, run := range w.Runs {
		if !slices.Contains(clients, run.Clients) {
			clients = append(clients, run.Clients)
		}
	}
	slices.Sort(clients)
	clients = slices.Compact(clients)
	rates := []int{0}
	if len(w.Rates) > 0 {
		rates = w.Rates
		if slices.ContainsFunc(w.Runs, func(r Run) bool { return r.Rate == 0 }) {
			rates = append([]int{0}, w.Rates...) // closed-loop runs beside the rates
		}
	}
	for _, c := range clients {
		for _, rate := range rates {
			g := group{clients: c, rate: rate, ceiling: w.Search && rate == 0}
			for _, t := range a.targets {
				g.cells = append(g.cells, newCell(w, t.Name, c, rate, out.metrics[0]))
			}
			if (rate > 0 || w.Search) && !slices.ContainsFunc(g.cells, func(c cell) bool { return len(c.runs) > 0 }) {
				continue // a rate other client counts ran at, or searches with no closed-loop run
			}
			g.rows = a.rows(out.metrics, g.cells)
			out.groups = append(out.groups, g)
		}
	}
	return out
}

// xLabel names the "vs" charts' axis: clients, or the rate of an open-loop workload.
func (wl workload) xLabel() string {
	if len(wl.Rates) > 0 {
		return "rate (tx/s)"
	}
	return "clients"
}

// xWord is what each point of those charts is: a client count or a rate.
func (wl workload) xWord() string {
	if len(wl.Rates) > 0 {
		return "rate"
	}
	return "client count"
}

// label names the group for headings and hover text: "8 clients", or "8 clients
// at 5000 tx/s" for open-loop runs.
func (g group) label() string {
	switch {
	case g.rate > 0:
		return fmt.Sprintf("%d clients at %d tx/s", g.clients, g.rate)
	case g.ceiling:
		return fmt.Sprintf("%d clients, closed loop (the searches' ceilings)", g.clients)
	}
	return fmt.Sprintf("%d clients", g.clients)
}

// clientsText is the group's client count, with its rate for open-loop runs.
func (g group) clientsText() string {
	if g.rate > 0 {
		return fmt.Sprintf("%d at %d tx/s", g.clients, g.rate)
	}
	return strconv.Itoa(g.clients)
}

// id is the group's part of chart names and anchors: "c8", "c8-rate5000".
func (g group) id() string {
	if g.rate > 0 {
		return fmt.Sprintf("c%d-rate%d", g.clients, g.rate)
	}
	return fmt.Sprintf("c%d", g.clients)
}

// short is the group in a table's first column: "8", or "8 @ 5000" under the
// header groupHeader gives.
func (g group) short() string {
	if g.rate > 0 {
		return fmt.Sprintf("%d @ %d", g.clients, g.rate)
	}
	return strconv.Itoa(g.clients)
}

// groupHeader heads the column of short.
func (wl workload) groupHeader() string {
	if len(wl.Rates) > 0 {
		return "clients @ tx/s"
	}
	return "clients"
}

// x is where the group sits on the "vs clients" charts' axis: its rate for a
// workload run open-loop, else its client count.
func (g group) x() float64 {
	if g.rate > 0 {
		return float64(g.rate)
	}
	return float64(g.clients)
}

func newCell(w *Workload, target string, clients, rate int, head metric) cell {
	var c cell
	for _, run := range w.Runs {
		if run.Target != target || run.Clients != clients || run.Rate != rate {
			continue
		}
		c.runs = append(c.runs, run)
	}
	slices.SortStableFunc(c.runs, func(x, y Run) int {
		if x.Repeat != y.Repeat {
			return x.Repeat - y.Repeat
		}
		return int(x.ID - y.ID)
	})
	for _, run := range c.runs {
		if counts(run) {
			c.valid = append(c.valid, run)
		} else {
			c.excluded = append(c.excluded, run)
		}
	}
	if len(c.valid) > 0 {
		// The representative run is the one whose headline figure is the median
		// (the lower middle one of an even count).
		byMetric := slices.Clone(c.valid)
		slices.SortStableFunc(byMetric, func(x, y Run) int {
			vx, _ := head.get(x)
			vy, _ := head.get(y)
			switch {
			case vx < vy:
				return -1
			case vx > vy:
				return 1
			}
			return 0
		})
		rep := byMetric[(len(byMetric)-1)/2]
		c.rep = &rep
	}
	return c
}

// counts reports whether a run enters aggregates and verdicts.
func counts(run Run) bool { return run.Status == "completed" && !run.Invalid }

// why says why a run does not count.
func why(run Run) string {
	var reasons []string
	if run.Status != "completed" {
		reasons = append(reasons, "status "+run.Status)
	}
	for _, fl := range run.Flags {
		if fl.Invalid {
			reasons = append(reasons, flagText(fl))
		}
	}
	if run.Invalid && len(reasons) == 0 {
		reasons = append(reasons, "marked invalid")
	}
	return strings.Join(reasons, "; ")
}

func flagText(fl Flag) string {
	if fl.Reason == "" {
		return fl.Name
	}
	return fl.Name + ": " + fl.Reason
}

// metricsOf lists the rows a workload's tables show, the headline first.
func metricsOf(w *Workload) []metric {
	name := w.Metric
	if name == "" {
		name = "tps"
	}
	ms := []metric{{key: "metric", label: name, unit: " " + name, higher: true, headline: true,
		get: func(r Run) (float64, bool) { return r.Metric, true }}}
	anyRun := func(pred func(Run) bool) bool { return slices.ContainsFunc(w.Runs, pred) }
	rates := workloads.MeasuresOf(w.Kind).Rates
	if slices.Contains(rates, "TPM") || anyRun(func(r Run) bool { return r.TPM > 0 }) {
		ms = append(ms, metric{key: "tpm", label: "TPM", unit: " TPM", higher: true,
			get: func(r Run) (float64, bool) { return r.TPM, r.TPM > 0 }})
	}
	if slices.Contains(rates, "QPS") || anyRun(func(r Run) bool { return r.QPS > 0 }) {
		ms = append(ms, metric{key: "qps", label: "QPS", unit: " QPS", higher: true,
			get: func(r Run) (float64, bool) { return r.QPS, r.QPS > 0 }})
	}
	ms = append(ms,
		metric{key: "p50", label: "p50 ms", unit: " ms", get: func(r Run) (float64, bool) { return r.Latency.P50, r.Latency.P50 > 0 }},
		metric{key: "p95", label: "p95 ms", unit: " ms", get: func(r Run) (float64, bool) { return r.Latency.P95, r.Latency.P95 > 0 }},
		metric{key: "p99", label: "p99 ms", unit: " ms", get: func(r Run) (float64, bool) { return r.Latency.P99, r.Latency.P99 > 0 }},
	)
	if anyRun(func(r Run) bool { return r.Sampled.CPU }) {
		ms = append(ms, metric{key: "cpu", label: "server CPU", unit: " cores",
			get: func(r Run) (float64, bool) { return r.ServerCPU, r.Sampled.CPU }})
	}
	if anyRun(func(r Run) bool { return r.Sampled.IOPS }) {
		ms = append(ms, metric{key: "iops", label: "IOPS", unit: " IOPS",
			get: func(r Run) (float64, bool) { return r.IOPS, r.Sampled.IOPS }})
	}
	if anyRun(func(r Run) bool { return r.Sampled.WAL }) {
		ms = append(ms, metric{key: "wal", label: "WAL MB/s", unit: " MB/s",
			get: func(r Run) (float64, bool) { return r.WALMBps, r.Sampled.WAL }})
	}
	return ms
}

// stat aggregates one metric over a cell's valid runs.
func (a *analysis) stat(m metric, c cell) value {
	var v value
	for _, run := range c.valid {
		if x, ok := m.get(run); ok && !math.IsNaN(x) {
			v.vals = append(v.vals, x)
			v.ids = append(v.ids, run.ID)
		}
	}
	if len(v.vals) == 0 {
		return v
	}
	v.ok = true
	v.sum = stats.Summarize(v.vals)
	v.agg = stats.Aggregate(a.aggregate, v.vals, m.higher)
	v.high = v.sum.N >= 2 && stats.HighVariance(v.sum, a.noise)
	return v
}

func (a *analysis) rows(ms []metric, cells []cell) []row {
	var rows []row
	var head row
	for _, m := range ms {
		rw := row{m: m, kind: measured}
		for _, c := range cells {
			rw.vals = append(rw.vals, a.stat(m, c))
		}
		rw.ratios = a.ratios(rw.vals, nil)
		if m.headline && len(cells) > 0 {
			rw.verdicts = make([]*stats.Verdict, len(cells))
			base := rw.vals[a.base]
			for i, v := range rw.vals {
				if i == a.base {
					continue
				}
				vd := stats.Compare(base.vals, v.vals, true, a.noise)
				rw.verdicts[i] = &vd
			}
			head = rw
		}
		if !m.headline && !slices.ContainsFunc(rw.vals, func(v value) bool { return v.ok }) {
			continue // no target has this figure here
		}
		rows = append(rows, rw)
	}
	if a.priced {
		rows = append(rows, a.priceRows(ms[0].label, head)...)
	}
	cnt := row{m: metric{key: "runs", label: "valid runs"}, kind: runCount}
	for _, c := range cells {
		cnt.vals = append(cnt.vals, value{ok: len(c.runs) > 0, agg: float64(len(c.valid)),
			text: fmt.Sprintf("%d/%d", len(c.valid), len(c.runs))})
	}
	cnt.ratios = a.ratios(nil, nil) // all NaN: counts are not compared
	rows = append(rows, cnt)
	return rows
}

// priceRows are a group's rows of prices: each target's monthly price, that
// price per unit of the headline figure (head, named name), and its inverse.
func (a *analysis) priceRows(name string, head row) []row {
	mon := row{m: metric{key: "price", label: a.sym() + "/month", higher: false}, kind: monthly}
	per := row{m: metric{key: "price_per_unit", label: a.sym() + "/mo per " + name}, kind: perUnit}
	units := row{m: metric{key: "units_per_price", label: name + " per " + a.sym() + "/mo", higher: true}, kind: unitsPer}
	for i, h := range head.vals { // one per target
		p := a.targets[i].Price
		var vm, vp, vu value
		if p != nil && p.Monthly > 0 {
			vm = value{ok: true, agg: p.Monthly}
			if h.ok && h.agg > 0 {
				vp = value{ok: true, agg: p.Monthly / h.agg}
				vu = value{ok: true, agg: h.agg / p.Monthly}
			}
		}
		mon.vals = append(mon.vals, vm)
		per.vals = append(per.vals, vp)
		units.vals = append(units.vals, vu)
	}
	same := func(i int) bool {
		pi, pb := a.targets[i].Price, a.targets[a.base].Price
		return pi != nil && pb != nil && pi.Currency == pb.Currency
	}
	mon.ratios = a.ratios(mon.vals, same)
	per.ratios = a.ratios(per.vals, same)
	units.ratios = a.ratios(units.vals, same)
	return []row{mon, per, units}
}

// priceNotes say, target by target, why a price to be looked up is missing.
func (a *analysis) priceNotes() []string {
	var notes []string
	for _, t := range a.targets {
		if t.Price == nil && t.PriceNote != "" {
			notes = append(notes, t.Name+": "+t.PriceNote)
		}
	}
	return notes
}

// ratios divides each value by the baseline's; comparable, when given, says which
// targets may be compared at all.
func (a *analysis) ratios(vals []value, comparable func(int) bool) []float64 {
	out := make([]float64, len(a.targets))
	for i := range out {
		out[i] = math.NaN()
		if i == a.base || i >= len(vals) || a.base >= len(vals) {
			continue
		}
		b, v := vals[a.base], vals[i]
		if !b.ok || !v.ok || b.agg == 0 || (comparable != nil && !comparable(i)) {
			continue
		}
		out[i] = v.agg / b.agg
	}
	return out
}

// sym is the currency of price rows: "$" for US dollars, else the ISO code; "price"
// when the targets' currencies differ.
func (a *analysis) sym() string {
	if a.currency == "" {
		return "price"
	}
	return currencySym(a.currency)
}

func currencySym(c string) string {
	switch c {
	case "USD":
		return "$"
	case "EUR":
		return "€"
	case "GBP":
		return "£"
	}
	return c
}

// slug makes a name safe for file names and anchors: "TPC-C 100w" is "tpc-c-100w".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		out = "workload"
	}
	return out
}
