//go:build unix

package store

import (
	"errors"
	"syscall"
)

// noProcess reports whether no process has the given ID.
func noProcess(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
