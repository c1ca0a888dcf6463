package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// TestCPU: CPU time this process spends shows up in readCPU, in user or system time,
// on every system (getrusage on Unix, GetProcessTimes on Windows). A busy loop runs
// until 100 ms more are counted; one that is never counted runs into the time limit.
func TestCPU(t *testing.T) {
	spent := func() float64 { s := readCPU(); return s.user + s.sys }
	start, begin := time.Now(), spent()
	for spent()-begin < 0.1 {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%.3f s of CPU time counted in 10 s of a busy loop, want 0.1 s", spent()-begin)
		}
	}
}

// TestClientCPUOverAMoment: clients that stop at once leave a run of a few
// milliseconds, over which the CPU time of setting the run up looks like more
// cores than the machine has. Saturation is judged over a second or more.
func TestClientCPUOverAMoment(t *testing.T) {
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		wall      time.Duration
		cpu       float64
		saturated bool
	}{
		{"aborted at once", 10 * time.Millisecond, 0.024, false},
		{"a second, one core busy", time.Second, 0.98, true},
		{"two seconds, half a core", 2 * time.Second, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := &driver.Result{Start: at, WindowStart: at, WindowEnd: at.Add(tc.wall), End: at.Add(tc.wall), Committed: 1, CommitsTotal: 1}
			sum := summarize(&store.Run{ID: 1}, res, &target.Info{}, &Setup{Scale: 1}, Spec{Settings: Settings{Clients: 8, Jobs: 1}}, newServerStats(),
				cpuSample{}, cpuSample{user: tc.cpu})
			flags := judge(evidence{clientSaturated: sum.ClientCPU.Saturated, clientCores: sum.ClientCPU.Cores})
			if sum.ClientCPU.Saturated != tc.saturated || (len(flags) > 0) != tc.saturated {
				t.Errorf("%.3f s of CPU over %s: %.2f cores, saturated %v, flags %+v; want saturated %v",
					tc.cpu, tc.wall, sum.ClientCPU.Cores, sum.ClientCPU.Saturated, flags, tc.saturated)
			}
		})
	}
}

// TestLoopBusyRecorded: each event loop's busy share is kept in percent. Loops
// busy by the clock while the client used little CPU (they waited for cores the
// server held) do not make the run client-bound.
func TestLoopBusyRecorded(t *testing.T) {
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	res := &driver.Result{Start: at, WindowStart: at, WindowEnd: at.Add(2 * time.Second), End: at.Add(2 * time.Second),
		Committed: 1, CommitsTotal: 1, EventLoops: 2, LoopBusy: []float64{0.95, 0.972}}
	sum := summarize(&store.Run{ID: 1}, res, &target.Info{}, &Setup{Scale: 1}, Spec{Settings: Settings{Clients: 8, Jobs: 2}}, newServerStats(),
		cpuSample{}, cpuSample{user: 0.5})
	if got := sum.ClientCPU.LoopBusyPct; len(got) != 2 || got[0] != 95 || got[1] != 97.2 {
		t.Errorf("loop busy %v, want [95 97.2]", got)
	}
	flags := judge(evidence{clientSaturated: sum.ClientCPU.Saturated, clientCores: sum.ClientCPU.Cores})
	if sum.ClientCPU.Saturated || len(flags) > 0 {
		t.Errorf("loops busy by the clock with 0.25 cores of client CPU: saturated %v, flags %+v; want neither", sum.ClientCPU.Saturated, flags)
	}
	var b strings.Builder
	sum.WriteText(&b)
	if !strings.Contains(b.String(), "2 event loops (busy 95%, 97%)") {
		t.Errorf("the summary does not show the loops' busy shares:\n%s", b.String())
	}
}
