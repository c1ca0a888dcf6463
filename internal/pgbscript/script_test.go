package pgbscript

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestParseSplitsCommands(t *testing.T) {
	src := `-- a comment line, then a blank one

SELECT 1;
UPDATE t
   SET v = v + :delta   -- a comment with a ; inside
 WHERE k = :k;
\set delta random(1, 10)
SELECT ';\' AS q, $$ ; \ $$, E'\';', "a;b" FROM (SELECT 1;
2) x;
SELECT 5 \; SELECT 6 AS six \gset p_
SELECT :x::text, :'q', ::y, a[1:2], :1 \aset
\if :delta > 5
  \sleep 10ms
\elif :delta = 1
  \sleep :delta us
\else
  \shell echo :delta
\endif
/* c1 /* nested; */ ; */ SELECT 7`
	vs := NewVars()
	s, err := Parse("t.sql", src, vs)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind CmdKind
		line int
		sql  string
	}
	wants := []want{
		{SQL, 3, "SELECT 1;"},
		{SQL, 4, "UPDATE t\n   SET v = v + :delta   -- a comment with a ; inside\n WHERE k = :k;"},
		{Set, 7, ""},
		{SQL, 8, "SELECT ';\\' AS q, $$ ; \\ $$, E'\\';', \"a;b\" FROM (SELECT 1;\n2) x;"},
		{SQL, 10, "SELECT 5 ; SELECT 6 AS six "},
		{SQL, 11, "SELECT :x::text, :'q', ::y, a[1:2], :1 "},
		{If, 12, ""}, {Sleep, 13, ""}, {Elif, 14, ""}, {Sleep, 15, ""}, {Else, 16, ""},
		{Shell, 17, ""}, {Endif, 18, ""},
		{SQL, 19, "/* c1 /* nested; */ ; */ SELECT 7"},
	}
	if len(s.Commands) != len(wants) {
		for _, c := range s.Commands {
			t.Logf("%d line %d: %q", c.Kind, c.Line, c.SQL)
		}
		t.Fatalf("%d commands, want %d", len(s.Commands), len(wants))
	}
	for i, w := range wants {
		c := s.Commands[i]
		if c.Kind != w.kind || c.Line != w.line || c.SQL != w.sql {
			t.Errorf("command %d: kind %d line %d %q; want kind %d line %d %q", i, c.Kind, c.Line, c.SQL, w.kind, w.line, w.sql)
		}
	}
	if c := s.Commands[4]; c.Store != Gset || c.StorePrefix != "p_" {
		t.Errorf("\\gset p_ not attached: %+v", c)
	}
	if c := s.Commands[5]; c.Store != Aset || len(c.Refs) != 2 || c.Refs[0].Name != "x" || c.Refs[0].Quote != 0 ||
		c.Refs[1].Name != "q" || c.Refs[1].Quote != '\'' || c.SQL[c.Refs[1].Start:c.Refs[1].End] != ":'q'" {
		t.Errorf("refs of %q: %+v (store %d)", c.SQL, c.Refs, c.Store)
	}
	if c := s.Commands[1]; len(c.Refs) != 2 || c.Refs[0].Name != "delta" || c.Refs[1].Name != "k" || c.FirstLine != "UPDATE t" {
		t.Errorf("refs %+v, first line %q", c.Refs, c.FirstLine)
	}
	if c := s.Commands[7]; c.SleepN != 10 || c.SleepUs != 1000 || c.SleepVar != "" {
		t.Errorf("\\sleep 10ms: %+v", c)
	}
	if c := s.Commands[9]; c.SleepVar != "delta" || c.SleepUs != 1 {
		t.Errorf("\\sleep :delta us: %+v", c)
	}
	if c := s.Commands[11]; strings.Join(c.Words, " ") != "echo :delta" {
		t.Errorf("\\shell words %q", c.Words)
	}
}

