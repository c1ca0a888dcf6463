package load

import (
	"fmt"
	"strings"
	"time"
)

// Phase is one step of a load and how long it took.
type Phase struct {
	Name     string
	Duration time.Duration
	start    time.Time
}

// Phases times the steps of a load, one after another.
type Phases []Phase

// Begin ends the running phase, if any, and starts the named one.
func (ps *Phases) Begin(name string) {
	ps.End()
	*ps = append(*ps, Phase{Name: name, start: time.Now()})
}

// End stops the running phase.
func (ps *Phases) End() {
	if n := len(*ps); n > 0 && (*ps)[n-1].Duration == 0 {
		(*ps)[n-1].Duration = time.Since((*ps)[n-1].start)
	}
}

// Total is the sum of all phases.
func (ps Phases) Total() time.Duration {
	var t time.Duration
	for _, p := range ps {
		t += p.Duration
	}
	return t
}

// String reads like pgbench's summary: "done in 5.20 s (copy 3.10 s, ...)".
func (ps Phases) String() string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s %.2f s", p.Name, p.Duration.Seconds())
	}
	return fmt.Sprintf("done in %.2f s (%s)", ps.Total().Seconds(), strings.Join(parts, ", "))
}
