package localpg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultName is the server name used when Options.Name is empty.
const DefaultName = "default"

// Setting is one postgresql.conf parameter.
type Setting struct {
	Name  string
	Value string
}

// ParseSetting parses "name=value", the form of the --set flag.
func ParseSetting(s string) (Setting, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok {
		return Setting{}, fmt.Errorf("setting %q: want name=value", s)
	}
	set := Setting{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}
	return set, set.Validate()
}

var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// managedSettings are chosen by Start; setting them would make the server
// unreachable through the DSN it reports.
var managedSettings = []string{"port", "listen_addresses", "unix_socket_directories"}

// Validate checks what Start would refuse: a malformed name, a setting Start
// chooses itself, a value postgresql.conf cannot hold.
func (s Setting) Validate() error {
	if !settingName.MatchString(s.Name) {
		return fmt.Errorf("setting %q: invalid parameter name", s.Name)
	}
	for _, m := range managedSettings {
		if strings.EqualFold(s.Name, m) {
			return fmt.Errorf("setting %s: chosen by pgbakeoff (use the port option for the port)", s.Name)
		}
	}
	if strings.ContainsAny(s.Value, "\n\r\x00") {
		return fmt.Errorf("setting %s: value contains a line break", s.Name)
	}
	return nil
}

// Options describe a server to start.
type Options struct {
	Name       string    // "" = DefaultName; also the directory name under BaseDir
	Version    string    // as for FindBinaries; ignored when Install is set
	Install    *Install  // binaries to use; nil = FindBinaries(Version)
	Settings   []Setting // written to postgresql.conf, in order; later ones win
	InitdbArgs []string  // extra initdb arguments, such as "--data-checksums"
	BaseDir    string    // parent of the server's directory; "" = DefaultServersDir()
	Log        io.Writer // progress lines for people; nil = discard
	Port       int       // TCP port on 127.0.0.1; 0 = a free one from Ports
	// Ports confines the free port chosen when Port is 0; the zero range is
	// DefaultPorts ($PGBAKEOFF_PORTS), and without it any port the kernel gives.
	Ports PortRange

	// StartTimeout bounds the wait for the server to accept connections;
	// 0 means one minute.
	StartTimeout time.Duration
}

