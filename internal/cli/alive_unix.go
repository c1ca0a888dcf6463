//go:build unix

package cli

import (
	"errors"
	"syscall"
)

// processAlive tells whether a process with the given ID runs on this machine.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
