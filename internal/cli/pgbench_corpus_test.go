package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestPgbenchCorpus runs the pgbench script corpus (cases drawn from PostgreSQL's
// own pgbench tests, with a runner that calls a tool with pgbench's command line
// and checks exit codes and what the scripts left in the database) against
// `pgbakeoff pgbench`, and against pgbench when it is installed. The corpus lives beside the repository
// (../shared/pgbench-scripts) or where PGBAKEOFF_PGBENCH_CORPUS says.
func TestPgbenchCorpus(t *testing.T) {
	pgtest.Long(t)
	dir := os.Getenv("PGBAKEOFF_PGBENCH_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "pgbench-scripts")
	}
	runner, err := filepath.Abs(filepath.Join(dir, "run-case.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(runner); err != nil {
		t.Skipf("no pgbench script corpus at %s (set PGBAKEOFF_PGBENCH_CORPUS)", dir)
	}
	for _, tool := range []string{"psql", "perl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the corpus runner needs %s", tool)
		}
	}
	work := t.TempDir()
	bin := filepath.Join(work, "pgbakeoff")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pgbakeoff")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dsn := pgtest.NewDatabase(t)
	tools := []string{bin + " pgbench --results " + filepath.Join(work, "r.db")}
	// The same cases under pgbench itself, where it is installed: both must pass
	// every case pgbench's version runs.
	if p, err := exec.LookPath("pgbench"); err == nil {
		tools = append(tools, p)
	}
	for _, tool := range tools {
		cmd := exec.CommandContext(ctx, "bash", runner, "--tool", tool, "--semantic", "--dsn", dsn)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), " 0 failed") {
			t.Fatalf("corpus with %s: %v\n%s", tool, err, out)
		}
		t.Logf("%s: %s", tool, strings.TrimSpace(string(out[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:])))
	}
}
