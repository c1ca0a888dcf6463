package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
)

// Environment variables that choose the server.
const (
	// DSNEnv names an existing server to use instead of starting one. Its
	// user must be allowed to create databases.
	DSNEnv = "PGBAKEOFF_TEST_DSN"
	// VersionEnv picks the PostgreSQL version of the started server, as
	// for localpg.FindBinaries; by default the newest installed one, or a
	// download of localpg.FallbackVersion.
	VersionEnv = "PGBAKEOFF_TEST_PG_VERSION"
)

// settings are the started server's settings. Turning off fsync makes
// tests faster and would make benchmark results meaningless.
func settings() []localpg.Setting {
	return []localpg.Setting{
		{Name: "fsync", Value: "off"},
		{Name: "full_page_writes", Value: "off"},
		{Name: "max_connections", Value: "200"},
	}
}

// initdbArgs skip initdb's final sync of the new data directory, about 40 MB in a
// thousand files, which takes seconds on a disk busy with other tests: a test
// server is thrown away with its test binary, and no test crashes the machine
// under it.
var initdbArgs = []string{"--no-sync"}

const serverName = "pgtest"

// shared is the test binary's server, started by the first test that asks
// for it and stopped by Run. It is the package's only state, because
// TestMain and the tests have nothing else in common.
var shared struct {
	once   sync.Once
	dsn    string
	server *localpg.Server // nil when DSNEnv is set
	dir    string          // removed after the tests
	err    error
}

// Run runs the tests and then stops the server if a test started one. Use
// it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
func Run(m *testing.M) int {
	code := m.Run()
	err := stop()
	if shared.server == nil && shared.dsn != "" { // a server started here goes whole
		err = errors.Join(dropTemplates(), err)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// DSN returns a connection string for the test server's postgres database
// as a superuser, starting the server on first use. If the server cannot be
// started the test fails.
func DSN(t testing.TB) string {
	t.Helper()
	shared.once.Do(setup)
	if shared.err != nil {
		t.Fatalf("pgtest: %v", shared.err)
	}
	return shared.dsn
}

// Server returns the local server the tests run against. Tests that need
// one, for example to read its log, are skipped when DSNEnv names a server
// elsewhere.
func Server(t testing.TB) *localpg.Server {
	t.Helper()
	DSN(t)
	if shared.server == nil {
		t.Skipf("pgtest: %s is set, so there is no local server", DSNEnv)
	}
	return shared.server
}

// Pgbench returns a pgbench to compare with: the test server's, Debian's of its
// major version, or the one on PATH. The test is skipped when there is none.
func Pgbench(t testing.TB) string {
	t.Helper()
	DSN(t)
	var paths []string
	if s := shared.server; s != nil {
		paths = append(paths, filepath.Join(s.BinDir, "pgbench"), fmt.Sprintf("/usr/lib/postgresql/%d/bin/pgbench", s.Major))
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p
	}
	t.Skip("pgbench is not installed; .ci/run installs it (Debian package postgresql)")
	return ""
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)

// NewDatabase creates an empty database for the test and returns its DSN.
// The database is dropped when the test ends, even if sessions are still
// connected to it.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return createDatabase(t, "")
}

// createDatabase creates a database for the test, empty or a copy of template,
// that is dropped when the test ends, and returns its DSN.
func createDatabase(t testing.TB, template string) string {
	t.Helper()
	dsn := DSN(t)
	name, err := dbName("t_" + t.Name())
	if err != nil {
		t.Fatalf("pgtest: name a database: %v", err)
	}
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	defer conn.Close(context.Background())
	// From PostgreSQL 15 on, a copy is written to the WAL block by block by
	// default; copying the files costs a checkpoint instead, which on the test
	// servers (fsync off) is cheap, and the loaded templates are up to 100 MB.
	var version int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	if template != "" && version >= 150000 {
		sql += " STRATEGY FILE_COPY"
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := dropDatabase(ctx, dsn, name); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return withDatabase(dsn, name)
}

// dbName is a database name made of prefix, lower case and shortened, and a
// random suffix, so that tests and test binaries sharing a server never meet.
func dbName(prefix string) (string, error) {
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	prefix = strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(prefix), "_"), "_")
	if len(prefix) > 42 {
		prefix = prefix[:42]
	}
	return prefix + "_" + hex.EncodeToString(suffix), nil
}

func dropDatabase(ctx context.Context, dsn, name string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// DROP DATABASE ... WITH (FORCE) needs PostgreSQL 13; this works on all.
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// withDatabase returns dsn, a URL or keyword/value string, pointing at
// database name.
func withDatabase(dsn, name string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			u.Path = "/" + name
			u.RawPath = ""
			return u.String()
		}
	}
	// In a keyword/value string the last occurrence of a keyword wins.
	return dsn + " dbname=" + name
}

func execSQL(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// setup finds or starts the server and checks that it answers.
func setup() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if dsn := os.Getenv(DSNEnv); dsn != "" {
		shared.dsn = dsn
		if err := execSQL(ctx, dsn, "SELECT 1"); err != nil {
			shared.err = fmt.Errorf("connect to %s from %s: %w", dsn, DSNEnv, err)
		}
		return
	}
	sweep(ctx)
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		shared.err = fmt.Errorf("create server directory: %w", err)
		return
	}
	shared.dir = dir
	// As root, PostgreSQL runs as another user, which must enter dir.
	if err := os.Chmod(dir, 0o755); err != nil {
		shared.err = fmt.Errorf("create server directory: %w", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		shared.err = fmt.Errorf("create server directory: %w", err)
		return
	}
	s, err := localpg.Start(ctx, localpg.Options{
		Name:       serverName,
		Version:    os.Getenv(VersionEnv),
		Settings:   settings(),
		InitdbArgs: initdbArgs,
		BaseDir:    dir,
		Log:        prefixWriter{},
	})
	if err != nil {
		shared.err = fmt.Errorf("start a PostgreSQL server for tests (set %s to use an existing one): %w", DSNEnv, err)
		return
	}
	shared.server = s
	shared.dsn = s.DSN()
	// Recorded so that a later test binary can stop it if this one dies
	// before Run stops it.
	if err := (localpg.Registry{Dir: dir}).Save(s); err != nil {
		shared.err = err
	}
}

