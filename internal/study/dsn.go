package study

import (
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

const dsnPasswordMsg = "dsn holds a password (or sslpassword); remove it and use password: {env: NAME}, password: {command: \"...\"} or ~/.pgpass"

// checkDSN returns what is wrong with dsn, or "". The message never quotes
// dsn, which may hold a password. It does not use pgconn.ParseConfig, which
// would read PGPASSWORD and ~/.pgpass.
func checkDSN(dsn string) string {
	if strings.TrimSpace(dsn) == "" {
		return "dsn is empty; give a URI (postgres://user@host/db) or key=value pairs (host=... dbname=...)"
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return checkURI(dsn)
	}
	return checkKeywords(dsn)
}

func checkURI(dsn string) string {
	// Look where libpq looks, whose user information runs to the first '@'
	// before any '/', and whose query runs from the next '?' to the end:
	// url.Parse ends both at '?' or '#', and finds no password in
	// postgres://u:1?:pw@h or postgres://h/db#?password=pw. Spaces around
	// a query key are dropped, as pgconn drops them.
	rest := dsn[strings.Index(dsn, "://")+3:]
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		if _, pw, ok := strings.Cut(rest[:i], ":"); ok && pw != "" {
			return dsnPasswordMsg
		}
		rest = rest[i+1:]
	}
	if _, query, ok := strings.Cut(rest, "?"); ok {
		for param := range strings.SplitSeq(query, "&") {
			k, v, _ := strings.Cut(param, "=")
			k = strings.Trim(k, " ")
			if key, err := url.PathUnescape(k); err == nil {
				k = key
			}
			if target.SecretKey(k) && v != "" {
				return dsnPasswordMsg
			}
		}
	}
	u, err := url.Parse(dsn)
	if err == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			return dsnPasswordMsg
		}
		for k, v := range u.Query() {
			if target.SecretKey(k) && slices.ContainsFunc(v, func(s string) bool { return s != "" }) {
				return dsnPasswordMsg
			}
		}
		return ""
	}
	// A password with characters a URL does not allow makes url.Parse fail;
	// look for user:password@ by hand before saying why it failed.
	authority := dsn[strings.Index(dsn, "://")+3:]
	if i := strings.IndexByte(authority, '?'); i >= 0 {
		authority = authority[:i]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		if _, pw, ok := strings.Cut(authority[:i], ":"); ok && pw != "" {
			return dsnPasswordMsg
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // without the URL it quotes
	}
	return "dsn is not a valid URI: " + err.Error()
}

// checkKeywords reads key=value pairs the way libpq does: spaces around =
// are allowed, and a value may be single-quoted with \' and \\ inside.
func checkKeywords(dsn string) string {
	s := dsn
	for {
		s = strings.TrimLeft(s, " \t\n\r\f\v")
		if s == "" {
			return ""
		}
		end := strings.IndexAny(s, "= \t\n\r\f\v")
		if end < 0 {
			return "dsn is not a URI and not key=value pairs: " + quoteKey(dsn, s) + " has no ="
		}
		key := s[:end]
		s = strings.TrimLeft(s[end:], " \t\n\r\f\v")
		if !strings.HasPrefix(s, "=") {
			return "dsn is not a URI and not key=value pairs: " + quoteKey(dsn, key) + " has no ="
		}
		s = strings.TrimLeft(s[1:], " \t\n\r\f\v")
		value, rest, ok := keywordValue(s)
		if target.SecretKey(key) && value != "" {
			return dsnPasswordMsg
		}
		if !ok {
			return "dsn has an unterminated quoted value for " + quoteKey(dsn, key)
		}
		s = rest
	}
}

// keywordValue splits one value off the front of s.
func keywordValue(s string) (value, rest string, ok bool) {
	var b strings.Builder
	if strings.HasPrefix(s, "'") {
		for i := 1; i < len(s); i++ {
			switch c := s[i]; {
			case c == '\\' && i+1 < len(s):
				i++
				b.WriteByte(s[i])
			case c == '\'':
				return b.String(), s[i+1:], true
			default:
				b.WriteByte(c)
			}
		}
		return b.String(), "", false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case strings.IndexByte(" \t\n\r\f\v", c) >= 0:
			return b.String(), s[i:], true
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), "", true
}

// quoteKey quotes a key from a DSN, cut short in case it is not a key at all
// but a value that lost its key, and not at all when the DSN mentions a
// password: a quote left open before it, as in application_name='x
// password='pw', makes the password read as a key.
func quoteKey(dsn, k string) string {
	if len(k) > 20 || strings.Contains(strings.ToLower(dsn), "password") {
		return `a word`
	}
	return `"` + k + `"`
}
