package engine

import "syscall"

// processCPU is this process's user and system CPU time in seconds.
func processCPU() (user, sys float64) {
	self, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, 0
	}
	var created, exited, kernel, usr syscall.Filetime
	if syscall.GetProcessTimes(self, &created, &exited, &kernel, &usr) != nil {
		return 0, 0
	}
	return seconds(usr), seconds(kernel)
}

// seconds reads a duration in a Filetime, which counts 100 ns units.
func seconds(ft syscall.Filetime) float64 {
	return float64(uint64(ft.HighDateTime)<<32|uint64(ft.LowDateTime)) / 1e7
}
