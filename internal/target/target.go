// Package target describes one PostgreSQL deployment under test: how to reach it,
// how to name it without leaking its password, and what it says about itself.
package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgconn"
)

// Target is a parsed DSN. The DSN may be a URI or key=value pairs; PG* environment
// variables and ~/.pgpass fill what it leaves out, as they do for psql.
type Target struct {
	DSN    string
	Config *pgconn.Config
}

// Parse validates dsn the way libpq would. An empty dsn means "from the environment".
func Parse(dsn string) (*Target, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("invalid DSN %q: %s; use a URI (postgres://user@host:5432/db) or key=value pairs (host=... dbname=...)",
			Redact(dsn), parseReason(err, dsn))
	}
	return &Target{DSN: dsn, Config: cfg}, nil
}

// parseReason strips pgconn's own echo of the connection string, which may hold a
// password, and keeps only why it failed. That reason may still quote a part of
// dsn, which a typo can make the password: in application_name='x password='pw'
// pgconn reads the key pw'. So when the reason holds a word that Redact removes
// from dsn, it is withheld.
func parseReason(err error, dsn string) string {
	var pe *pgconn.ParseConfigError
	msg := err.Error()
	if errors.As(err, &pe) {
		msg = pe.Error()
		if i := strings.LastIndex(msg, "`: "); i >= 0 {
			msg = msg[i+3:]
		}
	}
	redacted := Redact(dsn)
	notAlnum := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
	for _, word := range strings.FieldsFunc(dsn, notAlnum) {
		if !strings.Contains(redacted, word) && strings.Contains(msg, word) {
			return "it does not parse (the reason would show part of the password)"
		}
	}
	return msg
}

// WithDatabase returns a copy of the target that connects to database name. Its
// String names that database: the DSN, which names another, is dropped.
func (t *Target) WithDatabase(name string) *Target {
	cfg := t.Config.Copy()
	dsn := t.DSN
	if name != cfg.Database {
		dsn = ""
	}
	cfg.Database = name
	return &Target{DSN: dsn, Config: cfg}
}

// String names the target for people and the results store: the DSN with any
// password removed, or host:port/db when it came from the environment.
func (t *Target) String() string {
	if strings.TrimSpace(t.DSN) != "" {
		return Redact(t.DSN)
	}
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s", t.Config.Host, t.Config.Port, t.Config.User, t.Config.Database)
}

// Address is the host and port, or the unix socket directory, the target connects to.
func (t *Target) Address() string {
	if strings.HasPrefix(t.Config.Host, "/") {
		return fmt.Sprintf("%s/.s.PGSQL.%d", t.Config.Host, t.Config.Port)
	}
	return net.JoinHostPort(t.Config.Host, fmt.Sprint(t.Config.Port))
}

// Resolve looks up the host the way the driver will and returns the addresses.
func (t *Target) Resolve(ctx context.Context) ([]string, error) {
	if strings.HasPrefix(t.Config.Host, "/") {
		return []string{t.Address()}, nil
	}
	if ip := net.ParseIP(t.Config.Host); ip != nil {
		return []string{ip.String()}, nil
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, t.Config.Host)
	if err != nil {
		return nil, fmt.Errorf("resolve host %s: %w", t.Config.Host, err)
	}
	return addrs, nil
}

// ResolveOnce returns a copy of the target that resolves no names when it connects:
// each host name is looked up now, once, and the copy's connections go to the first
// of its addresses that accepts a TCP connection (to all of them, in order, when none
// does yet). The name stays in the configuration, so TLS still verifies it and String
// still shows it. Unix sockets and IP addresses are left as they are.
func (t *Target) ResolveOnce(ctx context.Context) (*Target, error) {
	cfg := t.Config.Copy()
	lookup := cfg.LookupFunc
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	timeout := cfg.ConnectTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	pinned := map[string][]string{}
	hosts := []*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port}}
	hosts = append(hosts, cfg.Fallbacks...)
	for _, h := range hosts {
		if strings.HasPrefix(h.Host, "/") || net.ParseIP(h.Host) != nil || pinned[h.Host] != nil {
			continue
		}
		addrs, err := lookup(ctx, h.Host)
		if err == nil && len(addrs) == 0 {
			err = errors.New("no address")
		}
		if err != nil {
			return nil, fmt.Errorf("resolve host %s: %w", h.Host, err)
		}
		pinned[h.Host] = reachable(ctx, cfg.DialFunc, addrs, h.Port, timeout)
	}
	cfg.LookupFunc = func(ctx context.Context, host string) ([]string, error) {
		if addrs, ok := pinned[host]; ok {
			return addrs, nil
		}
		return lookup(ctx, host)
	}
	return &Target{DSN: t.DSN, Config: cfg}, nil
}

