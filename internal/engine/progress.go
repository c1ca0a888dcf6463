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
	// An open-loop run's lines add the schedule lag and the skipped transactions.
	open    bool
	skipped int64
	lagSum  time.Duration // lags weighted by the transactions of their interval
	lagN    int64
}

func newProgressPrinter(w io.Writer, period time.Duration, open bool) *progressPrinter {
	return &progressPrinter{w: w, period: period, hist: histogram.New(), open: open}
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
	p.skipped += iv.Skipped
	if iv.Lag > 0 {
		p.lagSum += iv.Lag * time.Duration(iv.Latency.TotalCount())
		p.lagN += iv.Latency.TotalCount()
	}
	p.phase, p.to = iv.Phase, iv.End
	if p.to.Sub(p.from) >= p.period-50*time.Millisecond {
		p.print()
	}
}

func (p *progressPrinter) print() {
	s := histogram.Summarize(p.hist)
	secs := p.to.Sub(p.from).Seconds()
	var open string
	if p.open {
		var lag float64
		if p.lagN > 0 {
			lag = float64(p.lagSum) / float64(p.lagN) / float64(time.Millisecond)
		}
		open = fmt.Sprintf(", lag %.3f ms avg, %d skipped", lag, p.skipped)
	}
	fmt.Fprintf(p.w, "progress: %.1f s, %.1f tps, lat %.3f ms avg, %.3f ms p99, %d failed%s [%s]\n",
		p.to.Sub(p.start).Seconds(), float64(s.Count)/secs, s.Avg, s.P99, p.failed, open, p.phase)
	p.hist.Reset()
	p.failed, p.skipped, p.lagSum, p.lagN = 0, 0, 0, 0
	p.from = p.to
}

// flush prints what is left once the run ended: the last line of the warm-up or
// the window, shorter than the period; the tail after the window is not shown.
func (p *progressPrinter) flush() {
	if p.period > 0 && p.to.After(p.from) && p.phase != driver.After {
		p.print()
	}
}
