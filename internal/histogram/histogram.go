// Package histogram records latencies per worker and merges them on a tick, so the
// hot path never shares a histogram between goroutines (hdrhistogram-go is not safe
// for concurrent use).
//
//	reg := histogram.NewRegistry([]string{"select-only"})
//	w := reg.Worker()             // one per client goroutine
//	w.Record(0, 1250*time.Microsecond)
//	iv := reg.Tick()              // once per interval: merged interval histograms, reused by the next Tick
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

// Registry owns the workers' recordings for a set of named series (transaction types).
//
// A worker does not own histograms: at 3 significant digits over an hour's range an HDR
// histogram is about 190 KB, and a thousand clients times phases times scripts times
// two (one recording, one being merged) came to over a gigabyte. A worker appends raw
// latencies to a buffer instead, and Tick records them into one histogram per series.
// That costs the same per transaction and the memory follows the transaction rate, not
// the client count.
type Registry struct {
	names   []string
	mu      sync.Mutex
	workers []*Worker
	// merged are Tick's histograms, emptied and reused by each Tick: new ones, at
	// about 190 KB each, were a large share of what a run allocated, and each
	// garbage collection stops every client.
	merged []*hdrhistogram.Histogram
}

// NewRegistry prepares histograms for the named series.
func NewRegistry(names []string) *Registry { return &Registry{names: names} }

// Names are the series, in index order.
func (r *Registry) Names() []string { return r.names }

// Worker returns a new recorder for one goroutine.
func (r *Registry) Worker() *Worker {
	w := &Worker{}
	r.mu.Lock()
	r.workers = append(r.workers, w)
	r.mu.Unlock()
	return w
}

// Tick takes every worker's latencies since the last tick and returns them as one
// histogram per series. They are valid until the next Tick, which empties and refills
// them: merge them elsewhere to keep them. One goroutine ticks (Run's), Workers record
// from any.
func (r *Registry) Tick() []*hdrhistogram.Histogram {
	if r.merged == nil {
		r.merged = make([]*hdrhistogram.Histogram, len(r.names))
		for i := range r.merged {
			r.merged[i] = New()
		}
	}
	merged := r.merged
	for _, h := range merged {
		h.Reset()
	}
	r.mu.Lock()
	workers := r.workers
	r.mu.Unlock()
	for _, w := range workers {
		w.mu.Lock()
		taken := w.buf
		w.buf = w.spare[:0]
		w.mu.Unlock()
		for _, v := range taken {
			_ = merged[v>>seriesShift].RecordValue(int64(v & valueMask))
		}
		w.mu.Lock()
		// Keep the buffer for next time, but not one grown by a burst long past:
		// a thousand clients that each kept the room of their busiest second
		// (a reconnection storm's) would hold it for the rest of the run.
		if cap(taken) > 2*max(len(taken), 16) {
			taken = nil
		}
		w.spare = taken
		w.mu.Unlock()
	}
	return merged
}

// A recorded value packs the series index above the latency in microseconds.
const (
	seriesShift = 40
	valueMask   = 1<<seriesShift - 1
)

// Worker records for one goroutine. Record is cheap: an uncontended lock and an append
// to a buffer that, once grown, is reused.
type Worker struct {
	mu    sync.Mutex
	buf   []uint64
	spare []uint64
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
	w.buf = append(w.buf, uint64(i)<<seriesShift|uint64(us))
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
