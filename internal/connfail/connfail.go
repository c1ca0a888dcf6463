// Package connfail says why a connection to PostgreSQL was lost or could not be
// made: a cause per failure (Cause), in words for people (Name), and whether it is
// worth waiting out before a run starts (WaitStartingUp). It stands apart from the
// driver because a run's checks, reports and outages all speak of causes the same
// way, whether or not a client saw them.
package connfail

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
)

// Cause classifies why a connection was lost or could not be made. It is the
// SQLSTATE when the server said why: 57P01 admin_shutdown (pg_terminate_backend, a
// fast shutdown, the postmaster gone), 57P02 crash_shutdown, 57P03
// cannot_connect_now (starting up, in recovery, shutting down), 53300
// too_many_connections. Otherwise it is a network cause: "dns: no such host" (or
// "dns: timeout", "dns: " and the resolver's words), "timeout" (a deadline or
// a connect timeout), "connection refused" (a missing Unix socket included),
// "connection reset", "broken pipe", "EOF" (the server closed without a word),
// "unreachable", "closed", or "other".
func Cause(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code != "" {
		return pe.Code
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		switch {
		case dns.IsNotFound:
			return "dns: no such host"
		case dns.IsTimeout:
			return "dns: timeout"
		}
		return "dns: " + dns.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return "connection refused"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "unreachable"
	case errors.Is(err, pgwire.ErrClosed), errors.Is(err, net.ErrClosed):
		return "closed"
	}
	return "other"
}

// sqlstateNames are the condition names of the SQLSTATEs a lost or refused
// connection is likely to carry.
var sqlstateNames = map[string]string{
	"08006": "connection_failure",
	"25P03": "idle_in_transaction_session_timeout",
	"28000": "invalid_authorization_specification",
	"28P01": "invalid_password",
	"3D000": "invalid_catalog_name",
	"53300": "too_many_connections",
	"57P01": "admin_shutdown",
	"57P02": "crash_shutdown",
	"57P03": "cannot_connect_now",
	"57P04": "database_dropped",
	"57P05": "idle_session_timeout",
}

// Name is a cause for people: an SQLSTATE with its condition name
// ("57P01 admin_shutdown"), any other cause as it is.
func Name(cause string) string {
	if n, ok := sqlstateNames[cause]; ok {
		return cause + " " + n
	}
	return cause
}

// StartingUpWait is how long WaitStartingUp waits when no time is given.
const StartingUpWait = 30 * time.Second

// WaitStartingUp calls try until it succeeds or fails with anything but a server
// that says it is starting up, in recovery or shutting down (57P03), or a name server
// that timed out: those are tried again with jittered backoff up to maxBackoff, for up
// to wait (0: StartingUpWait), each failure passed to failed (which may be nil).
// Anything else (a wrong password, a missing database, too many connections for the
// clients asked for) returns at once, since waiting would not mend it; giving up
// says how long it tried.
func WaitStartingUp(ctx context.Context, wait, maxBackoff time.Duration, try func() error, failed func(error)) error {
	start := time.Now()
	wait = cmp.Or(wait, StartingUpWait)
	backoff := 10 * time.Millisecond
	for tries := 1; ; tries++ {
		err := try()
		if err == nil || ctx.Err() != nil || !transientAtStart(Cause(err)) {
			return err
		}
		if time.Since(start) >= wait {
			return fmt.Errorf("%w (tried %d times over %s)", err, tries, time.Since(start).Round(time.Millisecond))
		}
		if failed != nil {
			failed(err)
		}
		// The last sleep ends at the deadline, for one more try there.
		t := time.NewTimer(min(backoff/2+rand.N(backoff/2+1), wait-time.Since(start)))
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		backoff = min(backoff*2, max(maxBackoff, backoff))
	}
}

// transientAtStart tells the causes worth waiting out before a run starts.
func transientAtStart(cause string) bool {
	return cause == "57P03" || cause == "dns: timeout"
}
