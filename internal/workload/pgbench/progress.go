package pgbench

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
)

// progress prints pgbench's progress lines (-P) from the transactions as they end:
// every period, the transactions a second, the mean latency and its standard
// deviation, the failures, and with a rate the mean schedule lag (and the skipped
// transactions under a latency limit), with retries the retried transactions, in
// pgbench's words so that what reads pgbench's progress reads these. Its clock
// starts with the first transaction.
type progress struct {
	w         io.Writer
	period    time.Duration
	timestamp bool // the time of day (Unix seconds) instead of the time since the start
	rate      bool // an open-loop run: the lag, and the skipped under a latency limit
	limit     bool
	retries   bool // transactions may be retried: their counts

	once, closeOnce sync.Once
	stop            chan struct{}
	done            chan struct{}

	mu sync.Mutex
	iv interval // since the last line
}

// interval is what ended between two progress lines; latencies and lags in
// microseconds, as pgbench sums them.
type interval struct {
	n, failed, skipped, retried, retries int64
	sum, sum2, lag                       float64
}

func newProgress(w io.Writer, period time.Duration, timestamp, rate, limit, retries bool) *progress {
	return &progress{w: w, period: period, timestamp: timestamp, rate: rate, limit: limit, retries: retries,
		stop: make(chan struct{}), done: make(chan struct{})}
}

// add counts a transaction that ended; the first starts the clock.
func (p *progress) add(ctx context.Context, ev driver.TxEvent) {
	p.once.Do(func() { go p.run(ctx, ev.Start) })
	p.mu.Lock()
	defer p.mu.Unlock()
	iv := &p.iv
	switch {
	case ev.Skipped:
		iv.skipped++
		return
	case ev.Failed:
		iv.failed++
	default:
		us := float64(ev.End.Sub(ev.Start)) / float64(time.Microsecond)
		iv.n++
		iv.sum += us
		iv.sum2 += us * us
		iv.lag += float64(ev.Lag) / float64(time.Microsecond)
	}
	if ev.Tries > 1 {
		iv.retried++
		iv.retries += int64(ev.Tries - 1)
	}
}

// run prints a line at every period from start until the run ends.
func (p *progress) run(ctx context.Context, start time.Time) {
	defer close(p.done)
	last := start
	for next := start.Add(p.period); ; next = next.Add(p.period) {
		t := time.NewTimer(time.Until(next))
		select {
		case <-t.C:
		case <-p.stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
		now := time.Now()
		p.mu.Lock()
		iv := p.iv
		p.iv = interval{}
		p.mu.Unlock()
		p.line(iv, now.Sub(start), now, now.Sub(last))
		last = now
	}
}

// line prints one interval of span, elapsed since the start, as pgbench's
// printProgressReport words it.
func (p *progress) line(iv interval, elapsed time.Duration, now time.Time, span time.Duration) {
	var lat, stddev, lag float64
	if iv.n > 0 {
		n := float64(iv.n)
		lat = iv.sum / n
		stddev = math.Sqrt(max(0, iv.sum2/n-lat*lat)) / 1000
		lat /= 1000
		lag = iv.lag / n / 1000
	}
	at := fmt.Sprintf("%.1f s", elapsed.Seconds())
	if p.timestamp {
		at = fmt.Sprintf("%.3f s", float64(now.UnixMicro())/1e6)
	}
	line := fmt.Sprintf("progress: %s, %.1f tps, lat %.3f ms stddev %.3f, %d failed", at, float64(iv.n)/span.Seconds(), lat, stddev, iv.failed)
	if p.rate {
		line += fmt.Sprintf(", lag %.3f ms", lag)
		if p.limit {
			line += fmt.Sprintf(", %d skipped", iv.skipped)
		}
	}
	if p.retries {
		line += fmt.Sprintf(", %d retried, %d retries", iv.retried, iv.retries)
	}
	fmt.Fprintln(p.w, line)
}

// close stops the lines once the run is over; the last, shorter interval is not
// printed, as pgbench does not print it.
func (p *progress) close() {
	p.closeOnce.Do(func() {
		close(p.stop)
		p.once.Do(func() { close(p.done) }) // never started: nothing to wait for
		<-p.done
	})
}