func TestParseContinuationLines(t *testing.T) {
	s, err := Parse("t.sql", "\\set x 1 + \\\n   2\n\\setshell y echo \\\n 3\nSELECT :x", NewVars())
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Commands[0]; c.FirstLine != "\\set x 1 + \\\n   2" {
		t.Errorf("first line %q", c.FirstLine)
	}
	env := NewEnv(NewVars())
	if v, err := s.Commands[0].Expr.Eval(env); err != nil || v.String() != "3" {
		t.Errorf("continued \\set = %v, %v", v, err)
	}
	if c := s.Commands[1]; strings.Join(c.Words, " ") != "echo 3" || c.Line != 3 {
		t.Errorf("continued \\setshell: %q on line %d", c.Words, c.Line)
	}
	if c := s.Commands[2]; c.Line != 5 {
		t.Errorf("SQL after continuations on line %d, want 5", c.Line)
	}
}

// badScripts fail to parse. Their messages are compared with what pgbench prints for
// them, caret and all (TestParseErrorsMatchPgbench).
var badScripts = []struct{ name, src string }{
	{"set without expression", "\\set i\n"},
	{"set incomplete", "\\set i 1 +\n"},
	{"set two values", "\\set a 1 2\n"},
	{"set without name", "\\set\n"},
	{"set bad character", "\\set i ;\n"},
	{"set unknown function", "\\set i noSuchFunction()\n"},
	{"set wrong arity", "SELECT 1;\n\\set a random(1)\n"},
	{"set least without arguments", "\\set i least()\n"},
	{"set bigint overflow", "\\set i 100000000000000000000\n"},
	{"set double overflow", "\\set d 1.0E309\n"},
	{"set continued error", "\\set a 1 +\\\n  foo(2)\n"},
	{"set comment", "\\set a 1 -- comment\n"},
	{"set no final newline", "\\set i 1 +"},
	{"if without expression", "\\if\n\\endif\n"},
	{"sleep without argument", "\\sleep\n"},
	{"sleep unit", "\\sleep 1 week\n"},
	{"sleep glued unit", "\\sleep 10xyz\n"},
	{"sleep not a number", "\\sleep abc\n"},
	{"sleep too many", "\\sleep too many args\n"},
	{"setshell without command", "\\setshell var\n"},
	{"shell without command", "\\shell\n"},
	{"else with argument", "\\if 1\n\\else BAD\n\\endif\n"},
	{"endif with argument", "\\if 1\n\\endif BAD\n"},
	{"gset with two prefixes", "SELECT 1 \\gset a b\n"},
	{"unknown command", "\\nosuchcommand\n"},
	{"gset first", "\\gset\n"},
	{"gset after set", "\\set i +1\n\\gset\n"},
	{"gset twice", "SELECT 1 AS i \\gset\n\\gset\n"},
	{"elif without if", "SELECT 1;\n\\elif 1\n"},
	{"elif after else", "\\if 1\n\\else\n\\elif 0\n\\endif\n"},
	{"else without if", "\\else\n"},
	{"else after else", "\\if 1\n\\else\n\\else\n\\endif\n"},
	{"endif without if", "SELECT 1;\n\\endif\n"},
	{"if without endif", "\\if 1\nSELECT 1;\n"},
	{"empty", "-- nothing\n\n"},
}

func TestParseErrors(t *testing.T) {
	for _, b := range badScripts {
		if _, err := Parse("bad.sql", b.src, NewVars()); err == nil {
			t.Errorf("%s: parsed", b.name)
		}
	}
}

// pgbenchStderr runs pgbench on a script in dir and returns its exit code and its
// standard error with the "pgbench: error: " prefixes taken off.
func pgbenchStderr(t *testing.T, pgbench, dir string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pgbench, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("pgbench: %v", err)
	}
	return code, strings.ReplaceAll(stderr.String(), "pgbench: error: ", "")
}

