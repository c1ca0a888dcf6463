//go:build !(linux || darwin || freebsd)

package localpg

// FreeBytes is unknown here; a full disk is then reported when a write fails.
func FreeBytes(string) (int64, bool) { return 0, false }

// FileSystem is unknown here.
func FileSystem(string) (uint64, bool) { return 0, false }
