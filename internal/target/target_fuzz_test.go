package target

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// The fuzz targets' saved corpora are in testdata/fuzz/<target name>.

// The password planted in fuzzed DSNs.
const planted = "Pl4ntedPassw0rd"

// FuzzParse plants a password in a DSN, in each place a DSN holds one, among
// fuzzed text, and checks that neither Parse's error, nor the parsed target's
// String, nor Redact shows it. Form 4 plants none, so the fuzzer also tries
// DSNs that only look like these.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct {
		form                   uint8
		prefix, middle, suffix string
	}{
		{0, "host=db user=bench", "", "dbname=bench"},
		{0, "host=db port=99999999", "", ""},
		{0, "application_name='my app", "", "' host=db"},
		{0, "host=db target_session_attrs=", "", ""},
		{1, "application_name='my app", "", "host=db"},
		{1, "host=db", "a b\\' ", "sslmode=require"},
		{1, "host=db", "", "sslmode=bogus"},
		{2, "bench", "", "db.example:5432/bench"},
		{2, "bench", "", "db.example:99999999/bench"},
		{2, "bench", "a/b", "db.example/bench"},
		{2, "u:1?x", "", "h"},
		{2, "#", "", "h"},
		{3, "bench@db.example/bench", "sslmode=require", ""},
		{3, "db.example", "", "&x=1"},
		{3, " ", "", ""},
		{3, "h/db", "a=b#", ""},
		{3, "h:x/db", "", ""},
		{4, "host=db password", "", ""},
		{4, "postgres://u:", "pw", "@h/db"},
		{4, "", "", ""},
	} {
		f.Add(seed.form, seed.prefix, seed.middle, seed.suffix)
	}
	isolateLibpq(f)
	f.Fuzz(func(t *testing.T, form uint8, prefix, middle, suffix string) {
		dsn, isPassword := plantDSN(form, prefix, middle, suffix)
		if strings.Count(dsn, planted) > 1 || mayReadDevice(dsn) {
			t.Skip("password planted twice, or a DSN that may name a device")
		}
		if cfg, err := pgconn.ParseConfig(dsn); err == nil {
			isPassword = strings.Contains(cfg.Password, planted) // libpq's reading, where it has one
		}
		if !isPassword { // nothing to hide: only nothing may panic
			Redact(dsn)
			_, _ = Parse(dsn)
			return
		}
		if got := Redact(dsn); strings.Contains(got, planted) {
			t.Fatalf("Redact(%q) = %q", dsn, got)
		}
		tg, err := Parse(dsn)
		if err != nil {
			if strings.Contains(err.Error(), planted) {
				t.Fatalf("Parse(%q): %v", dsn, err)
			}
			return
		}
		if got := tg.String(); strings.Contains(got, planted) {
			t.Fatalf("Parse(%q).String() = %q", dsn, got)
		}
	})
}

// plantDSN builds a dsn with planted in one of the places a DSN holds a
// password, and says whether it is still (part of) the password, which text
// around it can prevent: postgres://a/b:pw@h has the database b:pw@h and no
// password, and password='a' pw' the password a. This is a guess for DSNs
// libpq rejects; FuzzParse asks pgconn about the others. Form 4 plants none.
func plantDSN(form uint8, prefix, middle, suffix string) (dsn string, isPassword bool) {
	// A DSN that starts like a URI is not key=value pairs, wherever it has a
	// password=; pgconn and Redact disagree on one after a space.
	uri := strings.HasPrefix(strings.TrimSpace(prefix), "postgres://") || strings.HasPrefix(strings.TrimSpace(prefix), "postgresql://")
	switch form % 5 {
	case 0:
		return prefix + " password=" + planted + " " + suffix, !uri
	case 1:
		return prefix + " password='" + middle + planted + "' " + suffix, !uri && stillQuoted(middle)
	case 2:
		rest := prefix + ":" + middle + planted + "@" + suffix
		return "postgres://" + rest, inURIPassword(rest)
	case 3:
		rest := prefix + "?" + middle + "&password=" + planted + suffix
		return "postgresql://" + rest, inURIPassword(rest)
	}
	return prefix + middle + suffix, false
}

