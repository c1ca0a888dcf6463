package histogram

import (
	"sync"
	"testing"
	"time"
)

func TestTickMergesWorkersPerSeries(t *testing.T) {
	reg := NewRegistry([]string{"a", "b"})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wk := reg.Worker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= 1000; i++ {
				wk.Record(0, time.Duration(i)*time.Microsecond)
				if i%10 == 0 {
					wk.Record(1, 2*time.Hour) // beyond the range: clamped, not lost
				}
			}
		}()
	}
	wg.Wait()
	hs := reg.Tick()
	if got := hs[0].TotalCount(); got != 4000 {
		t.Fatalf("series a: %d values, want 4000", got)
	}
	if got := hs[1].TotalCount(); got != 400 {
		t.Fatalf("series b: %d values, want 400", got)
	}
	if p50 := hs[0].ValueAtQuantile(50); p50 < 499 || p50 > 501 {
		t.Fatalf("series a p50 = %d us, want 500", p50)
	}
	if m := hs[1].Max(); m < highest*999/1000 {
		t.Fatalf("series b max = %d us, want the range's top %d", m, highest)
	}
	// The next tick holds only what was recorded since.
	reg.Worker().Record(1, 3*time.Millisecond)
	hs = reg.Tick()
	if hs[0].TotalCount() != 0 || hs[1].TotalCount() != 1 || hs[1].Max() < 2990 || hs[1].Max() > 3010 {
		t.Fatalf("second tick: a=%d b=%d max=%d, want 0, 1 and 3000 us", hs[0].TotalCount(), hs[1].TotalCount(), hs[1].Max())
	}
}

func TestRecordWhileTicking(t *testing.T) {
	reg := NewRegistry([]string{"a"})
	w := reg.Worker()
	done := make(chan struct{})
	var total int64
	go func() {
		for i := 0; i < 200000; i++ {
			w.Record(0, time.Millisecond)
		}
		close(done)
	}()
	for {
		select {
		case <-done:
			total += reg.Tick()[0].TotalCount()
			if total != 200000 {
				t.Fatalf("ticks saw %d values, want 200000", total)
			}
			return
		default:
			total += reg.Tick()[0].TotalCount()
		}
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	h := New()
	for i := int64(1); i <= 5000; i++ {
		_ = h.RecordValue(i)
	}
	b, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.TotalCount() != 5000 || got.ValueAtQuantile(99) != h.ValueAtQuantile(99) {
		t.Fatalf("decoded %d values p99 %d, want 5000 and %d", got.TotalCount(), got.ValueAtQuantile(99), h.ValueAtQuantile(99))
	}
	s := Summarize(h)
	if s.Count != 5000 || s.P50 < 2.49 || s.P50 > 2.51 || s.Max < 4.99 {
		t.Fatalf("summary %+v", s)
	}
}

// TestBurstRoomLetGo: a worker's buffer grown by a burst, a large one or one of
// a few dozen, is kept while it is used and let go once the worker is back to
// its usual few latencies a tick, with every latency counted either way.
func TestBurstRoomLetGo(t *testing.T) {
	reg := NewRegistry([]string{"tx"})
	w := reg.Worker()
	room := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return cap(w.buf) + cap(w.spare)
	}
	for tick, n := range []int{3, 5000, 4000, 3, 3, 60, 60, 3, 3} {
		for i := range n {
			w.Record(0, time.Duration(i+1)*time.Microsecond)
		}
		if got := reg.Tick()[0].TotalCount(); got != int64(n) {
			t.Fatalf("tick %d: %d latencies merged, want %d", tick, got, n)
		}
		switch {
		case tick == 2 && room() < 4000:
			t.Errorf("after a second busy tick: room for %d latencies, want the burst's kept", room())
		case tick == 8 && room() > 32:
			t.Errorf("back to 3 a tick: room for %d latencies kept, want at most 32", room())
		}
	}
}
