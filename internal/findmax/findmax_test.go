package findmax

import (
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
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

// Read reads a search's result back from its runs: the highest rate met, unless a
// confirmation at that rate failed, and then the highest met below it.
func TestRead(t *testing.T) {
	step := func(rate float64, met bool) Step { return Step{Rate: rate, Met: met} }
	for _, c := range []struct {
		steps     []Step
		want      float64
		confirmed int
	}{
		{nil, 0, 0},
		{[]Step{step(0, false), step(600, false), step(300, false)}, 0, 0},
		{[]Step{step(0, false), step(600, true), step(800, false), step(700, true), step(700, true)}, 700, 1},
		// The confirmation at 700 failed: 600 stands, though 650 was never tried.
		{[]Step{step(0, false), step(600, true), step(800, false), step(700, true), step(700, false), step(650, false)}, 600, 0},
		{[]Step{step(600, true), step(700, true), step(700, false), step(650, true), step(650, true)}, 650, 1},
	} {
		got := Read(c.steps)
		if got.OK != (c.want > 0) || got.Rate != c.want || got.Confirmed != c.confirmed || got.Bound || got.Doubt != "" {
			t.Errorf("Read(%v) = %+v, want rate %v confirmed %d", c.steps, got, c.want, c.confirmed)
		}
	}
}

// closedLoop is the step of the run that measured the ceiling, its throughput tps.
func closedLoop(id int64, tps float64, met bool) Step {
	return Step{Met: met, Summary: &engine.Summary{RunID: id, TPS: tps}}
}

// A closed-loop run that met the objective is a lower bound of the answer: the
// search found at least its throughput, though every open-loop rate failed.
func TestReadCeilingMet(t *testing.T) {
	steps := []Step{closedLoop(1, 20725, true), {Rate: 13816, Why: "p99 was 6.1 ms", Summary: &engine.Summary{RunID: 2}},
		{Rate: 6908, Why: "p99 was 5.2 ms", Summary: &engine.Summary{RunID: 3}}}
	f := Read(steps)
	if !f.OK || !f.Bound || f.Rate != 20725 {
		t.Fatalf("Read = %+v, want at least 20725 tx/s", f)
	}
	// Open-loop runs far below it failed: the runs disagree, and the answer says so.
	if want := "the closed-loop run met the objective at 20725 tx/s in run 1, yet 6908 tx/s did not in run 3: p99 was 5.2 ms"; f.Doubt != want {
		t.Errorf("doubt %q\nwant  %q", f.Doubt, want)
	}
	res := &Result{Objective: Objective{99, 5 * time.Millisecond, -1}, Found: f, Steps: steps, Above: 6908, Ceiling: 20725, Confirm: 2}
	if a := res.Answer(); a != "at least 20725 tx/s" {
		t.Errorf("answer %q", a)
	}
	// A closed-loop run that did not meet it bounds nothing.
	if f := Read([]Step{closedLoop(1, 20725, false), {Rate: 13816}}); f.OK {
		t.Errorf("Read = %+v, want nothing found", f)
	}
}

// Runs that contradict each other beyond noise make the answer unreliable, and
// the failed run's own flags say why; runs on either side of a noisy edge do not.
func TestReadDoubt(t *testing.T) {
	busy := []engine.Flag{{Name: "client_cpu", Invalid: true, Reason: "the client was CPU-bound (1.98 cores busy): it, not the server, set the pace"},
		{Name: "rate", Invalid: true, Reason: "the target did not keep up with 19443 tx/s: 6260 tx/s done"}}
	run := func(id int64, rate, tps float64, met bool, flags ...engine.Flag) Step {
		return Step{Rate: rate, Met: met, Summary: &engine.Summary{RunID: id, TPS: tps, Flags: flags}}
	}
	// A busy machine: 38887 tx/s met, then failed to confirm at half of it, and
	// 19443 tx/s collapsed to 6260.
	collapsed := []Step{closedLoop(1, 58331, false), run(2, 38887, 38850, true), run(3, 48609, 41000, false),
		run(4, 38887, 19846, false, busy[0]), run(5, 19443, 6260, false, busy...)}
	f := Read(collapsed)
	want := "38887 tx/s met the objective in run 2, yet 19443 tx/s did not in run 5: client_cpu: the client was CPU-bound"
	if !strings.HasPrefix(f.Doubt, want) || !strings.Contains(f.Doubt, "; rate: ") || f.OK {
		t.Errorf("Read = %+v\nwant no rate and the doubt %q...", f, want)
	}
	edge := []Step{run(1, 66, 66, true), run(2, 99, 97, true), run(3, 116, 91, false), run(4, 99, 90, false), run(5, 82, 80, true), run(6, 90, 83, false)}
	if f := Read(edge); f.Doubt != "" || f.Rate != 82 {
		t.Errorf("Read(edge) = %+v, want 82 tx/s without doubt", f)
	}
}

// An answer the confirmations did not confirm is labelled so.
func TestAnswer(t *testing.T) {
	obj := Objective{99, 5 * time.Millisecond, 0.01}
	steps := []Step{{Rate: 600, Met: true}, {Rate: 900, Met: false}, {Rate: 750, Met: true}}
	res := &Result{Objective: obj, Found: Read(steps), Steps: steps, Above: 900, Ceiling: 1000, Confirm: 2, BudgetSpent: true}
	if a, s := res.Answer(), res.Sure(); a != "750 tx/s, not confirmed (0 of 2 confirmation runs made)" ||
		s != "the edge lies between 750 and 900 tx/s (16.7% apart); the time budget ended the search early" {
		t.Errorf("answer %q; sure %q", a, s)
	}
	res = &Result{Objective: obj, Found: Read(steps[1:2]), Steps: steps[1:2], Above: 900, Ceiling: 1000}
	if a, s := res.Answer(), res.Sure(); a != "none: no rate met p99 < 5ms, errors <= 1%" || s != "no rate met the objective: the lowest tried, 900 tx/s, did not" {
		t.Errorf("answer %q; sure %q", a, s)
	}
}
