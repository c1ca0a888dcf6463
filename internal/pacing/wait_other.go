//go:build !linux

package pacing

import "time"

// preciseWaiter is Linux's; elsewhere Go's timers wait.
type preciseWaiter struct{}

func newPreciseWaiter() *preciseWaiter             { return nil }
func (w *preciseWaiter) wait(d time.Duration) bool { return false }
func (w *preciseWaiter) close()                    {}
