package pgtest_test

import (
	"context"
	"os"
	"strconv"
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
