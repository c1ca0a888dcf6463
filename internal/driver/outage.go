package driver

import (
	"sort"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Outage is a span during which one client had no connection.
type Outage struct {
	Client     int
	Start, End time.Time // the loss noticed; connected again, or the run ended
	Cause      string    // why the connection was lost: see connfail.Cause
	Error      string    // the error that ended it, password removed
	Attempts   int       // connection attempts, the successful one included
	FailedTx   int       // transactions lost with the connection
	Recovered  bool      // connected again before the run ended
}

// ConnectErrorCount is how often reconnecting failed for one cause. A failed attempt
// is not a transaction: it is in neither Result.Failed nor Result.Errors.
type ConnectErrorCount struct {
	Cause   string // see connfail.Cause
	Count   int64
	Example string // password removed
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
	cause := connfail.Cause(err)
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
