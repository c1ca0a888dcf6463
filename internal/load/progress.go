package load

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress shows how far a load has come: a redrawn bar on a terminal, plain
// periodic lines otherwise (logs, CI, pipes).
type Progress struct {
	w       io.Writer
	tty     bool
	label   string
	unit    string
	total   int64
	done    atomic.Int64
	start   time.Time
	now     func() time.Time
	every   time.Duration
	stop    chan struct{}
	stopped sync.WaitGroup
}

// NewProgress prepares a progress display for total units (rows, warehouses).
// Call Start to begin drawing and Finish to draw the last state.
func NewProgress(w io.Writer, tty bool, label string, total int64, unit string) *Progress {
	every := 5 * time.Second
	if tty {
		every = 200 * time.Millisecond
	}
	return &Progress{w: w, tty: tty, label: label, unit: unit, total: total, now: time.Now, every: every}
}

// Add records n more units done; safe from many goroutines.
func (p *Progress) Add(n int64) { p.done.Add(n) }

// SetTotal changes the expected total (for example after a phase is added).
func (p *Progress) SetTotal(total int64) { atomic.StoreInt64(&p.total, total) }

// Start begins drawing in the background.
func (p *Progress) Start() {
	p.start = p.now()
	p.stop = make(chan struct{})
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.draw(false)
			}
		}
	}()
}

// Finish stops drawing and prints the final state.
func (p *Progress) Finish() {
	if p.stop != nil {
		close(p.stop)
		p.stopped.Wait()
		p.stop = nil
	}
	p.draw(true)
}

// Line formats the current state; exposed for tests with an injected clock.
func (p *Progress) Line() string {
	done := p.done.Load()
	total := atomic.LoadInt64(&p.total)
	elapsed := p.now().Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	frac := 0.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	eta := "--"
	if rate > 0 && done < total {
		eta = time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
	} else if done >= total {
		eta = "0s"
	}
	return fmt.Sprintf("%s %5.1f%% %s/%s %s, %s %s/s, elapsed %s, eta %s",
		p.label, 100*frac, count(done), count(total), p.unit, count(int64(rate)), p.unit,
		elapsed.Round(100*time.Millisecond), eta)
}

func (p *Progress) draw(final bool) {
	line := p.Line()
	if p.tty {
		const width = 24
		total := atomic.LoadInt64(&p.total)
		filled := 0
		if total > 0 {
			filled = int(min(float64(p.done.Load())/float64(total), 1) * width)
		}
		bar := "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "] "
		fmt.Fprintf(p.w, "\r\033[K%s%s", bar, line)
		if final {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintln(p.w, line)
}

// count prints a number with k/M suffixes, short enough for one terminal line.
func count(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Counts are the units done and the expected total (0 until known), for
// whoever shows the load elsewhere (live metrics).
func (p *Progress) Counts() (done, total int64) {
	return p.done.Load(), atomic.LoadInt64(&p.total)
}