// reachable narrows addrs (IP addresses, or address:port) to the first that accepts
// a TCP connection on port, as the driver would try them; all of them when none does.
func reachable(ctx context.Context, dial pgconn.DialFunc, addrs []string, port uint16, timeout time.Duration) []string {
	if len(addrs) < 2 {
		return addrs
	}
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	for _, a := range addrs {
		hostport := a
		if _, _, err := net.SplitHostPort(a); err != nil {
			hostport = net.JoinHostPort(a, fmt.Sprint(port))
		}
		dctx, cancel := context.WithTimeout(ctx, timeout)
		conn, err := dial(dctx, "tcp", hostport)
		cancel()
		if err == nil {
			_ = conn.Close() // only a probe: PostgreSQL logs nothing for a connection that sends nothing
			return []string{a}
		}
	}
	return addrs
}

// Connect opens one connection, turning driver errors into ones a user can act on.
func (t *Target) Connect(ctx context.Context) (*pgconn.PgConn, error) {
	cfg := t.Config.Copy()
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, t.explain(ctx, err)
	}
	return conn, nil
}

// explain turns a connection failure into a one-line reason naming host, address and cause.
func (t *Target) explain(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			// The server's message tells a wrong password from a missing client
			// certificate or a pg_hba.conf rule; it never holds the password.
			hint := "check the password (PGPASSWORD or ~/.pgpass) and pg_hba.conf"
			switch msg := pgErr.Message; {
			case strings.Contains(msg, "certificate"):
				hint = "check sslcert and sslkey in the DSN, and that the server's ssl_ca_file signed them"
			case strings.Contains(msg, "pg_hba.conf"):
				hint = "the server's pg_hba.conf has no line admitting this host, user, database and encryption; add one or change sslmode"
			}
			return &ConnectError{Target: t, Reason: fmt.Sprintf("%s (SQLSTATE %s); %s", Scrub(pgErr.Message, t.Config.Password), pgErr.Code, hint), Err: err}
		case "3D000":
			return &ConnectError{Target: t, Reason: fmt.Sprintf("database %q does not exist; create it or pass dbname= in the DSN", t.Config.Database), Err: err}
		case "53300":
			return &ConnectError{Target: t, Reason: "too many connections: the server has no free connection slot (SQLSTATE 53300)", Err: err}
		case "57P03":
			return &ConnectError{Target: t, Reason: "the server is starting up or shutting down (SQLSTATE 57P03)", Err: err}
		}
		return &ConnectError{Target: t, Reason: fmt.Sprintf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code), Err: err}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &ConnectError{Target: t, Reason: fmt.Sprintf("cannot resolve host %q: %s", t.Config.Host, dnsErr.Err), Err: err}
	}
	reason := Scrub(dialReason(err), t.Config.Password)
	addr := t.Address()
	if addrs, rerr := t.Resolve(ctx); rerr == nil && len(addrs) > 0 && !strings.HasPrefix(t.Config.Host, "/") {
		addr = fmt.Sprintf("%s (%s)", addr, strings.Join(addrs, ", "))
	}
	return &ConnectError{Target: t, Reason: fmt.Sprintf("cannot connect to %s: %s", addr, reason), Err: err}
}

// dialAttempt is the "address (host): " pgconn puts before each attempt's error.
var dialAttempt = regexp.MustCompile(`^\S+ \([^)]*\): `)

