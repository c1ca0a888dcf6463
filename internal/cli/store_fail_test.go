package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestStoreFullStopsRun: when the results store can no longer be written (its
// file system is full), the run stops with a clear error instead of measuring what
// it cannot keep.
func TestStoreFullStopsRun(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", dsn); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system here (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	results := filepath.Join(dir, "r.db")
	// The store is created; then everything but a few kilobytes is taken.
	if code, out, errOut := run(t, "runs", "--results", results); code != 0 && !strings.Contains(errOut, "no results store") {
		t.Fatalf("runs: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "run", "tpcb", "--clients", "1", "--duration", "1s", "--results", results, "--dsn", dsn); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, errOut)
	}
	fill, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := fill.Write(buf); err != nil {
			break
		}
	}
	// Leave room to open the store and begin, not to finish.
	if fi, err := fill.Stat(); err == nil {
		fill.Truncate(fi.Size() - 96<<10)
	}
	fill.Close()

	code, _, errOut := run(t, "run", "tpcb", "--clients", "2", "--duration", "20s", "--results", results, "--dsn", dsn)
	if code != cli.ExitError || !strings.Contains(errOut, "could not be written") || !strings.Contains(errOut, "free disk space") {
		t.Errorf("run on a full results store: exit %d, stderr:\n%s", code, errOut)
	}
}
