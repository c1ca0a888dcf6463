package connfail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// TestCause: each kind of failure, as pgx, the resolver, the network and the
// protocol report it, has its cause.
func TestCause(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"terminated", fmt.Errorf("server closed the connection: %w", &pgconn.PgError{Severity: "FATAL", Code: "57P01"}), "57P01"},
		{"starting-up", &target.ConnectError{Err: &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}}, "57P03"},
		{"too-many", &target.ConnectError{Err: &pgconn.PgError{Code: "53300"}}, "53300"},
		{"dns", &target.ConnectError{Err: fmt.Errorf("hostname resolving error: %w", &net.DNSError{Err: "no such host", Name: "db", IsNotFound: true})}, "dns: no such host"},
		{"dns-timeout", &net.DNSError{Err: "i/o timeout", IsTimeout: true}, "dns: timeout"},
		{"deadline", &net.OpError{Op: "raw-read", Err: os.ErrDeadlineExceeded}, "timeout"},
		{"connect-timeout", fmt.Errorf("connect: %w", context.DeadlineExceeded), "timeout"},
		{"reset", op(syscall.ECONNRESET), "connection reset"},
		{"refused", &target.ConnectError{Err: errors.Join(op(syscall.ECONNREFUSED))}, "connection refused"},
		{"no-socket", op(syscall.ENOENT), "connection refused"},
		{"broken-pipe", op(syscall.EPIPE), "broken pipe"},
		{"eof", io.EOF, "EOF"},
		{"unexpected-eof", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), "EOF"},
		{"unreachable", op(syscall.EHOSTUNREACH), "unreachable"},
		{"closed", fmt.Errorf("read: %w", pgwire.ErrClosed), "closed"},
		{"net-closed", net.ErrClosed, "closed"},
		{"unknown", errors.New("something else"), "other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cause(tc.err); got != tc.want {
				t.Errorf("Cause(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
	if got := Name("57P03"); got != "57P03 cannot_connect_now" {
		t.Errorf("Name(57P03) = %q", got)
	}
	if got := Name("timeout"); got != "timeout" {
		t.Errorf("Name(timeout) = %q", got)
	}
}

// TestWaitStartingUp: a server starting up is tried again until it answers, with
// each failure passed on; anything else returns at once, and waiting gives up
// after the time given, saying how long it tried.
func TestWaitStartingUp(t *testing.T) {
	ctx := context.Background()
	startingUp := &target.ConnectError{Err: &pgconn.PgError{Code: "57P03"}}
	tries, failed := 0, 0
	err := WaitStartingUp(ctx, time.Minute, 20*time.Millisecond, func() error {
		if tries++; tries < 4 {
			return startingUp
		}
		return nil
	}, func(error) { failed++ })
	if err != nil || tries != 4 || failed != 3 {
		t.Errorf("%v after %d tries, %d failures passed on; want nil after 4 and 3", err, tries, failed)
	}
	tries = 0
	missing := &pgconn.PgError{Code: "3D000"}
	if err := WaitStartingUp(ctx, time.Minute, time.Second, func() error { tries++; return missing }, nil); err != missing || tries != 1 {
		t.Errorf("%v after %d tries, want 3D000 at once", err, tries)
	}
	start := time.Now()
	err = WaitStartingUp(ctx, 100*time.Millisecond, 10*time.Millisecond, func() error { return startingUp }, nil)
	if Cause(err) != "57P03" || !strings.Contains(err.Error(), "tried ") || time.Since(start) > 5*time.Second {
		t.Errorf("gave up with %v after %s", err, time.Since(start))
	}
}
