package benchkit

import "syscall"

// cpuSeconds is the user and kernel CPU time in ru; a Filetime counts 100 ns units.
func cpuSeconds(ru *syscall.Rusage) float64 {
	ticks := func(ft syscall.Filetime) uint64 { return uint64(ft.HighDateTime)<<32 | uint64(ft.LowDateTime) }
	return float64(ticks(ru.UserTime)+ticks(ru.KernelTime)) / 1e7
}

// PeakMiB is 0: Windows gives no resident set size with the CPU times.
func PeakMiB(*syscall.Rusage) float64 { return 0 }