// dialReason is why the connection failed: the innermost error or, where pgconn
// joined one error per attempt (each address, with and without TLS), each
// distinct one once, without the address when every attempt was to the same.
func dialReason(err error) string {
	inner := innermost(err)
	j, ok := inner.(interface{ Unwrap() []error })
	if !ok {
		return inner.Error()
	}
	var parts, addrs []string
	for _, e := range j.Unwrap() {
		s := e.Error()
		if a := dialAttempt.FindString(s); !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(addrs) == 1 && addrs[0] != "" {
		for i, p := range parts {
			parts[i] = strings.TrimPrefix(p, addrs[0])
		}
		parts = slices.Compact(parts)
	}
	return strings.Join(parts, "; ")
}

func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// ConnectError is a failed connection with a reason fit for one line of output.
type ConnectError struct {
	Target *Target
	Reason string
	Err    error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("connect to %s: %s", e.Target.String(), e.Reason)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// kvPassword matches a password (or sslpassword) and its value anywhere, even
// inside another key's value, as a typo can put it there.
var kvPassword = regexp.MustCompile(`(?is)(password[ \t\n\r\v\f]*=[ \t\n\r\v\f]*)('(?:[^'\\]|\\.)*(?:'|$)|(?:[^ \t\n\r\v\f\\]|\\.?)*)`)

// kvParam matches a key and its value as libpq reads them: the spaces around =
// are libpq's, a backslash escapes any character, even a space, and a quote left
// open runs to the end.
var kvParam = regexp.MustCompile(`(?s)([^ \t\n\r\v\f=]+)([ \t\n\r\v\f]*=[ \t\n\r\v\f]*)('(?:[^'\\]|\\.)*(?:'|$)|(?:[^ \t\n\r\v\f\\]|\\.?)*)`)

// urlScheme is the start of a URL of any scheme: POSTGRES:// is no DSN libpq
// takes, but its password is to be hidden all the same.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// LooksLikeURL tells a string that begins as a URL does, of any scheme.
func LooksLikeURL(s string) bool { return urlScheme.MatchString(strings.TrimSpace(s)) }

// Redact removes the password from a DSN in either form, and the value of every
// key that is not one of libpq's that holds no secret: a mistyped
// passwrd=... holds one as surely as password=... does.
func Redact(dsn string) string {
	s := strings.TrimSpace(dsn)
	if LooksLikeURL(s) {
		s = redactURI(s)
		u, err := url.Parse(s)
		if err != nil {
			// An unparsable URI may still carry user:password@; cut it out by hand.
			if at := strings.LastIndex(s, "@"); at > 0 {
				scheme := s[:strings.Index(s, "://")+3]
				userinfo := s[len(scheme):at]
				if c := strings.Index(userinfo, ":"); c >= 0 {
					userinfo = userinfo[:c] + ":xxxxx"
				}
				return scheme + userinfo + s[at:]
			}
			return s
		}
		if u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			}
		}
		q := u.Query()
		changed := false
		for k := range q {
			if !publicKey(k) {
				q.Set(k, "xxxxx")
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
		return strings.Replace(u.String(), ":xxxxx@", ":xxxxx@", 1)
	}
	s = kvPassword.ReplaceAllString(s, "${1}xxxxx")
	return kvParam.ReplaceAllStringFunc(s, func(m string) string {
		p := kvParam.FindStringSubmatch(m)
		if publicKey(p[1]) {
			return m
		}
		return p[1] + p[2] + "xxxxx"
	})
}

// publicKeys are libpq's connection keywords whose values are no secret.
var publicKeys = []string{"host", "hostaddr", "port", "dbname", "user", "passfile", "require_auth", "channel_binding",
	"connect_timeout", "client_encoding", "options", "application_name", "fallback_application_name", "keepalives",
	"keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "replication", "gssencmode",
	"sslmode", "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir",
	"sslsni", "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version", "min_protocol_version",
	"max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs", "load_balance_hosts"}

// publicKey tells a connection keyword whose value may be shown.
func publicKey(key string) bool { return slices.Contains(publicKeys, key) }

// redactURI removes the password from where libpq reads one in a URI, which
// url.Parse does not always see: the user information runs to the first '@'
// before any '/', and the query from the next '?' to the end, so that
// postgres://u:1?:pw@h and postgres://h/db#?password=pw hold the password pw,
// as does a query of a URI url.Parse rejects. Spaces around a query key are
// dropped, as pgconn drops them.
func redactURI(s string) string {
	scheme, rest, _ := strings.Cut(s, "://")
	var b strings.Builder
	b.WriteString(scheme + "://")
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		user, _, hasPassword := strings.Cut(rest[:i], ":")
		b.WriteString(user)
		if hasPassword {
			b.WriteString(":xxxxx")
		}
		rest = rest[i:]
	}
	rest, query, hasQuery := strings.Cut(rest, "?")
	b.WriteString(rest)
	if !hasQuery {
		return b.String()
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		k, _, _ := strings.Cut(p, "=")
		key := strings.Trim(k, " ")
		if u, err := url.PathUnescape(key); err == nil {
			key = u
		}
		if !publicKey(key) {
			params[i] = k + "=xxxxx"
		}
	}
	b.WriteString("?" + strings.Join(params, "&"))
	return b.String()
}

// SecretKey reports whether a connection parameter holds a secret: the password,
// or sslpassword, which unlocks the client certificate's key.
func SecretKey(key string) bool {
	return strings.EqualFold(key, "password") || strings.EqualFold(key, "sslpassword")
}

// Scrub replaces every occurrence of secret in s.
func Scrub(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "xxxxx")
}

// OnThisMachine tells a target whose server runs here: reached over a Unix
// socket or a loopback address, so that its data directory is this machine's.
func (t *Target) OnThisMachine() bool {
	h := t.Config.Host
	if strings.HasPrefix(h, "/") || h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
