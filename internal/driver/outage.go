package driver

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sort"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Outage is a span during which one client had no connection.
type Outage struct {
	Client     int
	Start, End time.Time // the loss noticed; connected again, or the run ended
	Cause      string    // why the connection was lost: see Cause
	Error      string    // the error that ended it, password removed
	Attempts   int       // connection attempts, the successful one included
	FailedTx   int       // transactions lost with the connection
	Recovered  bool      // connected again before the run ended
}

// ConnectErrorCount is how often reconnecting failed for one cause. A failed attempt
// is not a transaction: it is in neither Result.Failed nor Result.Errors.
type ConnectErrorCount struct {
	Cause   string // see Cause
	Count   int64
	Example string // password removed
}

// Cause classifies why a connection was lost or could not be made. It is the
// SQLSTATE when the server said why: 57P01 admin_shutdown (pg_terminate_backend, a
// fast shutdown, the postmaster gone), 57P02 crash_shutdown, 57P03
// cannot_connect_now (starting up, in recovery, shutting down), 53300
// too_many_connections. Otherwise it is a network cause: "dns: no such host" (or
// "dns: timeout", "dns: " and the resolver's words), "timeout" (Config.TxTimeout,
// Config.ConnectTimeout), "connection refused" (a missing Unix socket included),
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

// CauseName is a cause for people: an SQLSTATE with its condition name
// ("57P01 admin_shutdown"), any other cause as it is.
func CauseName(cause string) string {
	if n, ok := sqlstateNames[cause]; ok {
		return cause + " " + n
	}
	return cause
}

// OutageSeconds is the wall time during which at least one client had lost its
// connection: the union of the clients' outages.
func (res *Result) OutageSeconds() float64 {
	o := append([]Outage(nil), res.Outages...)
	sort.Slice(o, func(i, j int) bool { return o[i].Start.Before(o[j].Start) })
	var total time.Duration
	var curS, curE time.Time
	for i, x := range o {
		if i == 0 || x.Start.After(curE) {
			total += curE.Sub(curS)
			curS, curE = x.Start, x.End
		} else if x.End.After(curE) {
			curE = x.End
		}
	}
	total += curE.Sub(curS)
	return total.Seconds()
}

// The runner counts the clients still running and those without a connection, so
// that the main loop can end a run in which none has had one for
// Config.OutageTimeout. All of it happens only as connections are lost and made.

func (r *runner) scrub(s string) string { return target.Scrub(s, r.cfg.Target.Config.Password) }

// enterOutage notes that a client has lost its connection.
func (r *runner) enterOutage() {
	r.mu.Lock()
	r.down++
	r.downChanged()
	r.mu.Unlock()
}

// leaveOutage records a client's outage as over: connected again, or the client stops.
func (r *runner) leaveOutage(o Outage) {
	r.mu.Lock()
	r.down--
	r.outages = append(r.outages, o)
	r.downChanged()
	r.mu.Unlock()
}

// clientDone notes that a client has stopped for good.
func (r *runner) clientDone() {
	r.mu.Lock()
	r.live--
	r.downChanged()
	r.mu.Unlock()
}

// downChanged updates when every running client lost its connection and tells the
// main loop; r.mu is held.
func (r *runner) downChanged() {
	all := r.live > 0 && r.down >= r.live
	switch {
	case all && r.allDownSince.IsZero():
		r.allDownSince = time.Now()
	case !all && !r.allDownSince.IsZero():
		r.allDownSince = time.Time{}
	default:
		return
	}
	select {
	case r.downCh <- struct{}{}:
	default: // a notice is already pending; the main loop reads the state anew
	}
}

// connectFailed counts a failed reconnection attempt.
func (r *runner) connectFailed(err error) {
	cause := Cause(err)
	r.tickConnErrs.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastConnErr = cause
	e := r.connErrs[cause]
	if e == nil {
		e = &ConnectErrorCount{Cause: cause, Example: r.scrub(err.Error())}
		r.connErrs[cause] = e
	}
	e.Count++
}
