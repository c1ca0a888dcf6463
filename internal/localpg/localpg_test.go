package localpg_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// stopEnv makes the test binary act as a later pgbakeoff process that stops
// a registered server: "<registry dir>:<name>".
const stopEnv = "LOCALPG_TEST_STOP"

func TestMain(m *testing.M) {
	if spec := os.Getenv(stopEnv); spec != "" {
		os.Exit(stopRegistered(spec))
	}
	// pgtest.Run stops the test server that pgtest.OwnServer starts for its
	// binaries; m.Run alone left it running after the package.
	os.Exit(pgtest.Run(m))
}

func stopRegistered(spec string) int {
	dir, name, _ := strings.Cut(spec, ":")
	s, err := localpg.Registry{Dir: dir}.Get(name)
	if err == nil {
		err = s.Stop(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// installed resolves the binaries once for the whole package.
var installed = sync.OnceValues(func() (*localpg.Install, error) {
	return localpg.FindBinaries(context.Background(), "", os.Stderr)
})

// baseDir is a temporary directory for servers. As root, PostgreSQL runs as
// another user, which must be able to enter it.
func baseDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// start starts a server in a temporary directory and stops it when the
// test ends.
func start(t *testing.T, opts localpg.Options) *localpg.Server {
	t.Helper()
	if opts.Install == nil && opts.Version == "" {
		in, err := installed()
		if err != nil {
			t.Fatal(err)
		}
		opts.Install = in
	}
	if opts.BaseDir == "" {
		opts.BaseDir = baseDir(t)
	}
	opts.Log = tlog{t}
	s, err := localpg.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if err := s.Remove(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// execCommand runs the test binary again with env added.
func execCommand(ctx context.Context, exe, env string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), env)
	return cmd
}

type tlog struct{ t *testing.T }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// queryString returns the single value a query returns, or its command tag
// when it returns no rows.
func queryString(t *testing.T, dsn, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var got string
	for rows.Next() {
		if err := rows.Scan(&got); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if got == "" {
		got = rows.CommandTag().String()
	}
	return got
}

func TestStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  localpg.Options
		query string
		want  string
	}{
		{name: "defaults", query: "SELECT version()", want: "PostgreSQL "},
		{name: "set shared_buffers=64MB", opts: localpg.Options{Settings: []localpg.Setting{{Name: "shared_buffers", Value: "64MB"}}}, query: "SHOW shared_buffers", want: "64MB"},
		{name: "set two values, last wins", opts: localpg.Options{Settings: []localpg.Setting{{Name: "work_mem", Value: "8MB"}, {Name: "work_mem", Value: "16MB"}}}, query: "SHOW work_mem", want: "16MB"},
		{name: "quoted value", opts: localpg.Options{Settings: []localpg.Setting{{Name: "application_name", Value: "it's"}}}, query: "SHOW application_name", want: "it's"},
		{name: "initdb --data-checksums", opts: localpg.Options{InitdbArgs: []string{"--data-checksums"}}, query: "SHOW data_checksums", want: "on"},
		{name: "encoding", query: "SHOW server_encoding", want: "UTF8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := start(t, tt.opts)
			for _, dsn := range []string{s.DSN(), s.TCPDSN()} {
				if got := queryString(t, dsn, tt.query); !strings.Contains(got, tt.want) {
					t.Errorf("%s over %q = %q, want it to contain %q", tt.query, dsn, got, tt.want)
				}
			}
			if !s.Running() || s.PID <= 0 {
				t.Errorf("Running() = %v, PID = %d after Start", s.Running(), s.PID)
			}
		})
	}
}

func TestStartReportsVersion(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	s := start(t, localpg.Options{})
	got := queryString(t, s.DSN(), "SHOW server_version")
	if !strings.HasPrefix(got, s.Version) || s.Major == 0 || !strings.HasPrefix(s.Version, fmt.Sprint(s.Major)) {
		t.Errorf("server_version = %q, Server.Version = %q, Major = %d", got, s.Version, s.Major)
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts localpg.Options
		want []string
	}{
		{name: "name=../x", opts: localpg.Options{Name: "../x"}, want: []string{`invalid server name "../x"`}},
		{name: "set port", opts: localpg.Options{Settings: []localpg.Setting{{Name: "port", Value: "1"}}}, want: []string{"port", "chosen by pgbakeoff"}},
		{name: "set bad name", opts: localpg.Options{Settings: []localpg.Setting{{Name: "a b", Value: "1"}}}, want: []string{`"a b"`, "invalid parameter name"}},
		{name: "initdb --no-such-option", opts: localpg.Options{InitdbArgs: []string{"--no-such-option"}}, want: []string{"initdb in ", "no-such-option"}},
		{name: "set shared_buffers=lots", opts: localpg.Options{Settings: []localpg.Setting{{Name: "shared_buffers", Value: "lots"}}}, want: []string{"postgres exited during startup", "last lines of", "shared_buffers"}},
	}
	in, err := installed()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.Install = in
			tt.opts.BaseDir = baseDir(t)
			s, err := localpg.Start(context.Background(), tt.opts)
			if err == nil {
				_ = s.Stop(context.Background())
				t.Fatal("Start succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(tt.opts.BaseDir, "*")); len(left) != 0 {
				t.Errorf("the failed start left %q behind", left)
			}
		})
	}
}

