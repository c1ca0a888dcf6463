package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestStoreFullStopsRun: when the results store can no longer be written (its
// file system is full), the run stops with a clear error instead of measuring what
// it cannot keep.
func TestStoreFullStopsRun(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
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

// TestWriterRefusesBadStores: run refuses, before it measures anything, a results
// store with a damaged page and a file that is not a store, with one line naming
// the file and what to do, and leaves both as they were.
func TestWriterRefusesBadStores(t *testing.T) {
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged.db")
	var runs []storedRun
	for range 300 {
		runs = append(runs, storedRun{target: "host=db1 dbname=bench", version: "16.4", tps: 1000, p99: 2,
			labels: map[string]string{"note": strings.Repeat("x", 200)}})
	}
	seedStore(t, damaged, runs...)
	data, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	mid := len(data) / page / 2 * page
	for i := range page {
		data[mid+i] = byte(i*7 + 13)
	}
	if err := os.WriteFile(damaged, data, 0o600); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte(strings.Repeat("my notes\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(notes, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"damaged page", damaged, []string{damaged + " is damaged", ".recover", "or pass --results with another file"}},
		{"not a store", notes, []string{notes + " is not a pgbakeoff results store (not a SQLite database)", "nothing was changed", "--results"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fileState(t, tc.path)
			code, out, errOut := run(t, "run", "tpcb", "--clients", "1", "--duration", "1s", "--results", tc.path, "--dsn", dsn)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			last := lines[len(lines)-1]
			if code != cli.ExitError || !strings.HasPrefix(last, "pgbakeoff: ") || strings.Contains(errOut, "goroutine") {
				t.Errorf("exit %d, stderr:\n%s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(last, w) {
					t.Errorf("error %q does not say %q", last, w)
				}
			}
			if strings.Contains(out+errOut, "tps") {
				t.Errorf("the run measured before refusing the store:\n%s%s", out, errOut)
			}
			if after := fileState(t, tc.path); after != before {
				t.Errorf("the file changed: %s -> %s", before, after)
			}
		})
	}

	// Reading the damaged store says it is damaged before anything else, and changes nothing.
	before := fileState(t, damaged)
	_, _, errOut := run(t, "runs", "--results", damaged)
	if want := "warning: results store " + damaged + " is damaged"; !strings.HasPrefix(errOut, want) {
		t.Errorf("runs on a damaged store: stderr %q, want it to start with %q", errOut, want)
	}
	if after := fileState(t, damaged); after != before {
		t.Errorf("runs changed the damaged store: %s -> %s", before, after)
	}
}
