package faults_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// TestKilledDuringStudy: pgbakeoff is killed with SIGKILL in the middle of a
// study's second run. The results store passes SQLite's integrity check and holds
// the first run and the second's finished intervals; running the study again makes
// the rest.
func TestKilledDuringStudy(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	file := filepath.Join(dir, "killed.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: killed
targets: [{name: here, dsn: %q}]
workloads: [{kind: tpcb, load: {scale: 1}, dataset: keep}]
matrix: {clients: [1], duration: 6s, repeat: 3}
`, dsn))
	seen := killChild(t, []string{"study", "run", file, "--results", results, "--progress", "0"},
		func(line string) bool { return strings.HasPrefix(line, "[2/3]") },
		// Into the second run's window, once its first interval is stored, and well
		// before its end.
		func() bool {
			st, err := store.OpenReadOnly(t.Context(), results)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			d, err := st.Run(t.Context(), 2)
			return err == nil && len(d.Intervals) > 0
		})
	if !strings.Contains(seen, "[2/3]") {
		t.Fatalf("the child never reached the second run:\n%s", seen)
	}

	db, err := sql.Open("sqlite", results)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity check after SIGKILL: %q, %v", check, err)
	}
	var runs, intervals int
	if err := db.QueryRow("select count(*) from runs").Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("select count(*) from intervals where run_id = (select max(id) from runs)").Scan(&intervals); err != nil {
		t.Fatal(err)
	}
	// The killed run recorded the process that wrote it.
	var pid int
	var host string
	if err := db.QueryRow("select pid, host from runs where id = 2").Scan(&pid, &host); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if runs != 2 || intervals == 0 {
		t.Errorf("after SIGKILL the store has %d runs and %d intervals of the last; want 2 runs and the killed one's finished intervals", runs, intervals)
	}
	if me, _ := os.Hostname(); pid <= 0 || pid == os.Getpid() || host != me {
		t.Errorf("the killed run was written by pid %d on %q; want the child's pid on %q", pid, host, me)
	}
	st := clitest.StudyRuns(t, results, "killed")
	if st["here/tpcb/c1/r1"].Status != store.StatusCompleted || st["here/tpcb/c1/r2"].Status == store.StatusCompleted {
		t.Errorf("study state after SIGKILL: %+v", st)
	}

	// Readers show the killed run as interrupted and say why; the next writer marks it so.
	gone := fmt.Sprintf("warning: run 2 was left running by a process that is gone (pid %d on host %s): ", pid, host)
	code, list, errOut := run(t, "runs", "--results", results)
	if code != 0 || !regexp.MustCompile(`(?m)^\s*2\s.*\sinterrupted\s`).MatchString(list) || !strings.Contains(errOut, gone+"shown as interrupted") {
		t.Errorf("runs after SIGKILL: exit %d, want run 2 shown as interrupted with %q\n%s%s", code, gone, list, errOut)
	}
	code, again, errOut := run(t, "study", "run", file, "--results", results, "--progress", "0")
	if code != 0 || !strings.Contains(again, "1 of 3 runs were made before") {
		t.Errorf("resumed study: exit %d\n%s%s", code, again, errOut)
	}
	if !strings.Contains(errOut, gone+"marked interrupted") {
		t.Errorf("resumed study did not say it marked run 2 interrupted:\n%s", errOut)
	}
	if r := storedRun2(t, results); r.Status != store.StatusInterrupted || r.Ended.IsZero() {
		t.Errorf("run 2 after the study resumed: status %s, ended %v; want interrupted with an end", r.Status, r.Ended)
	}
	for key, r := range clitest.StudyRuns(t, results, "killed") {
		if r.Status != store.StatusCompleted {
			t.Errorf("%s: %s after resuming", key, r.Status)
		}
	}
}

// storedRun2 reads run 2 from the store without changing it.
func storedRun2(t *testing.T, results string) *store.RunDetail {
	t.Helper()
	st, err := store.OpenReadOnly(t.Context(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.Run(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestKilledDuringStudyLoad: pgbakeoff SIGKILLed while a study loads its data; the
// study run again resumes the load instead of starting it over, and finishes.
func TestKilledDuringStudyLoad(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	file := filepath.Join(dir, "killed.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: killedload
targets: [{name: here, dsn: %q}]
workloads: [{kind: tpcb, load: {scale: 40}, dataset: keep}]
matrix: {clients: [1], duration: 1s, repeat: 1}
`, dsn))
	copying := "select count(*) > 0 from pg_stat_activity where datname like 'pgbakeoff_killedload_%' and state = 'active' and query like 'COPY pgbench_accounts%'"
	seen := killChild(t, []string{"study", "run", file, "--results", results, "--progress", "0"},
		func(line string) bool { return strings.Contains(line, "loading TPC-B scale 40 into database") },
		func() bool { return pgtest.Query(t, dsn, copying) == "t" }) // into the copy
	if !strings.Contains(seen, "loading TPC-B") {
		t.Fatalf("the child never started loading:\n%s", seen)
	}
	code, again, errOut := run(t, "study", "run", file, "--results", results, "--progress", "0")
	if code != 0 || !strings.Contains(again, "did not finish (done: ") || !strings.Contains(again, "resuming it") {
		t.Fatalf("study after SIGKILL during its load: exit %d, want the load resumed\n%s%s", code, again, errOut)
	}
	for key, r := range clitest.StudyRuns(t, results, "killedload") {
		if r.Status != store.StatusCompleted {
			t.Errorf("%s: %s after resuming", key, r.Status)
		}
	}
	db := pgtest.Query(t, dsn, "select datname from pg_database where datname like 'pgbakeoff_killedload_%' and datname not like '%_run' limit 1")
	if got := pgtest.Query(t, dsn+" dbname="+db, "select count(*) from pgbench_accounts"); got != "4000000" {
		t.Errorf("accounts after the resumed load: %s, want 4000000", got)
	}
}

