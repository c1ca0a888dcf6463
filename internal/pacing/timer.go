package pacing

import "time"

// Timer sleeps on one Go timer made once, for sleeps before many transactions
// (pgbench's \sleep, TPC-C's think times, the open-loop pacer).
type Timer struct{ t *time.Timer }

// Sleep waits for d; false if stop or done closed first (a nil one never does).
func (t *Timer) Sleep(d time.Duration, stop, done <-chan struct{}) bool {
	if t.t == nil {
		t.t = time.NewTimer(d)
	} else {
		t.t.Reset(d)
	}
	select {
	case <-t.t.C:
		return true
	case <-stop:
	case <-done:
	}
	t.t.Stop()
	return false
}
