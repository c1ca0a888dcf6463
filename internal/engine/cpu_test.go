package engine

import (
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
			sum := summarize(&store.Run{ID: 1}, res, &target.Info{}, 1, Spec{Clients: 8, Jobs: 1}, newServerStats(),
				cpuSample{}, cpuSample{user: tc.cpu})
			flags := judge(evidence{clientSaturated: sum.ClientCPU.Saturated, clientCores: sum.ClientCPU.Cores})
			if sum.ClientCPU.Saturated != tc.saturated || (len(flags) > 0) != tc.saturated {
				t.Errorf("%.3f s of CPU over %s: %.2f cores, saturated %v, flags %+v; want saturated %v",
					tc.cpu, tc.wall, sum.ClientCPU.Cores, sum.ClientCPU.Saturated, flags, tc.saturated)
			}
		})
	}
}

// TestClientSaturatedLoops: a run whose every event loop was over 90% busy is
// flagged "client saturated", with each loop's share, though its cores alone
// would not say so; one loop with time to spare leaves it unflagged.
func TestClientSaturatedLoops(t *testing.T) {
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		busy      []float64
		saturated bool
	}{
		{"both loops busy", []float64{0.95, 0.972}, true},
		{"one loop with time to spare", []float64{0.95, 0.6}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &driver.Result{Start: at, WindowStart: at, WindowEnd: at.Add(2 * time.Second), End: at.Add(2 * time.Second),
				Committed: 1, CommitsTotal: 1, EventLoops: len(tc.busy), LoopBusy: tc.busy}
			sum := summarize(&store.Run{ID: 1}, res, &target.Info{}, 1, Spec{Clients: 8, Jobs: 2}, newServerStats(),
				cpuSample{}, cpuSample{user: 0.5})
			flags := judge(evidence{clientSaturated: sum.ClientCPU.Saturated, clientCores: sum.ClientCPU.Cores, loopBusy: sum.ClientCPU.LoopBusyPct})
			if sum.ClientCPU.Saturated != tc.saturated || (len(flags) > 0) != tc.saturated {
				t.Fatalf("loops busy %v: saturated %v, flags %+v; want saturated %v", tc.busy, sum.ClientCPU.Saturated, flags, tc.saturated)
			}
			if tc.saturated && (flags[0].Name != flagClientCPU || flags[0].Reason != "client saturated: every event loop was over 90% busy (95%, 97%): the client, not the server, set the pace") {
				t.Errorf("flag %+v", flags[0])
			}
			if got := sum.ClientCPU.LoopBusyPct; len(got) != 2 || got[0] != 95 || got[1] != 100*tc.busy[1] {
				t.Errorf("loop busy %v, want %v in percent to a tenth", got, tc.busy)
			}
		})
	}
}