// Server is a PostgreSQL server whose data directory pgbakeoff created. It
// can be saved in a Registry and loaded by a later process, which can then
// stop it.
type Server struct {
	Name      string `json:"name"`
	DataDir   string `json:"data_dir"`
	SocketDir string `json:"socket_dir"`
	LogFile   string `json:"log_file"`
	Port      int    `json:"port"`
	Version   string `json:"version"` // full version, for example "16.10"
	Major     int    `json:"major"`
	BinDir    string `json:"bin_dir"`
	PID       int    `json:"pid"`            // of the postmaster, when it was started
	User      string `json:"user,omitempty"` // operating-system user running it; "" = the starting user
	// Cluster names the group of streaming replicas the server is a node of
	// (the name of its first node); "" for a server on its own.
	Cluster string `json:"cluster,omitempty"`

	// exited is closed when a postmaster started by this process exits;
	// nil for servers loaded from a registry.
	exited chan struct{}
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// Start creates the server's data directory with initdb unless it already
// exists, writes its configuration and starts postgres as a background
// process that outlives the caller. It returns once the server accepts
// connections. Starting a server whose data directory is in use by a
// running postmaster is an error. A start that fails removes the data
// directory it created, and the server's directory if nothing else is in it.
//
// The server listens on 127.0.0.1 and on a Unix socket in a private
// directory, trusts local connections, and logs to Server.LogFile.
// Apart from that and Options.Settings, its configuration is initdb's.
func Start(ctx context.Context, opts Options) (*Server, error) {
	return start(ctx, opts, nil)
}

// start is Start; with up, a server without a data directory is cloned from
// up's primary instead of initdb'd, and starts as its standby.
func start(ctx context.Context, opts Options, up *upstream) (_ *Server, err error) {
	if err := supported(); err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	name := opts.Name
	if name == "" {
		name = DefaultName
	}
	if !serverName.MatchString(name) {
		return nil, fmt.Errorf("invalid server name %q: use letters, digits, '.', '_' and '-'", name)
	}
	for _, set := range opts.Settings {
		if err := set.Validate(); err != nil {
			return nil, fmt.Errorf("start server %q: %w", name, err)
		}
	}
	ports := opts.Ports
	if ports.Lo == 0 && opts.Port == 0 {
		var err error
		if ports, err = DefaultPorts(); err != nil {
			return nil, fmt.Errorf("start server %q: %w", name, err)
		}
	}
	install := opts.Install
	if install == nil {
		var err error
		if install, err = FindBinaries(ctx, opts.Version, log); err != nil {
			return nil, fmt.Errorf("start server %q: %w", name, err)
		}
	}
	base := opts.BaseDir
	if base == "" {
		var err error
		if base, err = DefaultServersDir(); err != nil {
			return nil, fmt.Errorf("start server %q: %w", name, err)
		}
	}
	base, err = filepath.Abs(base)
	if err != nil {
		return nil, fmt.Errorf("start server %q: %w", name, err)
	}
	dir := filepath.Join(base, name)
	if err := mkdirWritable(dir, "server directory"); err != nil {
		return nil, err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("start server %q: %w", name, err)
	}
	defer unlock()
	var s *Server
	if !hasData(filepath.Join(dir, "data")) {
		defer func() {
			if err != nil {
				removeFailedStart(dir, s)
			}
		}()
	}
	acct, err := serverAccount(ctx, log)
	if err != nil {
		return nil, fmt.Errorf("start server %q: %w", name, err)
	}
	for _, path := range []string{filepath.Join(install.BinDir, "postgres"), filepath.Join(dir, "data")} {
		if err := acct.checkReachable(path); err != nil {
			return nil, fmt.Errorf("start server %q: %w", name, err)
		}
	}
	s = &Server{
		Name:    name,
		DataDir: filepath.Join(dir, "data"),
		LogFile: filepath.Join(dir, "postgres.log"),
		Version: install.Version,
		Major:   install.Major,
		BinDir:  install.BinDir,
		User:    acct.Name,
	}
	if pid, ok := s.postmaster(); ok {
		return nil, fmt.Errorf("server %q is already running (pid %d, data directory %s)", name, pid, s.DataDir)
	}
	if up != nil && !hasData(s.DataDir) {
		err = s.clone(ctx, acct, up.primary, log)
	} else {
		err = s.initdb(ctx, acct, opts.InitdbArgs, log)
	}
	if err != nil {
		return nil, err
	}
	if s.SocketDir, err = socketDir(dir, acct); err != nil {
		return nil, fmt.Errorf("start server %q: %w", name, err)
	}
	if up != nil {
		if err := s.writeStandbyConf(acct, up.primary); err != nil {
			return nil, fmt.Errorf("start server %q: %w", name, err)
		}
	}
	if err = s.launchOnPort(ctx, acct, opts, ports); err != nil {
		return nil, fmt.Errorf("start server %q: %w", name, err)
	}
	fmt.Fprintf(log, "PostgreSQL %s server %q is running on port %d (data %s, log %s)\n", s.Version, s.Name, s.Port, s.DataDir, s.LogFile)
	return s, nil
}

// launchOnPort starts postgres on opts.Port, or on a free port of ports. A free
// port found can be taken by someone else before postgres binds it, so a start
// that fails on a port now in use is retried with another.
func (s *Server) launchOnPort(ctx context.Context, acct account, opts Options, ports PortRange) error {
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	for attempt := 1; ; attempt++ {
		if s.Port = opts.Port; s.Port == 0 {
			var err error
			if s.Port, err = ports.free(); err != nil {
				return err
			}
		}
		err := s.launch(ctx, acct, opts.Settings, timeout)
		if err == nil || opts.Port != 0 || attempt == 3 || !portInUse(s.Port) {
			return err
		}
	}
}

// removeFailedStart removes what a failed Start created in the server's
// directory dir: the data directory, the log and the socket directory, and
// dir itself once nothing else is in it. s is nil when Start failed before
// it knew the server's files.
func removeFailedStart(dir string, s *Server) {
	for _, path := range []string{filepath.Join(dir, "data"), filepath.Join(dir, "postgres.log"), filepath.Join(dir, "sock")} {
		_ = os.RemoveAll(path)
	}
	if s != nil && s.SocketDir != "" && filepath.Dir(s.SocketDir) != dir {
		_ = os.RemoveAll(s.SocketDir) // a private directory under /tmp
	}
	_ = os.Remove(dir)
}

// initdb creates the data directory, or checks that an existing one
// belongs to the same major version.
func (s *Server) initdb(ctx context.Context, acct account, args []string, log io.Writer) error {
	if b, err := os.ReadFile(filepath.Join(s.DataDir, "PG_VERSION")); err == nil {
		if got := strings.TrimSpace(string(b)); got != strconv.Itoa(s.Major) {
			return fmt.Errorf("data directory %s was created by PostgreSQL %s, not %d; remove the server or use version %s", s.DataDir, got, s.Major, got)
		}
		fmt.Fprintf(log, "reusing data directory %s\n", s.DataDir)
		return s.ensureInclude()
	}
	if err := os.Mkdir(s.DataDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("initdb in %s: %w", s.DataDir, err)
	}
	if err := acct.chown(s.DataDir); err != nil {
		return fmt.Errorf("initdb in %s: %w", s.DataDir, err)
	}
	fmt.Fprintf(log, "initdb: PostgreSQL %s in %s\n", s.Version, s.DataDir)
	argv := append([]string{"-D", s.DataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(s.BinDir, "initdb"), argv...)
	cmd.Dir = filepath.Dir(s.DataDir)
	cmd.Env = serverEnv()
	cmd.SysProcAttr = acct.credential()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb in %s: %w: %s", s.DataDir, err, lastLines(out, 10))
	}
	return s.ensureInclude()
}

// hasData reports a data directory that exists and is not empty (or cannot
// be read, which is not taken for empty).
func hasData(dir string) bool {
	entries, err := os.ReadDir(dir)
	return !errors.Is(err, os.ErrNotExist) && (err != nil || len(entries) > 0)
}

// confFile holds the settings Start writes; postgresql.conf includes it.
const confFile = "pgbakeoff.conf"

const includeLine = "include = '" + confFile + "'"

func (s *Server) ensureInclude() error {
	path := filepath.Join(s.DataDir, "postgresql.conf")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("configure %s: %w", s.DataDir, err)
	}
	if bytes.Contains(b, []byte(includeLine)) {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("configure %s: %w", s.DataDir, err)
	}
	_, err = fmt.Fprintf(f, "\n# Settings chosen by pgbakeoff, rewritten at each start.\n%s\n", includeLine)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("configure %s: %w", s.DataDir, err)
	}
	return nil
}

