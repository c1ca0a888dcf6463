package engine

import (
	"os"
	"strconv"
	"strings"
)

// cpuSample is this process's CPU time and, where /proc/stat exists, the machine's.
type cpuSample struct {
	user, sys                 float64 // seconds
	machineBusy, machineTotal int64   // clock ticks
}

func readCPU() cpuSample {
	var s cpuSample
	s.user, s.sys = processCPU()
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
