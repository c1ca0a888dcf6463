package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/prometheus/client_golang/prometheus"
)

// RunLabels tell one run's figures from another's: the target's name (a
// study's, or host:port/database, never its DSN), the workload, the clients of
// the whole run and the shard ("" when not sharded, else as 2/4).
type RunLabels struct {
	Target, Workload string
	Clients          int
	Shard            string
}

// Run is one run's figures, fed by its intervals and the server's samples.
type Run struct {
	labels  []string
	scripts []string

	mu     sync.Mutex
	series []*series // by phase and script, as driver.Interval.ByScript
	errors []driver.ErrorCount
	last   driver.Interval // without its histograms
	active bool
	// The server's counters summed over its samples, and its gauges as last sampled.
	server map[string]float64
	gauges map[string]float64
	waits  map[string]float64
}

// series is one phase and script's latencies and counts since the run began.
type series struct {
	hist   *hdrhistogram.Histogram // nil until a transaction ends in it
	totals driver.Totals
	cache  histogramValue // hist's buckets, computed for the count it had
}

// Run starts the figures of a run of the given scripts (driver.Script.Name, in
// their order). A nil Server gives a nil Run, whose methods do nothing.
func (s *Server) Run(l RunLabels, scripts []string) *Run {
	if s == nil {
		return nil
	}
	r := &Run{labels: []string{l.Target, l.Workload, strconv.Itoa(l.Clients), l.Shard}, scripts: scripts,
		series: make([]*series, 3*len(scripts)), active: true,
		server: map[string]float64{}, gauges: map[string]float64{}, waits: map[string]float64{}}
	for i := range r.series {
		r.series[i] = &series{}
	}
	s.add(r)
	return r
}

// Interval adds an interval the driver measured (driver.Config.OnInterval).
func (r *Run) Interval(iv driver.Interval) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, h := range iv.ByScript {
		if i >= len(r.series) || h.TotalCount() == 0 {
			continue
		}
		sr := r.series[i]
		if sr.hist == nil {
			sr.hist = histogram.New()
		}
		sr.hist.Merge(h)
	}
	for i, t := range iv.Totals {
		if i < len(r.series) {
			r.series[i].totals = t
		}
	}
	r.errors = iv.Errors
	iv.ByScript, iv.Totals, iv.Errors = nil, nil, nil
	connectErrors := r.last.ConnectErrors + iv.ConnectErrors
	skipped, late, seq := r.last.Skipped+iv.Skipped, r.last.Late+iv.Late, iv.Seq
	r.last = iv
	// Kept summed since the start; the rest is the interval's own.
	r.last.ConnectErrors, r.last.Skipped, r.last.Late, r.last.Seq = connectErrors, skipped, late, seq+1
}

// Sample adds a sample of the server (sampler.Config.OnSample).
func (r *Run) Sample(sm sampler.Sample) {
	if r == nil {
		return
	}
	secs := sm.End.Sub(sm.Start).Seconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, v := range sm.Values {
		switch {
		case descServerCounters[name] != nil && serverRates[name]:
			r.server[name] += v * secs
		case descServerCounters[name] != nil:
			r.server[name] += v
		case descServerGauges[name] != nil:
			r.gauges[name] = v
		}
	}
	for k := range r.waits {
		r.waits[k] = 0 // an event no longer seen is no longer waited on
	}
	for k, v := range sm.Waits {
		r.waits[k] = v
	}
}

// End marks the run ended; its figures stay as they are until the process exits.
func (r *Run) End() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.active = false
	r.mu.Unlock()
}

var phaseNames = [...]string{"warmup", "measure", "after"}

func (r *Run) collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.labels
	counter := func(d *prometheus.Desc, v float64, more ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append(l[:len(l):len(l)], more...)...)
	}
	gauge := func(d *prometheus.Desc, v float64, more ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(l[:len(l):len(l)], more...)...)
	}
	for i, sr := range r.series {
		script, phase := r.scripts[i%len(r.scripts)], phaseNames[i/len(r.scripts)]
		var ended int64
		if sr.hist != nil {
			ended = sr.hist.TotalCount()
			ch <- sr.histogram(append(l[:len(l):len(l)], script, phase))
		}
		counter(descTransactions, float64(ended-sr.totals.RolledBack), script, phase)
		counter(descRolledBack, float64(sr.totals.RolledBack), script, phase)
		counter(descFailed, float64(sr.totals.Failed), script, phase)
		counter(descRetried, float64(sr.totals.Retried), script, phase)
		counter(descRetries, float64(sr.totals.Retries), script, phase)
	}
	for _, e := range r.errors {
		counter(descErrors, float64(e.Count), e.Script, e.SQLState, strconv.FormatBool(e.Retried))
	}
	iv := &r.last
	var tps float64
	if secs := iv.End.Sub(iv.Start).Seconds(); secs > 0 {
		tps = float64(iv.Committed) / secs
	}
	gauge(descThroughput, tps)
	counter(descIntervals, float64(iv.Seq))
	gauge(descActive, map[bool]float64{true: 1}[r.active])
	gauge(descDown, float64(iv.Down))
	counter(descReconnects, float64(iv.Reconnects))
	counter(descConnFailures, float64(iv.ConnectErrors))
	counter(descOutage, iv.OutageSeconds)
	gauge(descLag, iv.Lag.Seconds())
	counter(descSkipped, float64(iv.Skipped))
	counter(descLate, float64(iv.Late))
	for name, v := range r.server {
		counter(descServerCounters[name], v)
	}
	for name, v := range r.gauges {
		gauge(descServerGauges[name], v)
	}
	for k, v := range r.waits {
		gauge(descWaits, v, k)
	}
}

// histogram is the series' latencies as a Prometheus histogram, its buckets
// computed again only when transactions were added since the last scrape.
func (sr *series) histogram(labels []string) prometheus.Metric {
	if n := sr.hist.TotalCount(); sr.cache.count != uint64(n) {
		sr.cache = newHistogramValue(sr.hist)
	}
	return &histogramMetric{desc: descLatency, labels: prometheus.MakeLabelPairs(descLatency, labels), v: sr.cache}
}

// unit is the histograms' unit (internal/histogram records microseconds).
const unit = time.Microsecond
