//go:build unix

package localpg

import (
	"fmt"
	"os"
	"syscall"
)

// Local servers run on Unix systems: PostgreSQL is started in a session of its own,
// as another user when this process is root, and stopped with signals.

// supported tells whether local servers can run here.
func supported() error { return nil }

// lockDir holds an exclusive lock on a server's directory while Start works
// in it, so that Prune, which tries the same lock, leaves it alone.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { _ = f.Close() }, nil
}

// tryLockDir is lockDir without waiting: ok is false while a Start holds
// the lock.
func tryLockDir(dir string) (unlock func(), ok bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, false
	}
	return func() { _ = f.Close() }, true
}

// credential makes a command run as the account; nil for the current user.
func (a account) credential() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{}
	if !a.isCurrent() {
		attr.Credential = &syscall.Credential{Uid: uint32(a.UID), Gid: uint32(a.GID), Groups: []uint32{}}
	}
	return attr
}

// ownSession makes the command lead a session of its own.
func ownSession(attr *syscall.SysProcAttr) { attr.Setsid = true }

// kill sends sig to the process pid; 0 only checks that it exists.
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// owner is the user and group that own the file, where the system says.
func owner(fi os.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
