package engine

import (
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
)

// progressPrinter aggregates intervals into one line every period. A line covers
// one phase: the intervals before the phase changes are printed as it does.
type progressPrinter struct {
	w        io.Writer
	period   time.Duration
	start    time.Time
	from, to time.Time // what the next line covers
	phase    driver.Phase
	hist     *hdrhistogram.Histogram
	failed   int64
}

func newProgressPrinter(w io.Writer, period time.Duration) *progressPrinter {
	return &progressPrinter{w: w, period: period, hist: histogram.New()}
}

func (p *progressPrinter) add(iv driver.Interval) {
	if p.period <= 0 {
		return
	}
	if p.start.IsZero() {
		p.start, p.from, p.to = iv.Start, iv.Start, iv.Start
	}
	if p.to.After(p.from) && iv.Phase != p.phase {
		p.print()
	}
	p.hist.Merge(iv.Latency)
	p.failed += iv.Failed
	p.phase, p.to = iv.Phase, iv.End
	if p.to.Sub(p.from) >= p.period-50*time.Millisecond {
		p.print()
	}
}

func (p *progressPrinter) print() {
	s := histogram.Summarize(p.hist)
	secs := p.to.Sub(p.from).Seconds()
	fmt.Fprintf(p.w, "progress: %.1f s, %.1f tps, lat %.3f ms avg, %.3f ms p99, %d failed [%s]\n",
		p.to.Sub(p.start).Seconds(), float64(s.Count)/secs, s.Avg, s.P99, p.failed, p.phase)
	p.hist.Reset()
	p.failed = 0
	p.from = p.to
}

// flush prints what is left once the run ended: the last line of the warm-up or
// the window, shorter than the period; the tail after the window is not shown.
func (p *progressPrinter) flush() {
	if p.period > 0 && p.to.After(p.from) && p.phase != driver.After {
		p.print()
	}
}