// killChild runs pgbakeoff with args in a child process, reads its output until a
// line satisfies reached, waits until ready says yes (asked every 20 ms, for up to
// a minute) and kills it with SIGKILL; it returns what the child printed.
func killChild(t *testing.T, args []string, reached func(line string) bool, ready func() bool) string {
	t.Helper()
	cmd, sc := clitest.Start(t, args)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // when the test fails first
	var seen strings.Builder
	found := false
	for !found && sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		found = reached(sc.Text())
	}
	for deadline := time.Now().Add(time.Minute); found && !ready(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child was not where it was to be killed a minute after its line; it printed:\n%s", seen.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	return seen.String()
}

// TestStudyRunsOnce: a second `study run` of a study that is running against the
// same results store refuses to start, naming the first; once the first is gone
// (killed, its lock left behind), the study runs again.
func TestStudyRunsOnce(t *testing.T) {
	pgtest.Long(t)
	dir := t.TempDir()
	dsn := pgtest.NewDatabase(t)
	results := filepath.Join(dir, "r.db")
	file := filepath.Join(dir, "once.yaml")
	clitest.WriteFile(t, file, fmt.Sprintf(`name: once
targets: [{name: here, dsn: %q}]
workloads: [{kind: tpcb, load: {scale: 1}, run: {script: select-only}}]
matrix: {clients: [1], duration: 30s, repeat: 1}
`, dsn))
	cmd, sc := clitest.Start(t, []string{"study", "run", file, "--results", results, "--progress", "0"})
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for sc.Scan() && !strings.Contains(sc.Text(), "[1/1] ") {
	}
	code, again, errOut := run(t, "study", "run", file, "--results", results, "--progress", "0")
	want := fmt.Sprintf("study once is already running against %s (pid %d on ", results, cmd.Process.Pid)
	if code == 0 || !strings.Contains(errOut, want) || strings.Contains(again, "loading") {
		t.Errorf("a second study run: exit %d, want a refusal saying %q\n%s%s", code, want, again, errOut)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	clitest.WriteFile(t, file, strings.Replace(readFileT(t, file), "duration: 30s", "duration: 1s", 1))
	if code, again, errOut := run(t, "study", "run", file, "--results", results, "--progress", "0"); code != 0 || !regexp.MustCompile(`(?m)^  run \d+: `).MatchString(again) {
		t.Errorf("the study after its runner was killed: exit %d\n%s%s", code, again, errOut)
	}
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
