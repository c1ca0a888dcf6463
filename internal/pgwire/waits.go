package pgwire

import (
	"sync/atomic"
	"time"
)

// A thread-per-client connection on a Unix-domain socket can wait for its answer in
// two ways.
//
//   - Poll, then read. The thread sleeps in poll until the answer arrives. It costs a
//     system call per wait, as libpq (and so sysbench) pays.
//   - Read at once. A call fewer, and when the server has taken in the request and
//     answered before the client reads, the read just returns the answer. But a read
//     that sleeps is also woken when the server takes in the request: reading it
//     frees send-buffer space, and the kernel wakes every sleeper on the socket for
//     that. When the client then runs before the answer is there, it costs two more
//     context switches.
//
// Which is cheaper depends on where the scheduler puts the clients and their server
// processes, which no rule foretells, so WaitChooser measures it while the run goes
// on. It polls first until an epoch has measured polling: it counts the process's
// voluntary context switches per wait. Then it reads at once for an epoch, measures
// that too, and keeps reading at once only while that costs fewer than
// directMaxExtra more switches per wait. It measures the way not in use again every
// probeEvery epochs. A workload too slow to measure (fewer than minEpochWaits waits
// an epoch) keeps polling.
type WaitChooser struct {
	direct atomic.Bool     // read at once; polling first otherwise
	waits  []*atomic.Int64 // each client's waits (Counter)

	// The rest belongs to the goroutine that runs choose.
	rate       [2]float64 // voluntary switches per wait: [0] polling, [1] reading at once
	measured   [2]bool
	counted    [2]int64 // waits in each way, over the epochs ended
	sinceProbe int
	lastSw     int64
	lastWaits  int64
}

const (
	waitEpoch      = 200 * time.Millisecond
	probeEvery     = 50 // epochs: the way not in use runs one epoch in 50
	directMaxExtra = 0.25
	minEpochWaits  = 100 // fewer waits than this in an epoch measure nothing
)

// Counter is a new count of waits, for one client's connections (Conn.ChooseWait)
// to share; it is to be taken before Choose starts.
func (w *WaitChooser) Counter() *atomic.Int64 {
	n := new(atomic.Int64)
	w.waits = append(w.waits, n)
	return n
}

func (w *WaitChooser) totalWaits() int64 {
	var n int64
	for _, c := range w.waits {
		n += c.Load()
	}
	return n
}

// start begins the first epoch, polling first.
func (w *WaitChooser) start() {
	w.lastSw, w.lastWaits = voluntarySwitches(), w.totalWaits()
}

// epoch ends an epoch that had sw voluntary switches and waits waits in the way in
// use, and picks the way for the next one.
func (w *WaitChooser) epoch(sw, waits int64) {
	cur := 0
	if w.direct.Load() {
		cur = 1
	}
	w.counted[cur] += waits
	if waits >= minEpochWaits {
		w.rate[cur], w.measured[cur] = float64(sw)/float64(waits), true
	}
	w.sinceProbe++
	next := w.best()
	if other := 1 - next; w.measured[0] && (!w.measured[other] || w.sinceProbe >= probeEvery) {
		next, w.sinceProbe = other, 0
	}
	w.direct.Store(next == 1)
}

// readAtOnce is the share of the waits of the epochs ended that read at once.
func (w *WaitChooser) readAtOnce() float64 {
	if n := w.counted[0] + w.counted[1]; n > 0 {
		return float64(w.counted[1]) / float64(n)
	}
	return 0
}

// best is the way measured cheaper, polling until both are measured.
func (w *WaitChooser) best() int {
	if w.measured[0] && w.measured[1] && w.rate[1]-w.rate[0] < directMaxExtra {
		return 1
	}
	return 0
}

// Choose ends an epoch every waitEpoch until stop is closed, then sends the share of
// waits that read at once on done.
func (w *WaitChooser) Choose(stop <-chan struct{}, done chan<- float64) {
	w.start()
	t := time.NewTicker(waitEpoch)
	defer t.Stop()
	for {
		select {
		case <-stop:
			done <- w.readAtOnce()
			return
		case <-t.C:
			sw, waits := voluntarySwitches(), w.totalWaits()
			w.epoch(sw-w.lastSw, waits-w.lastWaits)
			w.lastSw, w.lastWaits = sw, waits
		}
	}
}
