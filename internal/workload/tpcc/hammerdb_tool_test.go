package tpcc_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// HammerDBHomeEnv names a HammerDB 4.12 directory, the one holding hammerdbcli, for
// the tests that run HammerDB itself; Tcl must find the Pgtcl library, through
// TCLLIBPATH for one built outside Tcl's own directories.
const HammerDBHomeEnv = "HDB_HOME"

// hammerdb runs HammerDB's command line on a database of the test server.
type hammerdb struct {
	home, tmp string
	// settings are the diset lines that every script starts with: the server,
	// its superuser, and the database and its owner.
	settings string
}

// newHammerDB returns a HammerDB for an empty database of the test server, which
// HammerDB's builder then owns through a role of its own, and the database's DSN.
// The test is skipped when HammerDB is not installed.
func newHammerDB(t *testing.T) (*hammerdb, string) {
	t.Helper()
	home := os.Getenv(HammerDBHomeEnv)
	if home == "" {
		t.Skipf("%s is not set: set it to a HammerDB 4.12 directory (and TCLLIBPATH to where Pgtcl is) to run HammerDB itself", HammerDBHomeEnv)
	}
	if _, err := os.Stat(filepath.Join(home, "hammerdbcli")); err != nil {
		t.Skipf("%s=%s has no hammerdbcli: %v", HammerDBHomeEnv, home, err)
	}
	if _, err := exec.LookPath("tclsh"); err != nil {
		t.Skip("tclsh, which runs HammerDB, is not installed")
	}
	if testing.Short() {
		t.Skip("building a warehouse with HammerDB takes a minute")
	}
	admin := pgtest.DSN(t)
	if pgtest.Query(t, admin, "select rolsuper from pg_roles where rolname = current_user") != "t" {
		t.Skip("HammerDB's builder needs a superuser, and the test server's user is not one")
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	role := "hammerdb_" + hex.EncodeToString(suffix)
	pgtest.Query(t, admin, "create role "+role+" login password 'hammerdb'")
	// Cleanups run last first: the role goes after the database it owns.
	t.Cleanup(func() { pgtest.Query(t, admin, "drop role "+role) })
	dsn := pgtest.NewDatabase(t)
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// HammerDB's builder puts the password into a script as a word, which must not
	// be empty; a server that takes the test's connection without a password takes
	// it with any.
	password := cfg.Password
	if password == "" {
		password = "unused"
	}
	// Tcl takes a word in braces as it is.
	for _, v := range []string{cfg.Host, cfg.User, password, cfg.Database} {
		if strings.ContainsAny(v, "{}\\\n") {
			t.Skipf("the test server's connection settings hold a character HammerDB's script cannot: %q", v)
		}
	}
	settings := fmt.Sprintf(`dbset db pg
dbset bm TPC-C
diset connection pg_host {%s}
diset connection pg_port %d
diset connection pg_sslmode disable
diset tpcc pg_superuser {%s}
diset tpcc pg_superuserpass {%s}
diset tpcc pg_defaultdbase postgres
diset tpcc pg_user %s
diset tpcc pg_pass hammerdb
diset tpcc pg_dbase {%s}
diset tpcc pg_storedprocs false
`, cfg.Host, cfg.Port, cfg.User, password, role, cfg.Database)
	return &hammerdb{home: home, tmp: t.TempDir(), settings: settings}, dsn
}

// run runs script after the settings with hammerdbcli and returns its output.
func (h *hammerdb) run(t *testing.T, name, script string) string {
	t.Helper()
	path := filepath.Join(h.tmp, name+".tcl")
	if err := os.WriteFile(path, []byte(h.settings+script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tclsh", "hammerdbcli", "auto", path)
	cmd.Dir = h.home
	// HammerDB keeps its jobs in $TMP/hammer.DB.
	cmd.Env = append(os.Environ(), "TMP="+h.tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hammerdbcli %s: %v\n%s", name, err, out)
	}
	return string(out)
}

// build builds HammerDB's schema and data of one warehouse, with its functions.
func (h *hammerdb) build(t *testing.T) {
	t.Helper()
	out := h.run(t, "build", `diset tpcc pg_count_ware 1
diset tpcc pg_num_vu 1
diset tpcc pg_partition false
buildschema
`)
	if !strings.Contains(out, "SCHEMA COMPLETE") || !strings.Contains(out, "FINISHED SUCCESS") {
		t.Fatalf("HammerDB's build did not complete:\n%s", out)
	}
}

// timed runs HammerDB's timed driver with one virtual user for six seconds, the
// shortest test period its driver takes (it counts in steps of six seconds),
// without ramp-up. vurun waits for the virtual users only when the period is whole
// minutes, so the script waits itself, with the command line's own timer.
func (h *hammerdb) timed(t *testing.T) {
	t.Helper()
	out := h.run(t, "timed", `diset tpcc pg_driver timed
diset tpcc pg_total_iterations 10000000
diset tpcc pg_rampup 0
diset tpcc pg_duration 0.1
diset tpcc pg_allwarehouse false
diset tpcc pg_timeprofile false
diset tpcc pg_vacuum false
diset tpcc pg_keyandthink false
loadscript
vuset vu 1
vucreate
vurun
_runtimer 60
vudestroy
`)
	nopm := regexp.MustCompile(`System achieved ([\d.]+) NOPM`).FindStringSubmatch(out)
	if nopm == nil || strings.Trim(nopm[1], "0.") == "" {
		t.Fatalf("HammerDB's timed run made no new orders:\n%s", out)
	}
	t.Logf("HammerDB: %s", nopm[0])
}

// TestCheckAfterHammerDBAndPgbakeoff builds a warehouse with HammerDB 4.12, runs
// HammerDB's timed driver and pgbakeoff's run tpcc --mix hammerdb on it in turn, as
// someone comparing the two does, and checks it: it passes, saying how many customers
// each tool's Payment paid, which c_payment_cnt (counted by pgbakeoff's Payment only,
// and not read by the check) and the history rows confirm.
func TestCheckAfterHammerDBAndPgbakeoff(t *testing.T) {
	h, dsn := newHammerDB(t)
	h.build(t)
	h.timed(t)
	if code, out, errOut := clitest.Run(t, "init", "tpcc", "--procedures-only", "--dsn", dsn); code != 0 {
		t.Fatalf("init tpcc --procedures-only: exit %d\n%s%s", code, out, errOut)
	}
	results := filepath.Join(t.TempDir(), "r.db")
	for i := range 2 {
		code, out, errOut := clitest.Run(t, "run", "tpcc", "--mix", "hammerdb", "--clients", "2", "--duration", "3s",
			"--results", results, "--dsn", dsn)
		if code != 0 {
			t.Fatalf("run tpcc --mix hammerdb: exit %d\n%s%s", code, out, errOut)
		}
		if i == 0 {
			h.timed(t)
		}
	}
	code, out, errOut := clitest.Run(t, "check", "tpcc", "--dsn", dsn)
	if code != 0 || strings.Count(out, "passed")+strings.Count(out, "n/a") != 12 {
		t.Fatalf("check tpcc: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("check tpcc:\n%s", out)
	m := regexp.MustCompile(`\n  (\d+) customers paid by neither Payment since the load: .*\n` +
		`  (\d+) paid by pgbakeoff's Payment only: .*\n  (\d+) paid by HammerDB's Payment only and (\d+) by both: `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("check tpcc does not say how many customers each rule was applied to:\n%s", out)
	}
	// The customers each tool's Payment paid, from the columns each one keeps.
	want := pgtest.Query(t, dsn, `select count(*) filter (where n = 1 and c_payment_cnt = 1) || ' ' ||
	       count(*) filter (where n = c_payment_cnt and c_payment_cnt > 1) || ' ' ||
	       count(*) filter (where n > c_payment_cnt and c_payment_cnt = 1) || ' ' ||
	       count(*) filter (where n > c_payment_cnt and c_payment_cnt > 1)
	  from customer
	  join (select h_c_w_id, h_c_d_id, h_c_id, count(*) n from history group by 1, 2, 3) h
	    on (h_c_w_id, h_c_d_id, h_c_id) = (c_w_id, c_d_id, c_id)`)
	if got := strings.Join(m[1:], " "); got != want {
		t.Errorf("customers paid by neither, pgbakeoff's Payment, HammerDB's, both: %s; c_payment_cnt and history say %s\n%s", got, want, out)
	}
	for i, what := range []string{"pgbakeoff's Payment only", "HammerDB's Payment only", "both"} {
		if n, _ := strconv.Atoi(m[i+2]); n == 0 {
			t.Errorf("no customer paid by %s:\n%s", what, out)
		}
	}
}
