package metrics

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkScrape is one scrape's work for a run of one script whose
// transactions took from 100 µs to 20 ms: what a scrape costs the client.
func BenchmarkScrape(b *testing.B) {
	s := &Server{}
	r := s.Run(RunLabels{Target: "here", Workload: "tpcb", Clients: 8}, []string{"select-only"})
	h := histogram.New()
	for v := int64(100); v < 20000; v += 3 {
		_ = h.RecordValues(v, 7)
	}
	iv := driver.Interval{Start: time.Now(), End: time.Now().Add(time.Second), ByScript: []*hdrhistogram.Histogram{histogram.New(), h, histogram.New()}, Totals: make([]driver.Totals, 3)}
	ch := make(chan prometheus.Metric, 1000)
	for b.Loop() {
		r.Interval(iv) // a new count, so the buckets are computed again
		s.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
}
