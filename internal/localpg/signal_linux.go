package localpg

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// SignalAll sends sig to the postmaster and to every process it started (the
// backends and background workers), as a fault that stops or freezes the whole
// server would: SIGSTOP and SIGCONT pause it without closing a connection.
func (s *Server) SignalAll(sig syscall.Signal) error {
	pids := []int{s.PID}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if f := strings.Fields(string(b[i+1:])); i > 0 && len(f) > 1 && f[1] == strconv.Itoa(s.PID) {
			pids = append(pids, pid)
		}
	}
	var errs []error
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("send %v to pid %d of server %q: %w", sig, pid, s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// killAll kills the postmaster and every process it started. The postmaster is
// stopped first so that it forks no backend between the look for its children
// and their kill.
func (s *Server) killAll() error {
	if err := s.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	return s.SignalAll(syscall.SIGKILL)
}
