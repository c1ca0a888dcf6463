package engine

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// cpuSample is this process's CPU time and, where /proc/stat exists, the machine's.
type cpuSample struct {
	user, sys                 float64 // seconds
	machineBusy, machineTotal int64   // clock ticks
}

func readCPU() cpuSample {
	var s cpuSample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.user = float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
		s.sys = float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		if len(f) > 5 && f[0] == "cpu" {
			for i, v := range f[1:] {
				n, _ := strconv.ParseInt(v, 10, 64)
				s.machineTotal += n
				if i != 3 && i != 4 { // idle and iowait
					s.machineBusy += n
				}
			}
		}
	}
	return s
}
