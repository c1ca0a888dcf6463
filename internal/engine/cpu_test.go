package engine

import (
	"testing"
	"time"
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
