package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestDemo runs the README's first command at its smallest: two servers, both
// scripts at both client counts, and the comparison table at the end. Its servers
// live in their own directory, so a demo running on the machine does not collide.
func TestDemo(t *testing.T) {
	pgtest.Long(t)
	dir := t.TempDir()
	// As root the servers run as another user, who must reach their directory.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	results := filepath.Join(dir, "r.db")
	code, out, errOut := run(t, "demo", "--scale", "1", "--warmup", "0s", "--duration", "1s", "--results", results,
		"--servers-dir", filepath.Join(dir, "servers"))
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"tuned/default", "select-only", "tpcb-like"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run(t, "runs", "--results", results)
	if code != 0 || strings.Count(out, " completed ") != 8 {
		t.Errorf("runs after the demo: exit %d, want 8 completed runs:\n%s", code, out)
	}
}