// pgbench parses its scripts before it connects, so it needs no server to tell why
// one does not parse.
func TestParseErrorsMatchPgbench(t *testing.T) {
	pgtest.Long(t)
	pgbench := pgtest.Pgbench(t)
	dir := t.TempDir()
	for _, b := range badScripts {
		if err := os.WriteFile(filepath.Join(dir, "bad.sql"), []byte(b.src), 0o644); err != nil {
			t.Fatal(err)
		}
		code, want := pgbenchStderr(t, pgbench, dir, "-n", "-t", "1", "-f", "bad.sql", "host=/nonexistent port=1")
		if code != 1 {
			t.Errorf("%s: pgbench exited %d:\n%s", b.name, code, want)
			continue
		}
		_, err := Parse("bad.sql", b.src, NewVars())
		if err == nil {
			t.Errorf("%s: parsed; pgbench says\n%s", b.name, want)
			continue
		}
		if got := err.Error() + "\n"; got != want {
			t.Errorf("%s:\ngot:\n%s\npgbench:\n%s", b.name, got, want)
		}
	}
}

func TestQuoting(t *testing.T) {
	for _, c := range []struct{ in, lit, ident string }{
		{"plain", "'plain'", `"plain"`},
		{"it's", "'it''s'", `"it's"`},
		{`a\b`, ` E'a\\b'`, `"a\b"`},
		{`say "hi"`, `'say "hi"'`, `"say ""hi"""`},
	} {
		if got := string(QuoteLiteral(nil, []byte(c.in))); got != c.lit {
			t.Errorf("QuoteLiteral(%q) = %q, want %q", c.in, got, c.lit)
		}
		if got := string(QuoteIdent(nil, []byte(c.in))); got != c.ident {
			t.Errorf("QuoteIdent(%q) = %q, want %q", c.in, got, c.ident)
		}
	}
}

// The semicolons of a BEGIN ATOMIC body belong to its CREATE FUNCTION or
// PROCEDURE, as psql's lexer (and so pgbench) keeps them; elsewhere BEGIN and END
// are words like others.
func TestParseAtomicBodies(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"CREATE OR REPLACE FUNCTION f(a int) RETURNS int LANGUAGE sql\nBEGIN ATOMIC\n SELECT CASE WHEN a > 0 THEN 1 ELSE 0 END;\n SELECT a + 1;\nEND;\nSELECT f(1);",
			[]string{"CREATE OR REPLACE FUNCTION f(a int) RETURNS int LANGUAGE sql\nBEGIN ATOMIC\n SELECT CASE WHEN a > 0 THEN 1 ELSE 0 END;\n SELECT a + 1;\nEND;", "SELECT f(1);"}},
		{"create procedure p() language sql begin atomic select 1; select (2); end; call p();",
			[]string{"create procedure p() language sql begin atomic select 1; select (2); end;", "call p();"}},
		{"BEGIN; SELECT 1; END;", []string{"BEGIN;", "SELECT 1;", "END;"}},
		{"CREATE TABLE begin_t (x int); SELECT begin FROM (SELECT 1 AS begin) s;",
			[]string{"CREATE TABLE begin_t (x int);", "SELECT begin FROM (SELECT 1 AS begin) s;"}},
		{"CREATE FUNCTION g(x int DEFAULT (CASE WHEN true THEN 1 END)) RETURNS int LANGUAGE sql RETURN x; SELECT 2;",
			[]string{"CREATE FUNCTION g(x int DEFAULT (CASE WHEN true THEN 1 END)) RETURNS int LANGUAGE sql RETURN x;", "SELECT 2;"}},
		{"CREATE FUNCTION h() RETURNS int AS $$ begin; $$ LANGUAGE sql; SELECT \"begin\";",
			[]string{"CREATE FUNCTION h() RETURNS int AS $$ begin; $$ LANGUAGE sql;", "SELECT \"begin\";"}},
	} {
		s, err := Parse("a.sql", c.src, NewVars())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cmd := range s.Commands {
			got = append(got, cmd.SQL)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q split as\n%q, want\n%q", c.src, got, c.want)
		}
	}
}
