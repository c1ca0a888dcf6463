package pgbench

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgbscript"
)

// txLog writes pgbench's transaction log (-l) in pgbench's format, so that tools
// that read pgbench's logs read these: a line a transaction, or with an aggregate
// interval a line an interval. As pgbench with -j threads, the clients are dealt
// to the threads in blocks and each thread writes a file: PREFIX.PID for the
// first, PREFIX.PID.T for thread T.
type txLog struct {
	files   []*logFile
	thread  []int   // each client's file
	numbers []int64 // each client's transactions so far, under its file's lock
}

// logFile is one thread's file.
type logFile struct {
	mu       sync.Mutex
	f        *os.File
	w        *bufio.Writer
	retries  bool    // a retries column, when transactions may be retried
	lag      bool    // a schedule lag column, in an open-loop run (--rate)
	detailed bool    // failures by kind (--failures-detailed)
	sample   float64 // the share of transactions logged; 0 for all
	rng      pgbscript.PRNG

	every time.Duration // the aggregate interval; 0 for a line a transaction
	start time.Time     // the interval being added to
	agg   aggregate
}

type aggregate struct {
	n                        int64
	sum, sum2, min, max      float64 // latencies in microseconds
	retried, retries         int64
	serialization, deadlocks int64
	// An open-loop run's schedule lags, in microseconds, and its skipped
	// transactions.
	lagSum, lagSum2, lagMin, lagMax float64
	skipped                         int64
}

// openLog creates a log file for each of the threads (seeds has one sampling
// seed a thread).
func openLog(prefix string, clients int, o logOptions) (*txLog, error) {
	threads := len(o.seeds)
	l := &txLog{thread: make([]int, clients), numbers: make([]int64, clients)}
	dealt := 0
	for t := range threads {
		path := fmt.Sprintf("%s.%d", prefix, os.Getpid())
		if t > 0 {
			path += fmt.Sprintf(".%d", t)
		}
		f, err := os.Create(path)
		if err != nil {
			l.close(time.Time{})
			return nil, fmt.Errorf("could not open logfile %q: %w", path, err)
		}
		lf := &logFile{f: f, w: bufio.NewWriterSize(f, 64<<10), retries: o.maxTries != 1, lag: o.rate, detailed: o.detailed,
			sample: o.sample, every: o.every}
		lf.rng.Seed(o.seeds[t])
		l.files = append(l.files, lf)
		// pgbench's share: what is left, divided among the threads left, rounded up.
		n := (clients - dealt + threads - t - 1) / (threads - t)
		for c := dealt; c < dealt+n; c++ {
			l.thread[c] = t
		}
		dealt += n
	}
	return l, nil
}

type logOptions struct {
	maxTries int
	detailed bool
	sample   float64
	every    time.Duration
	rate     bool     // an open-loop run
	seeds    []uint64 // a thread's sampling seed, for each thread
}

// add logs one transaction; it is the driver's OnTransaction.
func (l *txLog) add(ev driver.TxEvent) {
	if ev.Client >= len(l.numbers) {
		return
	}
	lf := l.files[l.thread[ev.Client]]
	lf.mu.Lock()
	defer lf.mu.Unlock()
	l.numbers[ev.Client]++
	lf.add(ev, l.numbers[ev.Client])
}

func (l *logFile) add(ev driver.TxEvent, number int64) {
	if l.every > 0 {
		l.aggregate(ev)
		return
	}
	if l.sample > 0 && l.rng.Float64() > l.sample {
		return
	}
	us := float64(ev.End.Sub(ev.Start)) / float64(time.Microsecond)
	at := ev.End.UnixMicro()
	switch {
	case ev.Skipped:
		fmt.Fprintf(l.w, "%d %d skipped %d %d %d", ev.Client, number, ev.Script, at/1e6, at%1e6)
	case ev.Failed:
		fmt.Fprintf(l.w, "%d %d %s %d %d %d", ev.Client, number, l.failure(ev.SQLState), ev.Script, at/1e6, at%1e6)
	default:
		fmt.Fprintf(l.w, "%d %d %.0f %d %d %d", ev.Client, number, us, ev.Script, at/1e6, at%1e6)
	}
	if l.lag {
		// pgbench logs a lag for the transactions that ran without an error, 0 for
		// the others.
		var lag time.Duration
		if !ev.Skipped && !ev.Failed {
			lag = ev.Lag
		}
		fmt.Fprintf(l.w, " %d", lag.Microseconds())
	}
	if l.retries {
		fmt.Fprintf(l.w, " %d", ev.Tries-1)
	}
	l.w.WriteByte('\n')
}

// failure is how a failed transaction shows in the log.
func (l *logFile) failure(state string) string {
	if l.detailed {
		switch state {
		case "40001":
			return "serialization"
		case "40P01":
			return "deadlock"
		}
	}
	return "failed"
}

// aggregate adds a transaction to its interval, writing the intervals that ended
// before it, empty ones too.
func (l *logFile) aggregate(ev driver.TxEvent) {
	if l.start.IsZero() {
		l.start = ev.Start.Truncate(time.Second)
	}
	l.flushUntil(ev.End)
	a := &l.agg
	if ev.Skipped {
		a.skipped++
		return
	}
	if ev.Tries > 1 {
		a.retried++
		a.retries += int64(ev.Tries - 1)
	}
	if ev.Failed {
		if l.detailed {
			switch ev.SQLState {
			case "40001":
				a.serialization++
			case "40P01":
				a.deadlocks++
			}
		}
		return
	}
	us := float64(ev.End.Sub(ev.Start)) / float64(time.Microsecond)
	if a.n == 0 || us < a.min {
		a.min = us
	}
	a.max = math.Max(a.max, us)
	a.n++
	a.sum += us
	a.sum2 += us * us
	if l.lag {
		lag := float64(ev.Lag) / float64(time.Microsecond)
		if a.n == 1 || lag < a.lagMin {
			a.lagMin = lag
		}
		a.lagMax = math.Max(a.lagMax, lag)
		a.lagSum += lag
		a.lagSum2 += lag * lag
	}
}

// flushUntil writes every interval that ended by t.
func (l *logFile) flushUntil(t time.Time) {
	for !l.start.IsZero() && !t.Before(l.start.Add(l.every)) {
		a := l.agg
		fmt.Fprintf(l.w, "%d %d %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %d %d %d %d %d\n", l.start.Unix(), a.n, a.sum, a.sum2, a.min, a.max,
			a.lagSum, a.lagSum2, a.lagMin, a.lagMax, a.skipped, a.retried, a.retries, a.serialization, a.deadlocks)
		l.agg = aggregate{}
		l.start = l.start.Add(l.every)
	}
}

// close writes the intervals that ended by end (a partial last one is left out,
// as pgbench leaves it) and closes the files.
func (l *txLog) close(end time.Time) error {
	var errs []error
	for _, lf := range l.files {
		errs = append(errs, lf.close(end))
	}
	return errors.Join(errs...)
}

func (l *logFile) close(end time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.every > 0 && !end.IsZero() {
		l.flushUntil(end)
	}
	err := l.w.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
