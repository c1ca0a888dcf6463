package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// planted is a password that must never be seen again once given.
const planted = "Pl4nted-S3cret-7q"

// TestSecretsNeverShown plants a password in DSNs and in a study's password
// source, makes runs that succeed and runs that fail, a study, reports and
// exports, and then searches everything pgbakeoff wrote for it: standard output and
// error, the results store with its companion files, the reports.
func TestSecretsNeverShown(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "drop role if exists secretuser; create role secretuser login createdb password '"+planted+"'")
	pgtest.Query(t, dsn, "grant all on schema public to secretuser")
	t.Cleanup(func() {
		pgtest.Query(t, pgtest.DSN(t), "select 1") // the server is still there
	})
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	withUser := strings.Replace(dsn, "user=postgres", "user=secretuser", 1)
	if withUser == dsn {
		t.Fatalf("cannot change the user in %q", dsn)
	}
	secret := withUser + " password=" + planted
	var seen strings.Builder
	record := func(args ...string) int {
		code, out, errOut := run(t, args...)
		// The command line itself holds the password; only what pgbakeoff printed is searched.
		fmt.Fprintf(&seen, "%s: %s\n%s\n", args[0], out, errOut)
		return code
	}
	if code := record("init", "tpcb", "--scale", "1", "--dsn", secret); code != 0 {
		t.Fatalf("init failed:\n%s", seen.String())
	}
	if code := record("run", "tpcb", "--clients", "2", "--duration", "1s", "--json", "--label", "secret=test", "--results", results, "--dsn", secret); code != 0 {
		t.Fatalf("run failed:\n%s", seen.String())
	}
	// Failures: a database that does not exist, a server that is not there.
	record("run", "tpcb", "--duration", "1s", "--results", results, "--dsn", strings.Replace(secret, "dbname=", "dbname=nosuchdb_", 1))
	record("run", "tpcb", "--duration", "1s", "--results", results, "--dsn", "host=127.0.0.1 port=1 user=x password="+planted)
	record("init", "tpcb", "--dsn", "postgres://x:"+planted+"@127.0.0.1:1/db")
	record("run", "tpcb", "--dsn", "postgres://x:"+planted+"@[::1:bad/db")
	// A scheme in capitals (which libpq rejects too), a mistyped key, and a
	// --results that reads as a URL: refused without the password, and no file
	// named after it is made.
	record("run", "tpcb", "--dsn", "POSTGRES://x:"+planted+"@127.0.0.1:1/db")
	record("run", "tpcb", "--dsn", "host=127.0.0.1 port=1 passwrd="+planted)

	// A study whose password comes from the environment.
	t.Setenv("PGBAKEOFF_TEST_SECRET", planted)
	study := filepath.Join(dir, "secret.yaml")
	clitest.WriteFile(t, study, fmt.Sprintf(`name: secret
targets:
  - name: here
    dsn: %q
    password: {env: PGBAKEOFF_TEST_SECRET}
workloads:
  - kind: tpcb
    load: {scale: 1}
matrix: {clients: [1], duration: 1s, repeat: 1}
`, withUser))
	if code := record("study", "run", study, "--results", results, "--progress", "0"); code != 0 {
		t.Fatalf("study failed:\n%s", seen.String())
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	badResults := "POSTGRES://x:" + planted + "@127.0.0.1:1/db"
	for _, args := range [][]string{{"run", "tpcb", "--duration", "1s", "--dsn", secret}, {"runs"}, {"study", "run", "secret.yaml"}} {
		code, out, errOut := run(t, append(args, "--results", badResults)...)
		fmt.Fprintf(&seen, "%s: %s\n%s\n", args[0], out, errOut)
		if code == 0 || !strings.Contains(errOut, `a URL of scheme "POSTGRES" is neither a file nor a PostgreSQL database`) {
			t.Errorf("%s with --results POSTGRES://...: exit %d, %q; want it refused as neither a file nor a database", args[0], code, errOut)
		}
	}
	t.Chdir(wd)
	_ = filepath.WalkDir(dir, func(path string, _ os.DirEntry, _ error) error {
		if strings.Contains(path, planted) {
			t.Errorf("a file is named with the password: %s", path)
		}
		return nil
	})
	html, md := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
	record("report", "--study", "secret", "-o", html, "--results", results)
	record("report", "--study", "secret", "-o", md, "--results", results)
	record("export", "--study", "secret", "--format", "json", "--results", results)
	record("export", "--label", "secret=test", "--format", "csv", "--results", results)
	record("runs", "--results", results)
	record("show", "1", "--json", "--results", results)

	if strings.Contains(seen.String(), planted) {
		t.Errorf("the password appears in pgbakeoff's output:\n%s", seen.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	charts, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	for _, f := range append(files, charts...) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a directory
		}
		if strings.Contains(string(b), planted) {
			t.Errorf("the password is in %s", f)
		}
	}
	if !strings.Contains(seen.String(), "may not CHECKPOINT") {
		t.Errorf("a study as a role without pg_checkpoint should warn that runs start without a checkpoint:\n%s", seen.String())
	}
}
