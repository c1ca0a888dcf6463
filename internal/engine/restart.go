package engine

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// A crash and recovery ends every session and refuses new ones until it is
// over, but keeps the postmaster and its start time; only its statistics show
// it afterwards, all reset. Whichever source saw it flags the run: the
// sampler, which compares each reading with the last that succeeded; the
// control session's readings before the first client connected and after the
// last disconnected; and what the clients and the sampler were told by the
// server while it was down.

// restartEvidence is what tells that the server restarted, or crashed and
// recovered, during a run, each for people.
func restartEvidence(res *driver.Result, sres sampler.Result, st serverStats) []string {
	var out []string
	before, after := st.epochs[store.PointBeforeConnect], st.epochs[store.PointAfterDisconnect]
	read := st.values[store.PointBeforeConnect] != nil && st.values[store.PointAfterDisconnect] != nil
	if sres.Restarted || read && !after.Started.Equal(before.Started) {
		out = append(out, "pg_postmaster_start_time changed")
	}
	switch {
	case read && after.Crashed(before):
		out = append(out, fmt.Sprintf("its shared statistics were reset %s under the same postmaster, as a crash and recovery resets them", resetWhen(after.SharedReset)))
	case sres.Crashed:
		out = append(out, fmt.Sprintf("its shared statistics were reset %s under the same postmaster, as a crash and recovery resets them", resetWhen(sres.ResetAt)))
	case sres.Reset && sres.ResetAt.IsZero() && !sres.Restarted:
		out = append(out, "the database's commit counter went backwards with no reset of the statistics")
	}
	down := map[string]bool{}
	for _, o := range res.Outages {
		down[o.Cause] = true
	}
	for _, c := range res.ConnectErrors {
		down[c.Cause] = true
	}
	var said *pgconn.PgError // the server's own words, when a session kept them
	for _, pe := range []*pgconn.PgError{sres.Down, st.down} {
		if pe != nil {
			down[pe.Code] = true
			if said == nil {
				said = pe
			}
		}
	}
	if down["57P02"] {
		out = append(out, "sessions were ended as another server process had crashed ("+connfail.Name("57P02")+")")
	}
	if down["57P03"] {
		s := "connections were refused as it was starting up, recovering or shutting down (" + connfail.Name("57P03")
		if said != nil && said.Code == "57P03" {
			s += ": " + said.Message
		}
		out = append(out, s+")")
	}
	return out
}

// statsReset tells whether the server's statistics were reset during a run
// (by a crash and recovery, or pg_stat_reset()), and when, if the server says.
func statsReset(sres sampler.Result, st serverStats) (bool, time.Time) {
	_, reset, at := st.compare(store.PointBeforeConnect, store.PointAfterDisconnect)
	if sres.Reset && sres.ResetAt.After(at) {
		at = sres.ResetAt
	}
	return reset || sres.Reset, at
}
