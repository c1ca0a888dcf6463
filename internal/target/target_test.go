package target

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	const pw = "s3cr3t-Pw"
	cases := []struct{ name, dsn string }{
		{"uri userinfo", "postgres://bench:" + pw + "@db.example:5432/app?sslmode=require"},
		{"uri query", "postgresql://db.example/app?user=bench&password=" + pw},
		{"key=value", "host=db.example user=bench password=" + pw + " dbname=app"},
		{"key=value quoted", "host=db.example password='" + pw + " x' dbname=app"},
		{"key = value spaced", "host=db.example password = " + pw + " dbname=app"},
		{"unparsable uri", "postgres://bench:" + pw + "@db.example:99999999/app"},
		{"uri sslpassword", "postgres://bench@db.example/app?sslcert=c.crt&sslkey=c.key&sslpassword=" + pw},
		{"uri query spaced", "postgres://db.example/app?sslmode=require& password =" + pw},
		{"key=value sslpassword", "host=db.example sslkey=c.key sslpassword=" + pw},
		{"uri scheme in capitals", "POSTGRES://bench:" + pw + "@db.example/app"},
		{"uri of another scheme", "mysql://bench:" + pw + "@db.example/app"},
		{"key=value mistyped key", "host=db.example passwrd=" + pw + " dbname=app"},
		{"uri query mistyped key", "postgres://db.example/app?passwort=" + pw},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Redact(tc.dsn)
			if strings.Contains(got, pw) {
				t.Errorf("Redact(%q) = %q still holds the password", tc.dsn, got)
			}
			if !strings.Contains(got, "db.example") {
				t.Errorf("Redact(%q) = %q lost the host", tc.dsn, got)
			}
		})
	}
}

// The values of libpq's keys that hold no secret stay, so that a target can
// still be told from another.
func TestRedactKeepsPublicKeys(t *testing.T) {
	dsn := "host=db.example port=6432 user=bench dbname=app sslmode=require application_name=x target_session_attrs=read-write"
	if got := Redact(dsn); got != dsn {
		t.Errorf("Redact(%q) = %q, want it unchanged", dsn, got)
	}
}

func TestParseErrorHidesPassword(t *testing.T) {
	_, err := Parse("host=localhost port=notaport password=s3cr3t-Pw")
	if err == nil || strings.Contains(err.Error(), "s3cr3t-Pw") || !strings.Contains(err.Error(), "invalid DSN") {
		t.Errorf("Parse error %v: want an 'invalid DSN' error without the password", err)
	}
}
