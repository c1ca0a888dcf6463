package pgtest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

func queryString(t *testing.T, dsn, sql string, args ...any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	var got string
	if err := conn.QueryRow(ctx, sql, args...).Scan(&got); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return got
}

func TestDSN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query, want string
	}{
		{query: "SELECT current_database()", want: "postgres"},
		{query: "SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user", want: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			if got := queryString(t, pgtest.DSN(t), tt.query); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestServerSettings(t *testing.T) {
	t.Parallel()
	s := pgtest.Server(t)
	tests := []struct {
		name, want string
	}{
		{name: "fsync", want: "off"},
		{name: "max_connections", want: "200"},
		{name: "port", want: strconv.Itoa(s.Port)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := queryString(t, s.DSN(), "SELECT current_setting($1)", tt.name); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestNewDatabase(t *testing.T) {
	t.Parallel()
	var names []string
	var open []*pgx.Conn
	t.Run("create", func(t *testing.T) {
		for range 2 {
			dsn := pgtest.NewDatabase(t)
			names = append(names, queryString(t, dsn, "SELECT current_database()"))
			// A session left open must not keep the database from being dropped.
			conn, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, conn)
		}
		if len(names) != 2 || names[0] == names[1] || names[0] == "postgres" {
			t.Errorf("databases = %q, want two new distinct ones", names)
		}
	})
	for _, conn := range open {
		_ = conn.Close(context.Background()) // the server has ended these sessions
	}
	for _, name := range names {
		got := queryString(t, pgtest.DSN(t), "SELECT count(*)::text FROM pg_database WHERE datname = $1", name)
		if got != "0" {
			t.Errorf("database %s still exists after its test", name)
		}
	}
}

// TestLoaded: tests asking for the same key get copies of one load, each their
// own to change; a load that fails fails every test asking for its key, and
// leaves no database behind.
func TestLoaded(t *testing.T) {
	t.Parallel()
	loads := 0
	load := func(dsn string) error {
		loads++
		pgtest.Query(t, dsn, "CREATE TABLE loaded (n int); INSERT INTO loaded VALUES (1)")
		return nil
	}
	a := pgtest.Loaded(t, "pgtest-loaded", load)
	b := pgtest.Loaded(t, "pgtest-loaded", load)
	if loads != 1 {
		t.Errorf("loaded %d times for two copies, want once", loads)
	}
	if na, nb := pgtest.Query(t, a, "SELECT current_database()"), pgtest.Query(t, b, "SELECT current_database()"); na == nb {
		t.Errorf("both copies are database %s", na)
	}
	pgtest.Query(t, a, "UPDATE loaded SET n = 2")
	if got := pgtest.Query(t, b, "SELECT string_agg(n::text, ',') FROM loaded"); got != "1" {
		t.Errorf("the other copy holds %q after one was changed, want the loaded 1", got)
	}

	broken := 0
	fail := func(string) error { broken++; return errors.New("no data today") }
	for i := range 2 {
		rec := &fatalRecorder{T: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			pgtest.Loaded(rec, "pgtest-broken", fail)
		}()
		<-done
		if !strings.Contains(rec.msg, "no data today") {
			t.Errorf("asking for a failed load (%d): %q, want its error", i+1, rec.msg)
		}
	}
	if broken != 1 {
		t.Errorf("a failing load ran %d times, want once", broken)
	}
	// A load that ends its test midway, as t.Fatal does, fails the next test too.
	stop := func(string) error { runtime.Goexit(); return nil }
	var msgs []string
	for range 2 {
		rec := &fatalRecorder{T: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			pgtest.Loaded(rec, "pgtest-stopped", stop)
		}()
		<-done
		msgs = append(msgs, rec.msg)
	}
	if msgs[0] != "" || !strings.Contains(msgs[1], "the load stopped the test that ran it") {
		t.Errorf("a load that stopped its test: %q, then %q; want nothing more, then that it stopped", msgs[0], msgs[1])
	}
	if got := pgtest.Query(t, pgtest.DSN(t), "SELECT count(*) FROM pg_database WHERE datname LIKE 'tmpl_pgtest_broken%' OR datname LIKE 'tmpl_pgtest_stopped%'"); got != "0" {
		t.Errorf("%s databases left by the failed loads", got)
	}
}

// fatalRecorder is a test whose Fatalf keeps the message and ends its goroutine,
// as testing.T's does.
type fatalRecorder struct {
	*testing.T
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
