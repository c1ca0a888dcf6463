package localpg

import (
	"errors"
	"fmt"
	"syscall"
)

// extractedPerJarByte is how much disk a download takes per byte of the jar: the jar
// itself, the .txz inside it while it is read, and the extracted tree (about three
// times the jar for the zonky builds of 11 to 18).
const extractedPerJarByte = 5

// errNoSpace says what to do about a cache that cannot hold a download.
func errNoSpace(dir, version string, need, free int64) error {
	return fmt.Errorf("not enough space in %s for PostgreSQL %s: it needs about %d MB, %d MB are free; free some space there or set %s to a directory on a larger disk",
		dir, version, need>>20, free>>20, CacheDirEnv)
}

// checkSpace fails early when dir's file system cannot hold need bytes.
func checkSpace(dir, version string, need int64) error {
	free, ok := FreeBytes(dir)
	if !ok || free >= need {
		return nil
	}
	return errNoSpace(dir, version, need, free)
}

// asNoSpace turns a write that ran out of space into errNoSpace; nil when err is
// something else.
func asNoSpace(err error, dir, version string, need int64) error {
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		return nil
	}
	free, _ := FreeBytes(dir)
	return errNoSpace(dir, version, need, free)
}
