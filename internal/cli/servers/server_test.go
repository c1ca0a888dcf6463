package servers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// serversDir is a servers directory of the test's own, reachable by the user
// PostgreSQL runs as when the tests run as root.
func serversDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "servers")
}

// TestServerLeftovers: a failed start leaves nothing; a data directory without
// a registry entry, as a study leaves, is listed with its size and pruned,
// while a registered server stays until stop --remove.
func TestServerLeftovers(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	servers := serversDir(t)
	major := fmt.Sprint(pgtest.Server(t).Major)
	sd := []string{"--servers-dir", servers}

	code, out, errOut := run(t, append([]string{"server", "start", "--name", "bad", "--version", major, "--set", "shared_buffers=lots"}, sd...)...)
	if code != 1 || !strings.Contains(errOut, "shared_buffers") {
		t.Fatalf("start with shared_buffers=lots: exit %d, want 1 and an error naming the setting\n%s%s", code, out, errOut)
	}
	if left, _ := filepath.Glob(filepath.Join(servers, "*")); len(left) != 0 {
		t.Errorf("the failed start left %q", left)
	}

	code, out, errOut = run(t, append([]string{"server", "start", "--name", "kept", "--version", major}, sd...)...)
	if code != 0 {
		t.Fatalf("start kept: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { run(t, append([]string{"server", "stop", "kept", "--remove"}, sd...)...) })
	old, err := localpg.Start(context.Background(), localpg.Options{Name: "study-old-a", Version: major, BaseDir: servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	code, out, errOut = run(t, append([]string{"server", "list"}, sd...)...)
	if code != 0 {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	for _, re := range []string{
		`(?m)^kept\s+` + major + `\.\d+\s+running \(pid \d+\)\s+primary\s+-\s+\d+\s+\d+\.\d MB\s+host=`,
		`(?m)^study-old-a\s+` + major + `\s+leftover, stopped\s+-\s+-\s+-\s+\d+\.\d MB\s+-$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("list has no line matching %s:\n%s", re, out)
		}
	}
	if !strings.Contains(errOut, "server prune") {
		t.Errorf("list does not point to server prune: %q", errOut)
	}

	code, out, errOut = run(t, append([]string{"server", "prune"}, sd...)...)
	if code != 0 {
		t.Fatalf("prune: exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^removed study-old-a \(leftover, stopped, \d+\.\d MB\): `+regexp.QuoteMeta(filepath.Join(servers, "study-old-a"))+`$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^freed \d+\.\d MB: removed 1 server directory from `).MatchString(out) || strings.Contains(out, "kept") {
		t.Errorf("prune output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(servers, "study-old-a")); !os.IsNotExist(err) {
		t.Errorf("study-old-a after prune: %v, want it gone", err)
	}
	if _, err := os.Stat(filepath.Join(servers, "kept", "data", "PG_VERSION")); err != nil {
		t.Errorf("prune removed the registered server: %v", err)
	}

	code, out, errOut = run(t, append([]string{"server", "stop", "kept", "--remove"}, sd...)...)
	if code != 0 || !strings.Contains(out, "server kept stopped and removed") {
		t.Errorf("stop kept --remove: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, append([]string{"server", "prune"}, sd...)...)
	if code != 0 || !strings.Contains(out, "freed 0 bytes: removed 0 server directories") {
		t.Errorf("prune of nothing: exit %d\n%s", code, out)
	}
	code, _, errOut = run(t, append([]string{"server", "stop", "kept"}, sd...)...)
	if code != 1 || !strings.Contains(errOut, `no server named "kept": no servers are registered or left in `+servers) {
		t.Errorf("stop of a removed server: exit %d, stderr %q", code, errOut)
	}
}

// TestStudyRemovesServers: the local servers of a study that made every run are
// stopped and their data removed; with --keep-servers they keep running, are
// listed, and server stop --remove removes them.
func TestStudyRemovesServers(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	servers := serversDir(t)
	dir := filepath.Dir(servers)
	file := filepath.Join(dir, "tiny.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: tiny
targets: [{name: here, local: {version: "%d"}}]
workloads: [{kind: tpcb, load: {scale: 1}, run: {script: select-only}}]
matrix: {clients: [1], warmup: 0s, duration: 1s, repeat: 1}
`, pgtest.Server(t).Major))
	args := []string{"study", "run", file, "--results", filepath.Join(dir, "r.db"), "--servers-dir", servers, "--progress", "0"}

	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("study: exit %d\n%s%s", code, out, errOut)
	}
	if left, _ := filepath.Glob(filepath.Join(servers, "*")); len(left) != 0 {
		t.Errorf("the finished study left %q", left)
	}

	code, out, errOut = run(t, append(args, "--restart", "--keep-servers")...)
	if code != 0 {
		t.Fatalf("study --keep-servers: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { run(t, "server", "stop", "study-tiny-here", "--remove", "--servers-dir", servers) })
	code, out, errOut = run(t, "server", "list", "--servers-dir", servers)
	if code != 0 || !regexp.MustCompile(`(?m)^study-tiny-here\s+\d+\s+running, leftover \(pid \d+\)\s+primary\s+-\s+\d+\s+\d+\.\d MB\s+host=`).MatchString(out) {
		t.Errorf("list after --keep-servers: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "server", "stop", "study-tiny-here", "--remove", "--servers-dir", servers)
	if code != 0 || !strings.Contains(out, "server study-tiny-here stopped and removed") {
		t.Errorf("stop --remove of the study's server: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(servers, "study-tiny-here")); !os.IsNotExist(err) {
		t.Errorf("the study's server directory after stop --remove: %v, want it gone", err)
	}
}

// TestServerStandbys: server start --standbys starts a primary and a standby
// and prints a DSN naming both that reaches the primary; server list shows
// their roles and the standby's lag; server stop stops both.
func TestServerStandbys(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	servers := serversDir(t)
	major := fmt.Sprint(pgtest.Server(t).Major)
	sd := []string{"--servers-dir", servers}
	code, out, errOut := run(t, append([]string{"server", "start", "--name", "ha", "--version", major, "--standbys", "1", "--synchronous", "remote_apply"}, sd...)...)
	if code != 0 {
		t.Fatalf("start: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { run(t, append([]string{"server", "stop", "ha", "--remove"}, sd...)...) })
	dsn := strings.TrimSpace(out)
	if !regexp.MustCompile(`^host=[^ ]+,[^ ]+ port=\d+,\d+ .*target_session_attrs=read-write$`).MatchString(dsn) {
		t.Errorf("start printed %q, want a DSN naming two hosts with target_session_attrs=read-write", dsn)
	}
	if got := pgtest.Query(t, dsn, "select pg_is_in_recovery()::text || ' ' || current_setting('synchronous_commit')"); got != "false remote_apply" {
		t.Errorf("the DSN reached a server with recovery, synchronous_commit = %q; want the primary's false remote_apply", got)
	}
	primary := regexp.MustCompile(`(?m)^ha\s+` + major + `\.\d+\s+running \(pid \d+\)\s+primary\s+-\s+\d+\s`)
	standby := regexp.MustCompile(`(?m)^ha\.1\s+` + major + `\.\d+\s+running \(pid \d+\)\s+standby\s+\d+(\.\d)? (bytes|kB|MB), \d+(\.\d+)?m?s\s+\d+\s`)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		code, out, errOut = run(t, append([]string{"server", "list"}, sd...)...)
		if code == 0 && primary.MatchString(out) && standby.MatchString(out) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("list: exit %d, want ha as primary and ha.1 as a streaming standby:\n%s%s", code, out, errOut)
		}
	}
	code, out, errOut = run(t, append([]string{"server", "stop", "ha"}, sd...)...)
	if code != 0 || strings.TrimSpace(out) != "server ha, ha.1 stopped" {
		t.Errorf("stop: exit %d\n%s%s", code, out, errOut)
	}
	_, out, _ = run(t, append([]string{"server", "list"}, sd...)...)
	if n := len(regexp.MustCompile(`(?m)^ha(\.1)?\s+\S+\s+stopped\s+-\s+-\s`).FindAllString(out, -1)); n != 2 {
		t.Errorf("list after stop shows %d stopped servers, want 2:\n%s", n, out)
	}
}

// TestServerStartStandbysErrors: a cluster the flags cannot make is refused
// in one line, with exit 2, before anything starts.
func TestServerStartStandbysErrors(t *testing.T) {
	servers := serversDir(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--synchronous", "on"}, "synchronous on needs standbys"},
		{[]string{"--standbys", "-1"}, "standbys -1: want 0 to 8"},
		{[]string{"--standbys", "1", "--version", "11"}, "standbys need PostgreSQL 12 or later, not 11"},
		{[]string{"--standbys", "1", "--synchronous", "sometimes"}, `synchronous "sometimes": want off, on or remote_apply`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := run(t, append([]string{"server", "start", "--name", "bad", "--servers-dir", servers}, tt.args...)...)
			if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q, want 2 and one line with %q\n%s", code, errOut, tt.want, out)
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(servers, "*")); len(left) != 0 {
		t.Errorf("refused starts left %q", left)
	}
}

// TestStudyStandbys: a study's local target with a standby runs on a cluster
// whose servers are listed as primary and standby and removed together.
func TestStudyStandbys(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	servers := serversDir(t)
	dir := filepath.Dir(servers)
	file := filepath.Join(dir, "ha.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: ha
targets: [{name: here, local: {version: "%d", standbys: 1, synchronous: on}}]
workloads: [{kind: tpcb, load: {scale: 1}, run: {script: tpcb-like}}]
matrix: {clients: [1], warmup: 0s, duration: 1s, repeat: 1}
`, pgtest.Server(t).Major))
	code, out, errOut := run(t, "study", "run", file, "--results", filepath.Join(dir, "r.db"), "--servers-dir", servers, "--progress", "0", "--keep-servers")
	if code != 0 {
		t.Fatalf("study: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { run(t, "server", "stop", "study-ha-here", "--remove", "--servers-dir", servers) })
	if !strings.Contains(out+errOut, "local, 1 standby (synchronous on)") {
		t.Errorf("preflight does not describe the target as a local server with a synchronous standby:\n%s%s", out, errOut)
	}
	code, out, errOut = run(t, "server", "list", "--servers-dir", servers)
	for _, re := range []string{`(?m)^study-ha-here\s+\S+\s+running, leftover \(pid \d+\)\s+primary\s`, `(?m)^study-ha-here\.1\s+\S+\s+running, leftover \(pid \d+\)\s+standby\s`} {
		if code != 0 || !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("list after --keep-servers has no line matching %s: exit %d\n%s%s", re, code, out, errOut)
		}
	}
	code, out, errOut = run(t, "server", "stop", "study-ha-here", "--remove", "--servers-dir", servers)
	if code != 0 || !strings.Contains(out, "server study-ha-here, study-ha-here.1 stopped and removed") {
		t.Errorf("stop --remove of the study's servers: exit %d\n%s%s", code, out, errOut)
	}
	if left, _ := filepath.Glob(filepath.Join(servers, "*")); len(left) != 0 {
		t.Errorf("stop --remove left %q", left)
	}
}

// TestRunFaultOnLocalCluster: run --fault fails over the cluster a DSN of
// `server start --standbys 1` names; the summary has the fault, the promotion
// and the recovery, and a failover on a server without a standby is refused
// before the run starts. The window outlasts a promotion of five seconds,
// which happens now and then.
func TestRunFaultOnLocalCluster(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	servers := serversDir(t)
	major := fmt.Sprint(pgtest.Server(t).Major)
	sd := []string{"--servers-dir", servers}
	code, out, errOut := run(t, append([]string{"server", "start", "--name", "ha", "--version", major, "--standbys", "1"}, sd...)...)
	if code != 0 {
		t.Fatalf("start: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { run(t, append([]string{"server", "stop", "ha", "--remove"}, sd...)...) })
	dsn := strings.TrimSpace(out)
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", dsn); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	results := filepath.Join(t.TempDir(), "r.db")
	code, out, errOut = run(t, append([]string{"run", "tpcb", "--clients", "2", "--duration", "12s", "--fault", "at=2s,kind=failover",
		"--dsn", dsn, "--results", results}, sd...)...)
	if code != 0 || !strings.Contains(out, "fault 1: failover at 2.0 s") || !strings.Contains(out, "(a standby promoted after") ||
		!strings.Contains(out, "ledger: ") || !strings.Contains(errOut, "promoted in place of ha") {
		t.Errorf("run with a failover: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "server", "start", "--name", "alone", "--version", major, "--servers-dir", servers)
	if code != 0 {
		t.Fatalf("start: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { run(t, "server", "stop", "alone", "--remove", "--servers-dir", servers) })
	code, _, errOut = run(t, "run", "tpcb", "--duration", "5s", "--fault", "at=2s,kind=failover", "--dsn", strings.TrimSpace(out), "--servers-dir", servers)
	if code != 2 || !strings.Contains(errOut, "no standby to promote") {
		t.Errorf("a failover without a standby: exit %d, want 2\n%s", code, errOut)
	}
}

// TestStudyFailovers: a study of two local targets with a standby each, one
// synchronous and one not, fails each over in its run; study status shows the
// recovery, and the HTML report has its tables. The runs with faults are kept
// out of the throughput comparison.
func TestStudyFailovers(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	servers := serversDir(t)
	dir := filepath.Dir(servers)
	file := filepath.Join(dir, "failovers.yaml")
	major := pgtest.Server(t).Major
	clitest.WriteFile(t, file, fmt.Sprintf(`name: failovers
targets:
  - {name: sync, local: {version: "%d", standbys: 1, synchronous: on}}
  - {name: async, local: {version: "%d", standbys: 1}}
workloads: [{kind: tpcb, load: {scale: 1}, fault: {at: 2s, kind: failover}}]
matrix: {clients: [2], warmup: 0s, duration: 12s, repeat: 1}
`, major, major))
	results := filepath.Join(dir, "r.db")
	code, out, errOut := run(t, "study", "run", file, "--results", results, "--servers-dir", servers, "--progress", "0")
	if code != 0 || strings.Count(out, "INVALID (fault)") < 2 && strings.Count(out+errOut, "promoted in place of") < 2 {
		t.Fatalf("study: exit %d\n%s%s", code, out, errOut)
	}
	html := filepath.Join(dir, "report.html")
	if code, out, errOut := run(t, "report", "--study", "failovers", "-o", html, "--results", results); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`id="recovery"`, `<td data-label="fault">failover at 2`, "What each target",
		`scope="row">sync</th>`, `scope="row">async</th>`, `<td class="num" data-label="lost commits">0</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