// TestFailedRestartKeepsData: a start that fails on an existing data
// directory leaves it alone, and a later start with good settings finds the
// data.
func TestFailedRestartKeepsData(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	base := baseDir(t)
	s := start(t, localpg.Options{Name: "again", BaseDir: base})
	if got := queryString(t, s.DSN(), "CREATE TABLE kept AS SELECT 'yes'::text AS v"); got != "SELECT 1" {
		t.Fatalf("CREATE TABLE AS = %q, want SELECT 1", got)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := localpg.Start(context.Background(), localpg.Options{Name: "again", BaseDir: base, Install: &localpg.Install{BinDir: s.BinDir, Version: s.Version, Major: s.Major},
		Settings: []localpg.Setting{{Name: "shared_buffers", Value: "lots"}}})
	if err == nil {
		t.Fatal("Start with shared_buffers=lots succeeded")
	}
	if _, err := os.Stat(filepath.Join(s.DataDir, "PG_VERSION")); err != nil {
		t.Fatalf("after the failed restart: %v, want the data directory kept", err)
	}
	again := start(t, localpg.Options{Name: "again", BaseDir: base})
	if got := queryString(t, again.DSN(), "SELECT v FROM kept"); got != "yes" {
		t.Errorf("after the failed restart SELECT v = %q, want yes", got)
	}
}

func TestParseSetting(t *testing.T) {
	tests := []struct {
		in      string
		want    localpg.Setting
		wantErr string
	}{
		{in: "shared_buffers=64MB", want: localpg.Setting{Name: "shared_buffers", Value: "64MB"}},
		{in: " work_mem = 4MB ", want: localpg.Setting{Name: "work_mem", Value: "4MB"}},
		{in: "search_path=a,b", want: localpg.Setting{Name: "search_path", Value: "a,b"}},
		{in: "auto_explain.log_min_duration=0", want: localpg.Setting{Name: "auto_explain.log_min_duration", Value: "0"}},
		{in: "shared_buffers", wantErr: "want name=value"},
		{in: "=1", wantErr: "invalid parameter name"},
		{in: "listen_addresses=*", wantErr: "chosen by pgbakeoff"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := localpg.ParseSetting(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSetting(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSetting(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestRegistry saves a server, lists it as running, stops it from another
// process through the registry, and lists it as stopped.
func TestRegistry(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	base := baseDir(t)
	s := start(t, localpg.Options{Name: "reg", BaseDir: base})
	reg := localpg.Registry{Dir: base}
	if err := reg.Save(s); err != nil {
		t.Fatal(err)
	}

	list, err := reg.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "reg" || !list[0].Running || list[0].PID != s.PID || list[0].DSN != s.DSN() || list[0].Version != s.Version {
		t.Fatalf("List() after Save = %+v, want reg running with pid %d", list, s.PID)
	}

	_, err = localpg.Start(context.Background(), localpg.Options{Name: "reg", BaseDir: base, Install: &localpg.Install{BinDir: s.BinDir, Version: s.Version, Major: s.Major}})
	if err == nil || !strings.Contains(err.Error(), `server "reg" is already running`) {
		t.Errorf("second Start error = %v, want it to say reg is already running", err)
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := execCommand(ctx, exe, stopEnv+"="+base+":reg")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("stop from another process: %v: %s", err, out)
	}

	list, err = reg.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Running || list[0].PID != 0 {
		t.Fatalf("List() after stop = %+v, want reg not running", list)
	}

	_, err = reg.Get("nope")
	if err == nil || !strings.Contains(err.Error(), `no server named "nope" (known: reg)`) {
		t.Errorf("Get(nope) error = %v, want it to list reg", err)
	}

	got, err := reg.Get("reg")
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got.DataDir); !os.IsNotExist(err) {
		t.Errorf("data directory after Remove: %v, want it gone", err)
	}
	if err := reg.Delete("reg"); err != nil {
		t.Fatal(err)
	}
	if list, err := reg.List(context.Background()); err != nil || len(list) != 0 {
		t.Errorf("List() after Delete = %+v, %v; want none", list, err)
	}
	if err := reg.Delete("reg"); err == nil || !strings.Contains(err.Error(), "no servers are registered") {
		t.Errorf("second Delete error = %v, want no servers are registered", err)
	}
}

func TestStopAndRestartKeepsData(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	base := baseDir(t)
	s := start(t, localpg.Options{Name: "keep", BaseDir: base})
	if got := queryString(t, s.DSN(), "CREATE TABLE kept AS SELECT 'yes'::text AS v"); got != "SELECT 1" {
		t.Fatalf("CREATE TABLE AS = %q, want SELECT 1", got)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.Running() {
		t.Fatal("Running() after Stop = true")
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v, want nil", err)
	}
	again := start(t, localpg.Options{Name: "keep", BaseDir: base, Settings: []localpg.Setting{{Name: "work_mem", Value: "5MB"}}})
	if got := queryString(t, again.DSN(), "SELECT v FROM kept"); got != "yes" {
		t.Errorf("after restart SELECT v = %q, want yes", got)
	}
	if got := queryString(t, again.DSN(), "SHOW work_mem"); got != "5MB" {
		t.Errorf("after restart work_mem = %q, want the new setting 5MB", got)
	}
}

func TestReadLog(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	s := start(t, localpg.Options{})
	all, err := s.ReadLog(0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(all), "database system is ready to accept connections") {
		t.Errorf("log does not say the server is ready:\n%s", all)
	}
	for _, tail := range []int{1, 3} {
		got, err := s.ReadLog(tail)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		if len(lines) != tail || !strings.HasSuffix(string(all), string(got)) {
			t.Errorf("ReadLog(%d) = %q, want the last %d lines of the log", tail, got, tail)
		}
	}
}

func TestStopOnInterrupt(t *testing.T) {
	// Not parallel: it sends SIGINT to the test process.
	s := start(t, localpg.Options{})
	own := make(chan os.Signal, 2)
	signal.Notify(own, os.Interrupt) // keeps the re-sent signal from ending the test
	defer signal.Stop(own)
	cancel := s.StopOnInterrupt(context.Background(), tlog{t})
	defer cancel()
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := self.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// The watcher sends the signal again once its stop has returned: the second
	// SIGINT seen here says the server should be down. Until both have arrived, own
	// must stay registered: a SIGINT nobody is notified of ends the test binary.
	// A fast shutdown that hangs turns into an immediate one after 30 s.
	timeout := time.After(time.Minute)
	for i := range 2 {
		select {
		case <-own:
		case <-timeout:
			t.Fatalf("SIGINT seen %d times by the process's own handler in a minute, want 2 (the original and the one re-sent after the stop)", i)
		}
	}
	if s.Running() {
		t.Fatal("server still running once the watcher had stopped it and re-sent SIGINT")
	}
}

func TestFindBinariesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version string
		want    []string
	}{
		{version: "99", want: []string{"PostgreSQL 99 is neither installed nor available for download", "installed: ", "downloadable major versions: ", "16"}},
		{version: "16.99", want: []string{"PostgreSQL 16.99 is neither installed", "downloadable major versions: "}},
		{version: "abc", want: []string{`invalid PostgreSQL version "abc"`, "installed: ", "downloadable major versions: "}},
		{version: "16.", want: []string{`invalid PostgreSQL version "16."`}},
	}
	for _, tt := range tests {
		t.Run("version="+tt.version, func(t *testing.T) {
			t.Parallel()
			_, err := localpg.FindBinaries(context.Background(), tt.version, nil)
			if err == nil {
				t.Fatalf("FindBinaries(%q) succeeded, want an error", tt.version)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// TestDownload fetches releases from Maven Central into the shared cache,
// where later runs find them, and starts them.
func TestDownload(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads PostgreSQL from Maven Central")
	}
	t.Parallel()
	for _, major := range []int{11, 16, 18} {
		t.Run(fmt.Sprintf("major=%d", major), func(t *testing.T) {
			t.Parallel()
			in, err := localpg.Finder{Log: tlog{t}}.Download(context.Background(), fmt.Sprint(major))
			if err != nil {
				t.Fatal(err)
			}
			if in.Major != major {
				t.Fatalf("Download(%d) = %+v", major, in)
			}
			s := start(t, localpg.Options{Install: in})
			want := fmt.Sprintf("PostgreSQL %s ", in.Version)
			if got := queryString(t, s.DSN(), "SELECT version()"); !strings.HasPrefix(got, want) {
				t.Errorf("version() = %q, want prefix %q", got, want)
			}
		})
	}
}

// TestLeftovers: server directories without a registry entry, such as a
// study's servers or what a failed start left before starts cleaned up,
// are listed with their size, can be removed by name, and are pruned unless
// a server runs on them. Registered servers and directories pgbakeoff did
// not make are never pruned.
func TestLeftovers(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	base := baseDir(t)
	reg := localpg.Registry{Dir: base}
	registered := start(t, localpg.Options{Name: "registered", BaseDir: base})
	if err := reg.Save(registered); err != nil {
		t.Fatal(err)
	}
	running := start(t, localpg.Options{Name: "running", BaseDir: base})
	stopped := start(t, localpg.Options{Name: "stopped", BaseDir: base})
	if err := stopped.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	failed := start(t, localpg.Options{Name: "failed", BaseDir: base})
	if err := failed.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(failed.DataDir); err != nil { // as a failed initdb left it
		t.Fatal(err)
	}
	if err := os.Mkdir(failed.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(base, "notes")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "todo.txt"), []byte("not a server"), 0o644); err != nil {
		t.Fatal(err)
	}

	list, err := reg.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]localpg.Status{}
	var names []string
	for _, st := range list {
		got[st.Name] = st
		names = append(names, st.Name)
	}
	if strings.Join(names, ",") != "failed,registered,running,stopped" {
		t.Fatalf("List() names = %v, want failed, registered, running and stopped", names)
	}
	tests := []struct {
		name     string
		leftover bool
		running  bool
		version  string
		dsn      string
	}{
		{name: "registered", running: true, version: registered.Version, dsn: registered.DSN()},
		{name: "running", leftover: true, running: true, version: strconv.Itoa(running.Major), dsn: running.DSN()},
		{name: "stopped", leftover: true, version: strconv.Itoa(stopped.Major)},
		{name: "failed", leftover: true},
	}
	for _, tt := range tests {
		st := got[tt.name]
		if st.Leftover != tt.leftover || st.Running != tt.running || st.Version != tt.version || st.DSN != tt.dsn || st.Bytes <= 0 {
			t.Errorf("List()[%s] = %+v; want leftover %v, running %v, version %q, DSN %q and a size", tt.name, st, tt.leftover, tt.running, tt.version, tt.dsn)
		}
	}
	if got["stopped"].Bytes < 1<<20 {
		t.Errorf("stopped server takes %d bytes, want at least the MB of an initdb", got["stopped"].Bytes)
	}

	// A leftover can be read, stopped and removed by name.
	s, err := reg.Get("running")
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != running.PID || s.Port != running.Port {
		t.Errorf("Get(running) = pid %d port %d, want %d and %d", s.PID, s.Port, running.PID, running.Port)
	}
	if err := reg.Remove("running"); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("Remove(running) while it runs = %v, want still running", err)
	}

	pruned, err := reg.Prune()
	if err != nil {
		t.Fatal(err)
	}
	var removed, kept []string
	var freed int64
	for _, st := range pruned.Removed {
		removed = append(removed, st.Name)
		freed += st.Bytes
	}
	for _, st := range pruned.Running {
		kept = append(kept, st.Name)
	}
	if strings.Join(removed, ",") != "failed,stopped" || strings.Join(kept, ",") != "running" || freed != got["failed"].Bytes+got["stopped"].Bytes {
		t.Errorf("Prune() removed %v (%d bytes) and kept %v running; want failed and stopped (%d bytes), and running kept",
			removed, freed, kept, got["failed"].Bytes+got["stopped"].Bytes)
	}
	for _, dir := range []string{filepath.Dir(stopped.DataDir), filepath.Dir(failed.DataDir)} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s after Prune: %v, want it gone", dir, err)
		}
	}
	for _, path := range []string{registered.DataDir, running.DataDir, filepath.Join(foreign, "todo.txt")} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("Prune removed %s: %v", path, err)
		}
	}

	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := reg.Remove("running"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(running.DataDir)); !os.IsNotExist(err) {
		t.Errorf("server directory after Remove(running): %v, want it gone", err)
	}
	if _, err := reg.Get("notes"); err == nil || !strings.Contains(err.Error(), `no server named "notes" (known: registered)`) {
		t.Errorf("Get(notes) = %v, want no server named notes", err)
	}
}
