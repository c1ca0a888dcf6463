// Package histogram records latencies per worker and merges them on a tick, so the
// hot path never shares a histogram between goroutines (hdrhistogram-go is not safe
// for concurrent use).
//
//	reg := histogram.NewRegistry([]string{"select-only"})
//	w := reg.Worker()             // one per client goroutine
//	w.Record(0, 1250*time.Microsecond)
//	iv := reg.Tick()              // once per interval: merged interval histograms
package histogram

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Resolution and range: microseconds, 3 significant digits, up to one hour.
const (
	lowest  = 1
	highest = int64(time.Hour / time.Microsecond)
	sigfig  = 3
)

// New returns an empty latency histogram in microseconds.
func New() *hdrhistogram.Histogram { return hdrhistogram.New(lowest, highest, sigfig) }

// Registry owns the workers' histograms for a set of named series (transaction types).
type Registry struct {
	names   []string
	mu      sync.Mutex
	workers []*Worker
}

// NewRegistry prepares histograms for the named series.
func NewRegistry(names []string) *Registry { return &Registry{names: names} }

// Names are the series, in index order.
func (r *Registry) Names() []string { return r.names }

// Worker returns a new recorder for one goroutine.
func (r *Registry) Worker() *Worker {
	w := &Worker{hists: make([]*hdrhistogram.Histogram, len(r.names))}
	for i := range w.hists {
		w.hists[i] = New()
	}
	r.mu.Lock()
	r.workers = append(r.workers, w)
	r.mu.Unlock()
	return w
}

// Tick takes every worker's histograms since the last tick and returns them merged,
// one per series. Workers keep recording into fresh histograms.
func (r *Registry) Tick() []*hdrhistogram.Histogram {
	merged := make([]*hdrhistogram.Histogram, len(r.names))
	for i := range merged {
		merged[i] = New()
	}
	r.mu.Lock()
	workers := r.workers
	r.mu.Unlock()
	for _, w := range workers {
		w.mu.Lock()
		old := w.hists
		w.hists = w.spare
		w.spare = nil
		if w.hists == nil {
			w.hists = make([]*hdrhistogram.Histogram, len(r.names))
			for i := range w.hists {
				w.hists[i] = New()
			}
		}
		w.mu.Unlock()
		for i, h := range old {
			merged[i].Merge(h)
			h.Reset()
		}
		w.mu.Lock()
		w.spare = old
		w.mu.Unlock()
	}
	return merged
}

// Worker records for one goroutine. Record is cheap: an uncontended lock and an
// array increment.
type Worker struct {
	mu    sync.Mutex
	hists []*hdrhistogram.Histogram
	spare []*hdrhistogram.Histogram
}

// Record adds one latency to series i.
func (w *Worker) Record(i int, d time.Duration) {
	us := d.Microseconds()
	if us < lowest {
		us = lowest
	} else if us > highest {
		us = highest
	}
	w.mu.Lock()
	_ = w.hists[i].RecordValue(us)
	w.mu.Unlock()
}

// Summary is what reports show of a latency distribution, in milliseconds.
type Summary struct {
	Count  int64   `json:"count"`
	Avg    float64 `json:"avg"`
	Stddev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Max    float64 `json:"max"`
}

// Summarize reads the summary of h (microsecond values) in milliseconds.
func Summarize(h *hdrhistogram.Histogram) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Summary{
		Count:  h.TotalCount(),
		Avg:    h.Mean() / 1000,
		Stddev: h.StdDev() / 1000,
		P50:    ms(h.ValueAtQuantile(50)),
		P90:    ms(h.ValueAtQuantile(90)),
		P95:    ms(h.ValueAtQuantile(95)),
		P99:    ms(h.ValueAtQuantile(99)),
		P999:   ms(h.ValueAtQuantile(99.9)),
		Max:    ms(h.Max()),
	}
}

// Encode serializes h compactly for the results store; Decode reverses it.
func Encode(h *hdrhistogram.Histogram) ([]byte, error) {
	return h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
}

// Decode reads a histogram written by Encode.
func Decode(b []byte) (*hdrhistogram.Histogram, error) { return hdrhistogram.Decode(b) }
