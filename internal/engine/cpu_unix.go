//go:build unix

package engine

import "syscall"

// processCPU is this process's user and system CPU time in seconds.
func processCPU() (user, sys float64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		user = float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
		sys = float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
	}
	return user, sys
}
