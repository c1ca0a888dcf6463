package cli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestFailIf: gates judged on real runs. Those met exit 0 and say so; one missed
// exits with ExitGate, naming the gate and the figure measured, and the run is
// stored all the same; with --json the verdicts go to stderr, stdout keeping the
// JSON object alone; a malformed gate is refused before anything runs.
func TestFailIf(t *testing.T) {
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	results := filepath.Join(t.TempDir(), "r.db")
	args := []string{"run", "tpcb", "--clients", "2", "--duration", "1s", "--dsn", dsn, "--results", results}
	code, out, errOut := run(t, append(args, "--fail-if", "tps>1", "--fail-if", "errors<1%")...)
	if code != cli.ExitOK || !strings.Contains(out, "gate tps>1: passed, tps was ") || !strings.Contains(out, "gate errors<1%: passed") {
		t.Errorf("gates met: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, append(args, "--json", "--fail-if", "p99<1us", "--fail-if", "tps>1")...)
	if code != cli.ExitGate || !strings.Contains(errOut, "gate p99<1us: FAILED, p99 was ") || !strings.Contains(errOut, "failed 1 of 2 of its gates") ||
		!strings.HasPrefix(out, "{") || strings.Contains(out, "gate ") {
		t.Errorf("a gate missed: exit %d, want %d\n%s%s", code, cli.ExitGate, out, errOut)
	}
	if code, out, _ := run(t, "runs", "--results", results); code != 0 || strings.Count(out, "tpcb tpcb-like") != 2 {
		t.Errorf("the run that failed its gate is not stored:\n%s", out)
	}
	code, _, errOut = run(t, append(args, "--fail-if", "p99<20")...)
	if code != cli.ExitUsage || !strings.Contains(errOut, `--fail-if "p99<20": the bound "20" is not a latency such as 20ms`) {
		t.Errorf("a malformed gate: exit %d\n%s", code, errOut)
	}
}

// TestCompareFailIfSlower: compare --fail-if-slower fails against a server made
// slower on purpose (each transaction waits 3 ms in a trigger), and passes
// against one that is not, saying so either way.
func TestCompareFailIfSlower(t *testing.T) {
	pgtest.Long(t)
	fast, slow := clitest.Loaded(t, "tpcb", "--scale", "1"), clitest.Loaded(t, "tpcb", "--scale", "1")
	pgtest.Query(t, slow, `create function pause() returns trigger language plpgsql as $$ begin perform pg_sleep(0.003); return new; end $$;
		create trigger pause before insert on pgbench_history for each row execute function pause()`)
	results := filepath.Join(t.TempDir(), "r.db")
	for _, side := range []struct{ label, dsn string }{{"before", fast}, {"after", slow}, {"again", fast}, {"before", fast}, {"after", slow}, {"again", fast}} {
		if code, out, errOut := run(t, "run", "tpcb", "--clients", "2", "--duration", "1s", "--label", "build="+side.label, "--dsn", side.dsn, "--results", results); code != 0 {
			t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
		}
	}
	code, out, errOut := run(t, "compare", "--label", "build=before", "--label", "build=after", "--baseline", "before", "--fail-if-slower", "5%", "--results", results)
	if code != cli.ExitGate || !strings.Contains(out, "gate slower<5%: FAILED, after against before") || !strings.Contains(out, "beyond the noise") {
		t.Errorf("a slower server: exit %d, want %d\n%s%s", code, cli.ExitGate, out, errOut)
	}
	code, out, errOut = run(t, "compare", "--label", "build=before", "--label", "build=again", "--baseline", "before", "--fail-if-slower", "50%", "--results", results)
	if code != cli.ExitOK || !strings.Contains(out, "gate slower<50%: passed, again against before") {
		t.Errorf("the same server: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "compare", "--label", "build=before", "--fail-if-slower", "lots", "--results", results); code != cli.ExitUsage || !strings.Contains(errOut, "--fail-if-slower") {
		t.Errorf("a malformed limit: exit %d\n%s", code, errOut)
	}
}

// TestFailIfPgbenchAndStudy: the pgbench drop-in and a study take gates too: the
// drop-in exits 3 with the verdict beside pgbakeoff's summary on stderr, and a
// study makes every run, judges each, and exits 3 at the end.
func TestFailIfPgbenchAndStudy(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	results := filepath.Join(t.TempDir(), "r.db")
	code, out, errOut := run(t, "pgbench", "-n", "-c", "2", "-T", "1", "--results", results, "--fail-if", "tps<1", dsn)
	if code != cli.ExitGate || !strings.Contains(errOut, "gate tps<1: FAILED, tps was ") || !strings.Contains(out, "tps = ") {
		t.Errorf("pgbench: exit %d, want %d\n%s%s", code, cli.ExitGate, out, errOut)
	}
	file := writeTemp(t, "name: gated\ntargets: [{name: a, dsn: \""+dsn+"\"}]\n"+
		"workloads: [{kind: tpcb, database: "+dbName(t, dsn)+", dataset: keep}]\nmatrix: {clients: [1, 2], duration: 1s, repeat: 1}\n")
	code, out, errOut = run(t, "study", "run", file, "--results", results, "--fail-if", "p99<1us")
	if code != cli.ExitGate || strings.Count(out, "gate p99<1us: FAILED") != 2 || !strings.Contains(errOut, "2 runs failed a --fail-if gate") {
		t.Errorf("study: exit %d, want %d\n%s%s", code, cli.ExitGate, out, errOut)
	}
}

// dbName is the database a key=value DSN names: its last dbname, as libpq
// takes it.
func dbName(t *testing.T, dsn string) string {
	t.Helper()
	m := regexp.MustCompile(`dbname=(\S+)`).FindAllStringSubmatch(dsn, -1)
	if m == nil {
		t.Fatalf("no dbname in %q", dsn)
	}
	return m[len(m)-1][1]
}