// inURIPassword reports whether planted is in a password of a URI, given
// without its scheme, where libpq finds one: in the user information, which
// runs to the first '@' before any '/', or in a password= of the query, which
// runs from the next '?' to the end.
func inURIPassword(uri string) bool {
	if i := strings.IndexAny(uri, "@/"); i >= 0 && uri[i] == '@' {
		if _, pw, ok := strings.Cut(uri[:i], ":"); ok && strings.Contains(pw, planted) {
			return true
		}
		uri = uri[i+1:]
	}
	_, query, _ := strings.Cut(uri, "?")
	for param := range strings.SplitSeq(query, "&") {
		if k, v, _ := strings.Cut(param, "="); strings.Trim(k, " ") == "password" && strings.Contains(v, planted) {
			return true
		}
	}
	return false
}

// stillQuoted reports whether a value that opens with a quote followed by s
// is still open after s, as libpq reads it: a backslash escapes the next
// character.
func stillQuoted(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			return false
		}
	}
	return true
}

// FuzzRedact checks that Redact never panics and removes every password
// pgconn.ParseConfig, following libpq, reads in a DSN, and every part of it.
// It checks the runs of letters and digits in the password that are at least
// 4 long, have no x and appear once in the DSN: nothing but the password
// itself can put those in Redact's output, which joins parts of the DSN and
// xxxxx.
func FuzzRedact(f *testing.F) {
	for _, dsn := range []string{
		"postgres://bench:s3cr3tPw@db.example:5432/app?sslmode=require",
		"postgresql://db.example/app?user=bench&password=s3cr3tPw",
		"postgresql://db.example/app?pass%77ord=s3cr3tPw",
		"postgresql://db.example/app? password =s3cr3tPw",
		"postgres://u:1?:s3cr3tPw@h",
		"postgres://h/db#?password=s3cr3tPw",
		"host=db.example user=bench password=s3cr3tPw dbname=app",
		"host=db.example password='s3cr3tPw more' dbname=app",
		"host=db.example password = s3cr3tPw dbname=app",
		"host=db.example password=s3cr\\ 3tPw",
		"password=s3cr3tPw\\",
		"postgres://bench:s3cr3tPw@db.example:99999999/app",
		"",
	} {
		f.Add(dsn)
	}
	isolateLibpq(f)
	notAlnum := func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		got := Redact(dsn)
		if mayReadDevice(dsn) {
			return
		}
		cfg, err := pgconn.ParseConfig(dsn)
		if err != nil {
			return
		}
		for _, run := range strings.FieldsFunc(cfg.Password, notAlnum) {
			if len(run) < 4 || strings.ContainsRune(run, 'x') || strings.Count(dsn, run) != 1 {
				continue
			}
			if strings.Contains(got, run) {
				t.Fatalf("Redact(%q) = %q, which holds %q of the password %q", dsn, got, run, cfg.Password)
			}
		}
	})
}

// isolateLibpq keeps pgconn.ParseConfig from finding a password, or files to
// read, anywhere but in the DSN it is given.
func isolateLibpq(f *testing.F) {
	for _, env := range []string{"PGPASSWORD", "PGSERVICE", "PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY", "PGSSLMODE"} {
		f.Setenv(env, "")
	}
	none := filepath.Join(f.TempDir(), "none")
	f.Setenv("PGPASSFILE", none)
	f.Setenv("PGSERVICEFILE", none)
}

// mayReadDevice reports whether dsn might name a file under /dev, /proc or
// /sys, which pgconn.ParseConfig would read (sslrootcert=/dev/zero hangs).
func mayReadDevice(dsn string) bool {
	s := strings.NewReplacer(`\`, "", `'`, "").Replace(dsn)
	if u, err := url.PathUnescape(s); err == nil {
		s = u
	} else if strings.Contains(s, "%") {
		return true
	}
	s = strings.ToLower(s)
	return strings.Contains(s, "dev/") || strings.Contains(s, "proc/") || strings.Contains(s, "sys/")
}
