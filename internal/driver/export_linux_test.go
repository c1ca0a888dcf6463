package driver

import "time"

// SetYieldEvery changes how often clients waiting in the kernel yield (see
// yieldEvery), so that a test can compare runs with and without; it returns the
// function that restores it. Not for use while a run is going.
func SetYieldEvery(d time.Duration) (restore func()) {
	old := yieldEvery
	yieldEvery = d
	return func() { yieldEvery = old }
}
