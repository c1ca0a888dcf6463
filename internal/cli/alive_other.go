//go:build !unix

package cli

import "os"

// processAlive tells whether a process with the given ID runs on this machine.
// Where signals cannot ask, finding the process is all there is.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