// versions are the servers of other majors started by OfVersion, by major.
var versions struct {
	mu      sync.Mutex
	servers map[string]*versionServer
}

type versionServer struct {
	once   sync.Once
	server *localpg.Server
	dir    string
	err    error
}

// OfVersion returns the DSN of a server of the given PostgreSQL major version
// ("11" to "18"), started on first use from the installed binaries or a
// download into the version cache, with the settings of the shared server, and
// stopped by Run. For tests that must hold on every supported version; the
// quick tier (-short) skips them, as each version is a server of its own.
func OfVersion(t testing.TB, major string) string {
	t.Helper()
	Long(t)
	versions.mu.Lock()
	if versions.servers == nil {
		versions.servers = map[string]*versionServer{}
	}
	vs := versions.servers[major]
	if vs == nil {
		vs = &versionServer{}
		versions.servers[major] = vs
	}
	versions.mu.Unlock()
	vs.once.Do(func() { vs.server, vs.dir, vs.err = startVersion(major) })
	if vs.err != nil {
		t.Fatalf("pgtest: PostgreSQL %s: %v", major, vs.err)
	}
	return vs.server.DSN()
}

func startVersion(major string) (*localpg.Server, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, "", err
	}
	fail := func(err error) (*localpg.Server, string, error) {
		os.RemoveAll(dir)
		return nil, "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fail(err)
	}
	s, err := localpg.Start(ctx, localpg.Options{Name: serverName, Version: major, Settings: settings(), InitdbArgs: initdbArgs, BaseDir: dir, Log: prefixWriter{}})
	if err != nil {
		return fail(err)
	}
	if err := (localpg.Registry{Dir: dir}).Save(s); err != nil {
		return s, dir, err
	}
	return s, dir, nil
}

// stop stops and removes the servers started by setup and OfVersion.
func stop() error {
	versions.mu.Lock()
	defer versions.mu.Unlock()
	for _, vs := range versions.servers {
		if vs.server == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := vs.server.Stop(ctx)
		cancel()
		if err == nil {
			err = vs.server.Remove()
		}
		if err == nil {
			err = os.RemoveAll(vs.dir)
		}
		if err != nil {
			return err
		}
	}
	return stopShared()
}

// stopShared stops and removes the server started by setup.
func stopShared() error {
	if shared.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := shared.server.Stop(ctx); err != nil {
			return err
		}
	}
	if shared.dir == "" {
		return nil
	}
	if shared.server != nil {
		if err := shared.server.Remove(); err != nil {
			return err
		}
	}
	return os.RemoveAll(shared.dir)
}

// sweep stops servers left behind by test binaries that died before Run
// could stop them, such as after a test timeout.
func sweep(ctx context.Context) {
	owners, _ := filepath.Glob(filepath.Join(os.TempDir(), "pgtest-*", "owner.pid")) // pattern is well formed
	for _, owner := range owners {
		b, err := os.ReadFile(owner)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || alive(pid) {
			continue
		}
		dir := filepath.Dir(owner)
		if err := removeOrphan(ctx, dir); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: clean up %s: %v\n", dir, err)
		}
	}
}

func removeOrphan(ctx context.Context, dir string) error {
	s, err := localpg.Registry{Dir: dir}.Get(serverName)
	if err == nil {
		if err := s.Stop(ctx); err != nil {
			return err
		}
		if err := s.Remove(); err != nil {
			return err
		}
	}
	return os.RemoveAll(dir)
}

// prefixWriter sends the server's progress lines to stderr, where go test
// shows them for failing packages and with -v.
type prefixWriter struct{}

func (prefixWriter) Write(p []byte) (int, error) {
	if _, err := fmt.Fprintf(os.Stderr, "pgtest: %s", p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Query runs sql (one or more statements) on a fresh connection to dsn and returns
// the first column of the first row of the last result that has rows, or "" when none
// has. It fails the test on any error.
func Query(t testing.TB, dsn, sql string) string {
	t.Helper()
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	res, err := conn.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	for i := len(res) - 1; i >= 0; i-- {
		if len(res[i].Rows) > 0 && len(res[i].Rows[0]) > 0 {
			return string(res[i].Rows[0][0])
		}
	}
	return ""
}

// Long skips t in the quick tier, `go test -short ./...`: a test that takes
// seconds (a whole run, a fault and its recovery, another server version). The
// full suite, `go test ./...`, runs it.
func Long(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("long: runs in the full suite (go test without -short)")
	}
}

// WaitRefused waits until the server at dsn refuses new sessions with SQLSTATE
// code, as one in a smart shutdown does once it has taken the signal (57P03),
// and fails t after 10 s.
func WaitRefused(t testing.TB, dsn, code string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		conn, err := pgconn.Connect(context.Background(), dsn)
		if err == nil {
			_ = conn.Close(context.Background())
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == code {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not refuse sessions with %s within 10 s: %v", code, err)
		}
	}
}
