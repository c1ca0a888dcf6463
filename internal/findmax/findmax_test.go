package findmax

import (
	"testing"
	"time"
)

func TestParseObjective(t *testing.T) {
	for _, c := range []struct {
		slo, errs string
		want      Objective
	}{
		{"p99<10ms", "", Objective{99, 10 * time.Millisecond, -1}},
		{"p99.9 < 50ms", "<0.1%", Objective{99.9, 50 * time.Millisecond, 0.001}},
		{"p50<=2ms", "<= 1%", Objective{50, 2 * time.Millisecond, 0.01}},
	} {
		got, err := ParseObjective(c.slo, c.errs)
		if err != nil || got != c.want {
			t.Errorf("%q %q: %+v, %v; want %+v", c.slo, c.errs, got, err, c.want)
		}
	}
	for _, c := range [][2]string{{"", ""}, {"99<10ms", ""}, {"p0<1s", ""}, {"p101<1s", ""}, {"p99<-1s", ""}, {"p99<soon", ""},
		{"p99<1s", "0.1%"}, {"p99<1s", "<0.1"}, {"p99<1s", "<200%"}, {"p99<1s", "<x%"}} {
		if _, err := ParseObjective(c[0], c[1]); err == nil {
			t.Errorf("%q %q: accepted", c[0], c[1])
		}
	}
}

// Best reads a search's result back from its runs: the highest rate met, unless a
// confirmation at that rate failed, and then the highest met below it.
func TestBest(t *testing.T) {
	step := func(rate float64, met bool) Step { return Step{Rate: rate, Met: met} }
	for _, c := range []struct {
		steps []Step
		want  float64
	}{
		{nil, 0},
		{[]Step{step(0, false), step(600, false), step(300, false)}, 0},
		{[]Step{step(0, false), step(600, true), step(800, false), step(700, true), step(700, true)}, 700},
		// The confirmation at 700 failed: 600 stands, though 650 was never tried.
		{[]Step{step(0, false), step(600, true), step(800, false), step(700, true), step(700, false), step(650, false)}, 600},
		{[]Step{step(600, true), step(700, true), step(700, false), step(650, true), step(650, true)}, 650},
	} {
		if got := Best(c.steps); got != c.want {
			t.Errorf("Best(%v) = %v, want %v", c.steps, got, c.want)
		}
	}
}
