//go:build unix

package benchkit

import (
	"runtime"
	"syscall"
)

// cpuSeconds is the user and system CPU time in ru.
func cpuSeconds(ru *syscall.Rusage) float64 {
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// PeakMiB is the largest resident set in ru, in MiB: macOS counts it in bytes, other
// systems in KiB.
func PeakMiB(ru *syscall.Rusage) float64 {
	kib := float64(ru.Maxrss)
	if runtime.GOOS == "darwin" {
		kib /= 1024
	}
	return kib / 1024
}
