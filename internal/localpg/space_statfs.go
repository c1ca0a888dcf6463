//go:build linux || darwin || freebsd

package localpg

import "syscall"

// FreeBytes is the space available to an unprivileged user in dir's file system.
func FreeBytes(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

// FileSystem identifies path's file system (its device number), so that callers can
// tell which directories share free space.
func FileSystem(path string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, false
	}
	return uint64(st.Dev), true
}
