package pacing

import (
	"math"
	"testing"
	"time"
)

// TestPoisson: the gaps between arrivals have the mean the rate asks for, and an
// exponential's spread (its standard deviation equals its mean).
func TestPoisson(t *testing.T) {
	start := time.Unix(1000, 0)
	s := New(1000, 1, start, 0, time.Hour)
	const n = 100000
	var sum, sumSq float64
	last := start
	for range n {
		at, due := s.Take(start.Add(time.Hour))
		if !due {
			t.Fatal("an arrival long past was not due")
		}
		gap := float64(at.Sub(last))
		sum, sumSq = sum+gap, sumSq+gap*gap
		last = at
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	if math.Abs(mean-float64(time.Millisecond)) > 0.02*float64(time.Millisecond) || math.Abs(sd-mean) > 0.03*mean {
		t.Errorf("mean gap %s, deviation %s; want 1ms both", time.Duration(mean), time.Duration(sd))
	}
}

// TestNotYetDue: an arrival further away than EarlyStart is not taken, and the
// next one is not drawn meanwhile.
func TestNotYetDue(t *testing.T) {
	start := time.Unix(1000, 0)
	s := New(1, 2, start, 0, time.Hour)
	next := s.Peek()
	if at, due := s.Take(next.Add(-2 * EarlyStart)); due || !at.Equal(next) {
		t.Errorf("taken %v (%v) before it was due at %v", due, at, next)
	}
	if at, due := s.Take(next.Add(-EarlyStart / 2)); !due || !at.Equal(next) {
		t.Errorf("not taken just before it was due: %v %v", due, at)
	}
	if !s.Peek().After(next) {
		t.Error("the next arrival was not drawn")
	}
}

// TestBehind: the window's arrivals are those taken and those left untaken when it
// closed, counted by drawing the rest.
func TestBehind(t *testing.T) {
	start := time.Unix(1000, 0)
	s := New(100, 3, start, time.Second, 11*time.Second)
	for s.Peek().Before(start.Add(6 * time.Second)) {
		s.Take(start.Add(time.Hour))
	}
	scheduled, untaken := s.Behind()
	if scheduled < 900 || scheduled > 1100 || untaken < 400 || untaken > 600 {
		t.Errorf("%d scheduled, %d untaken; want about 1000 and 500", scheduled, untaken)
	}
	s.EndWindow(6 * time.Second)
	if scheduled, untaken := s.Behind(); untaken != 0 || scheduled < 400 || scheduled > 600 {
		t.Errorf("window ended at the last arrival taken: %d scheduled, %d untaken", scheduled, untaken)
	}
}

// TestPace: the pacer hands waiting clients the arrivals as they come due, and
// stops when asked.
func TestPace(t *testing.T) {
	s := New(1000, 4, time.Now(), 0, time.Hour)
	stop := make(chan struct{})
	go s.Pace(stop, nil)
	began := time.Now()
	for range 50 {
		<-s.Wake()
		s.Take(time.Now())
	}
	if d := time.Since(began); d < 10*time.Millisecond {
		t.Errorf("50 arrivals at 1000/s handed over in %s", d)
	}
	close(stop)
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the pacer did not stop")
	}
}
