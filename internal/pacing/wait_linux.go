package pacing

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// preciseWaiter waits short times on a timerfd that Go's network poller watches:
// its readiness wakes the poller at once, where a Go timer waits for the poller's
// next timeout, rounded up to a millisecond. An open-loop run waits before most
// of its transactions, and a millisecond late on each would be lag the target did
// not cause.
type preciseWaiter struct {
	fd  int
	f   *os.File
	buf [8]byte
}

func newPreciseWaiter() *preciseWaiter {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil // out of descriptors: Go's timers will do
	}
	return &preciseWaiter{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}
}

// wait sleeps for d; false if it could not.
func (w *preciseWaiter) wait(d time.Duration) bool {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err != nil {
		return false
	}
	_, err := w.f.Read(w.buf[:])
	return err == nil
}

func (w *preciseWaiter) close() { w.f.Close() }