// writeConf writes the connection settings and the caller's settings.
func (s *Server) writeConf(acct account, settings []Setting) error {
	var b strings.Builder
	b.WriteString("# Written by pgbakeoff at each start; edits here are lost.\n")
	// unix_socket_directories is a list; double quotes keep it one entry.
	fmt.Fprintf(&b, "listen_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = %s\n", s.Port, confQuote(`"`+s.SocketDir+`"`))
	for _, set := range settings {
		fmt.Fprintf(&b, "%s = %s\n", set.Name, confQuote(set.Value))
	}
	path := filepath.Join(s.DataDir, confFile)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return acct.chown(path)
}

// confQuote quotes a postgresql.conf value; any value may be quoted.
func confQuote(v string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", "''") + "'"
}

// launch writes the configuration, starts the postmaster and waits until it
// accepts connections.
func (s *Server) launch(ctx context.Context, acct account, settings []Setting, timeout time.Duration) error {
	if err := s.writeConf(acct, settings); err != nil {
		return err
	}
	return s.run(ctx, acct, timeout)
}

// run starts the postmaster on the configuration in the data directory and
// waits until it accepts connections.
func (s *Server) run(ctx context.Context, acct account, timeout time.Duration) error {
	logf, err := os.OpenFile(s.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("open server log: %w", err)
	}
	if err := acct.chown(s.LogFile); err != nil {
		_ = logf.Close()
		return err
	}
	// The postmaster gets its own session so that it survives the caller
	// and a Ctrl-C in the caller's terminal does not reach it directly.
	cmd := exec.Command(filepath.Join(s.BinDir, "postgres"), "-D", s.DataDir)
	cmd.Dir = s.DataDir
	cmd.Env = serverEnv()
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = acct.credential()
	ownSession(cmd.SysProcAttr)
	err = cmd.Start()
	if cerr := logf.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close server log: %w", cerr)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	s.PID = cmd.Process.Pid
	exited := make(chan struct{})
	s.exited = exited
	go func() {
		_ = cmd.Wait() // the exit status is in the server log
		close(exited)
	}()
	if err := s.waitReady(ctx, timeout); err != nil {
		return fmt.Errorf("%w; last lines of %s:\n%s", err, s.LogFile, s.logTail(15))
	}
	return nil
}

