package driver

import (
	"github.com/pgbakeoff/pgbakeoff/internal/outage"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Outage is a span during which one client had no connection (see outage.Outage).
type Outage = outage.Outage

// ConnectErrorCount is how often reconnecting failed for one cause (see
// outage.ConnectErrorCount). A failed attempt is not a transaction: it is in
// neither Result.Failed nor Result.Errors.
type ConnectErrorCount = outage.ConnectErrorCount

// OutageSeconds is the wall time during which at least one client had lost its
// connection: the union of the clients' outages.
func (res *Result) OutageSeconds() float64 { return outage.Seconds(res.Outages) }

func (r *runner) scrub(s string) string { return target.Scrub(s, r.cfg.Target.Config.Password) }
