//go:build unix

package pgtest

import (
	"errors"
	"syscall"
)

// alive tells whether a process with the given ID runs on this machine.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
