package localpg_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
)

// TestFileSystem: two directories side by side are on one file system with some
// space free, where the system can tell; a missing path is on none.
func TestFileSystem(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("free space and file systems are not read on Windows")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fa, okA := localpg.FileSystem(a)
	fb, okB := localpg.FileSystem(b)
	if !okA || !okB || fa != fb {
		t.Errorf("file systems %d (%v) and %d (%v), want one for both", fa, okA, fb, okB)
	}
	if free, ok := localpg.FreeBytes(a); !ok || free <= 0 {
		t.Errorf("free space %d (%v), want some", free, ok)
	}
	if _, ok := localpg.FileSystem(filepath.Join(dir, "missing")); ok {
		t.Error("a missing path has a file system")
	}
}
