package pgwire

import "testing"

// epochs ends n epochs of 1000 waits each, at poll or direct voluntary switches per
// wait by the way in use, and returns whether each epoch chose to read at once.
func epochs(w *WaitChooser, n int, poll, direct float64) []bool {
	var ways []bool
	for range n {
		rate := poll
		if w.direct.Load() {
			rate = direct
		}
		w.epoch(int64(rate*1000), 1000)
		ways = append(ways, w.direct.Load())
	}
	return ways
}

// TestWaitChooser: the chooser polls first, tries reading at once for an epoch,
// keeps the way that costs fewer context switches (reading at once only while it
// costs less than directMaxExtra more), and tries the other way again for one epoch
// in probeEvery.
func TestWaitChooser(t *testing.T) {
	t.Run("reading at once costs little", func(t *testing.T) {
		w := &WaitChooser{}
		ways := epochs(w, 2*probeEvery+2, 0.70, 0.75)
		for i, direct := range ways {
			// Epoch 0 polls, then reading at once is tried and kept; the epoch
			// after each probeEvery-th polls again.
			wantPoll := i > 0 && i%probeEvery == 0
			if direct == wantPoll {
				t.Fatalf("after epoch %d: read at once %v, want %v (ways %v)", i, direct, !wantPoll, ways)
			}
		}
		if got := w.readAtOnce(); got < 0.9 || got >= 1 {
			t.Errorf("read at once for %.2f of the waits, want most but not all", got)
		}
	})
	t.Run("reading at once costs wake-ups", func(t *testing.T) {
		w := &WaitChooser{}
		ways := epochs(w, 2*probeEvery+2, 1.00, 1.65)
		for i, direct := range ways {
			wantDirect := i%probeEvery == 0
			if direct != wantDirect {
				t.Fatalf("after epoch %d: read at once %v, want %v (ways %v)", i, direct, wantDirect, ways)
			}
		}
		if got := w.readAtOnce(); got <= 0 || got > 0.1 {
			t.Errorf("read at once for %.2f of the waits, want only the trial epochs", got)
		}
	})
	t.Run("too few waits to measure", func(t *testing.T) {
		w := &WaitChooser{}
		for range 3 * probeEvery {
			w.epoch(5, minEpochWaits-1)
			if w.direct.Load() {
				t.Fatal("read at once without a measurement of polling")
			}
		}
	})
	t.Run("the cost changes", func(t *testing.T) {
		w := &WaitChooser{}
		if ways := epochs(w, 3, 0.70, 0.75); !ways[2] {
			t.Fatalf("ways %v, want reading at once", ways)
		}
		// Reading at once becomes costly: the next trial of polling shows it.
		ways := epochs(w, probeEvery+1, 0.70, 1.50)
		if last := ways[len(ways)-1]; last {
			t.Errorf("ways %v: still reading at once after polling was measured cheaper", ways)
		}
	})
}
