//go:build !linux

package localpg

import "syscall"

// killAll kills the postmaster; its backends exit as each notices it is gone.
func (s *Server) killAll() error { return s.Signal(syscall.SIGKILL) }
