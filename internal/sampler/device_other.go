//go:build !linux

package sampler

import (
	"fmt"
	"runtime"
)

func deviceOf(string) (device, error) {
	return device{}, fmt.Errorf("disk counters are read from /proc/diskstats, which %s does not have", runtime.GOOS)
}

func rdevOf(path string) (device, error) { return deviceOf(path) }