// errExitedAtStart is a postmaster that exited before accepting connections.
var errExitedAtStart = errors.New("postgres exited during startup")

// waitReady connects until the server accepts a connection, the
// postmaster exits, or time runs out; in the last two cases no postmaster
// is left running.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgconn.Connect(attempt, s.DSN())
		cancelAttempt()
		if err == nil {
			return conn.Close(ctx)
		}
		lastErr = err
		select {
		case <-s.exited:
			return errExitedAtStart
		case <-ctx.Done():
			stopCtx, cancelStop := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancelStop()
			if err := s.signalAndWait(stopCtx, syscall.SIGQUIT, s.PID); err != nil {
				return fmt.Errorf("server not ready after %s (%v); stopping it: %w", timeout, lastErr, err)
			}
			return fmt.Errorf("server not ready after %s: %w", timeout, lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// serverEnv is the environment for initdb and postgres: the caller's,
// without libpq variables such as PGPORT that would change their defaults.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

// socketDir makes a private directory for the Unix socket. Socket paths
// are limited to about 100 bytes, and clients read a comma in a host as a
// list of hosts, so a long or unusual server directory gets a socket
// directory under /tmp instead.
func socketDir(dir string, acct account) (string, error) {
	sock := filepath.Join(dir, "sock")
	if len(sock+"/.s.PGSQL.65535.lock") > 100 || strings.ContainsAny(sock, ",'\" \\") {
		tmp, err := os.MkdirTemp("/tmp", "pgbk-")
		if err != nil {
			return "", fmt.Errorf("create socket directory: %w", err)
		}
		sock = tmp
	} else if err := os.Mkdir(sock, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("create socket directory: %w", err)
	}
	return sock, acct.chown(sock)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

func portInUse(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return true
	}
	_ = l.Close()
	return false
}

// DSN is a libpq keyword/value connection string for the superuser and
// the postgres database over the Unix socket.
func (s *Server) DSN() string {
	return s.dsn(s.SocketDir)
}

// TCPDSN is DSN over TCP on 127.0.0.1.
func (s *Server) TCPDSN() string {
	return s.dsn("127.0.0.1")
}

func (s *Server) dsn(host string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", dsnQuote(host), s.Port)
}

func dsnQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, ` '\`) {
		return v
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", `\'`) + "'"
}

// Running reports whether a postmaster is running on the data directory.
func (s *Server) Running() bool {
	_, ok := s.postmaster()
	return ok
}

// postmaster returns the pid recorded in postmaster.pid if that process is
// alive. PostgreSQL removes the file when it shuts down cleanly.
func (s *Server) postmaster() (int, bool) {
	b, err := os.ReadFile(filepath.Join(s.DataDir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if s.exited != nil && pid == s.PID {
		select {
		case <-s.exited:
			return 0, false
		default:
		}
	}
	if err := kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0, false
	}
	return pid, true
}

// Stop shuts the server down with a fast shutdown, which rolls back open
// transactions, and waits for it to exit. If that takes longer than a
// minute or ctx ends first, it falls back to an immediate shutdown. Stopping
// a server that is not running does nothing.
func (s *Server) Stop(ctx context.Context) error {
	pid, ok := s.postmaster()
	if !ok {
		return nil
	}
	fast, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := s.signalAndWait(fast, syscall.SIGINT, pid)
	if err == nil {
		return nil
	}
	immediate, cancelImmediate := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancelImmediate()
	if err := s.signalAndWait(immediate, syscall.SIGQUIT, pid); err != nil {
		return fmt.Errorf("stop server %q (pid %d): %w", s.Name, pid, err)
	}
	return fmt.Errorf("stop server %q (pid %d): fast shutdown did not finish (%v); used immediate shutdown", s.Name, pid, ctx.Err())
}

// Signal sends sig to the postmaster, to crash or stop the server from outside as a
// fault would.
func (s *Server) Signal(sig syscall.Signal) error {
	if err := kill(s.PID, sig); err != nil {
		return fmt.Errorf("send %v to server %q (pid %d): %w", sig, s.Name, s.PID, err)
	}
	return nil
}

// Crash kills the server as a crash of its machine would: the postmaster and,
// on Linux, every backend and worker at once, so the shared memory is free and
// the server can start again at once. A postmaster killed alone leaves its
// backends running, holding that memory until each notices, which with
// hundreds of sessions on a busy machine takes tens of seconds: a delay of the
// test bench, not of PostgreSQL's recovery.
func (s *Server) Crash() error { return s.killAll() }

// signalAndWait sends sig to the postmaster and waits until it is gone.
func (s *Server) signalAndWait(ctx context.Context, sig syscall.Signal, pid int) error {
	if err := kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("send %v: %w", sig, err)
	}
	for {
		if s.exited != nil && pid == s.PID {
			select {
			case <-s.exited:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if _, ok := s.postmaster(); !ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Remove deletes the data directory, the log file and the socket
// directory. The server must be stopped first.
func (s *Server) Remove() error {
	if pid, ok := s.postmaster(); ok {
		return fmt.Errorf("remove server %q: still running (pid %d); stop it first", s.Name, pid)
	}
	// Refuse to delete a directory that does not look like a data
	// directory, in case a registry entry was edited by hand.
	if entries, err := os.ReadDir(s.DataDir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(s.DataDir, "PG_VERSION")); err != nil {
			return fmt.Errorf("remove server %q: %s is not a PostgreSQL data directory", s.Name, s.DataDir)
		}
	}
	for _, path := range []string{s.DataDir, s.SocketDir, s.LogFile} {
		if path == "" {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			return fmt.Errorf("remove server %q: %w", s.Name, err)
		}
	}
	// The server's directory goes too once nothing else is in it.
	if err := os.Remove(filepath.Dir(s.DataDir)); err != nil && !errors.Is(err, os.ErrNotExist) && !isNotEmpty(err) {
		return fmt.Errorf("remove server %q: %w", s.Name, err)
	}
	return nil
}

func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}

// ReadLog returns the last tail lines of the server log, or all of it when
// tail is 0 or less. It is what `pgbakeoff server logs` prints.
func (s *Server) ReadLog(tail int) ([]byte, error) {
	f, err := os.Open(s.LogFile)
	if err != nil {
		return nil, fmt.Errorf("read log of server %q: %w", s.Name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read log of server %q: %w", s.Name, err)
	}
	// Read backwards in growing chunks until enough lines are in hand.
	for chunk := int64(64 << 10); ; chunk *= 4 {
		off := max(fi.Size()-chunk, 0)
		if tail <= 0 {
			off = 0
		}
		b := make([]byte, fi.Size()-off)
		if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read log of server %q: %w", s.Name, err)
		}
		if tail <= 0 {
			return b, nil
		}
		if off == 0 || bytes.Count(b, []byte("\n")) > tail {
			lines := lastLines(b, tail)
			if len(lines) == 0 {
				return lines, nil
			}
			return append(lines[:len(lines):len(lines)], '\n'), nil
		}
	}
}

func (s *Server) logTail(n int) string {
	b, err := s.ReadLog(n)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// lastLines returns the last n lines of b without the final line break.
func lastLines(b []byte, n int) []byte {
	b = bytes.TrimRight(b, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}
