// Package localfault does a run's faults to servers pgbakeoff runs itself: a
// crash, a restart, a failover to a standby and a switchover, on a localpg
// Cluster (a primary alone is a cluster of one). It is the engine.Injector of
// local targets, and stands apart from localpg, which knows nothing of runs,
// and from the engine, which knows nothing of local servers.
package localfault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
)

// Injector does faults to a cluster.
type Injector struct {
	Cluster *localpg.Cluster
	// Log, when set, takes a line for each step of a fault.
	Log func(format string, args ...any)
}

// rejoinTimeout is how long an old primary may take to stream from the new one
// before it is cloned again: one whose WAL went past the promotion never does.
const rejoinTimeout = 10 * time.Second

// Can says why kind cannot be done to the cluster: a failover or switchover
// needs a standby.
func (in Injector) Can(kind engine.FaultKind) error {
	switch kind {
	case engine.FaultCrash, engine.FaultRestart:
		return nil
	case engine.FaultFailover, engine.FaultSwitchover:
		if len(in.Cluster.Nodes) < 2 {
			return fmt.Errorf("server %s has no standby to promote: start it with --standbys 1 (in a study, local: {standbys: 1})", in.Cluster.Name)
		}
		return nil
	}
	return fmt.Errorf("%s is not a fault done to a local server", kind)
}

// Inject does the fault to the cluster's primary, and says when the server
// stopped, when a standby was promoted and when it accepted writes.
func (in Injector) Inject(ctx context.Context, kind engine.FaultKind) (engine.ServerEvents, error) {
	primary, err := in.Cluster.Primary(ctx)
	if err != nil {
		return engine.ServerEvents{}, err
	}
	switch kind {
	case engine.FaultCrash:
		return in.crash(ctx, primary)
	case engine.FaultRestart:
		return in.restart(ctx, primary)
	case engine.FaultFailover, engine.FaultSwitchover:
		return in.failover(ctx, primary, kind == engine.FaultSwitchover)
	}
	return engine.ServerEvents{}, in.Can(kind)
}

// crash kills the primary, its postmaster and backends at once as a crash of
// its machine would (localpg.Server.Crash), and starts it again: it recovers
// from its WAL.
func (in Injector) crash(ctx context.Context, s *localpg.Server) (engine.ServerEvents, error) {
	var ev engine.ServerEvents
	t0 := time.Now()
	if err := s.Crash(); err != nil {
		return ev, err
	}
	ev.Stopped = time.Now()
	in.log("fault: killed server %s; starting it again", s.Name)
	err := s.Restart(ctx)
	ev.Ready = readyAt(s, t0)
	return ev, err
}

// restart shuts the primary down fast and starts it again.
func (in Injector) restart(ctx context.Context, s *localpg.Server) (engine.ServerEvents, error) {
	var ev engine.ServerEvents
	t0 := time.Now()
	if err := s.Stop(ctx); err != nil {
		return ev, err
	}
	ev.Stopped = time.Now()
	in.log("fault: stopped server %s; starting it again", s.Name)
	err := s.Restart(ctx)
	ev.Ready = readyAt(s, t0)
	return ev, err
}

// failover takes the primary away, killed (or, for a switchover, shut down
// cleanly, which hands its standbys all its WAL first), promotes the most
// advanced standby, and brings the other nodes back as the new primary's
// standbys, the old primary cloned again where it cannot follow.
func (in Injector) failover(ctx context.Context, old *localpg.Server, clean bool) (_ engine.ServerEvents, err error) {
	var ev engine.ServerEvents
	next, err := in.mostAdvanced(ctx, old)
	if err != nil {
		return ev, err
	}
	t0 := time.Now()
	if clean {
		err = old.Stop(ctx)
	} else {
		err = old.Crash()
	}
	if err != nil {
		return ev, err
	}
	ev.Stopped = time.Now()
	if err := in.Cluster.Promote(ctx, next); err != nil {
		return ev, err
	}
	ev.Primary = &sampler.Local{PostmasterPID: next.PID, DataDir: next.DataDir}
	if at, ok, _ := next.LoggedAt(localpg.LogPromoted, t0); ok {
		ev.Promoted = at
	}
	ev.Ready = readyAt(next, t0)
	in.log("fault: server %s promoted in place of %s", next.Name, old.Name)
	// Until a standby follows the new primary, its commits wait for none, as a
	// managed service's do while it replaces the lost node: a synchronous
	// primary alone would accept no commit at all.
	sync, err := waitsForStandby(ctx, next)
	if err == nil && sync {
		err = setSync(ctx, next, false)
	}
	if err != nil {
		return ev, err
	}
	if sync {
		// Synchronous again whatever happens to the others: the target's later
		// runs must measure what it is.
		defer func() {
			rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if rerr := setSync(rctx, next, true); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	for _, node := range in.Cluster.Nodes {
		if node != next {
			if err = in.rejoin(ctx, node, next); err != nil {
				return ev, err
			}
		}
	}
	return ev, nil
}

// waitsForStandby tells whether s's commits wait for a synchronous standby.
func waitsForStandby(ctx context.Context, s *localpg.Server) (bool, error) {
	var names string
	err := exec(ctx, s, func(conn *pgconn.PgConn) error {
		res := conn.Exec(ctx, "show synchronous_standby_names")
		rows, err := res.ReadAll()
		if err == nil && len(rows) > 0 && len(rows[0].Rows) > 0 {
			names = string(rows[0].Rows[0][0])
		}
		return err
	})
	return names != "", err
}

// setSync makes s's commits wait for a synchronous standby again (on), or for
// none (off), and reloads its configuration.
func setSync(ctx context.Context, s *localpg.Server, on bool) error {
	sql := "alter system set synchronous_standby_names = ''"
	if on {
		sql = "alter system reset synchronous_standby_names"
	}
	return exec(ctx, s, func(conn *pgconn.PgConn) error {
		if _, err := conn.Exec(ctx, sql).ReadAll(); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "select pg_reload_conf()").ReadAll()
		return err
	})
}

// exec runs f on a session of its own with s.
func exec(ctx context.Context, s *localpg.Server, f func(*pgconn.PgConn) error) error {
	conn, err := pgconn.Connect(ctx, s.DSN())
	if err != nil {
		return fmt.Errorf("server %s: %w", s.Name, err)
	}
	defer conn.Close(context.Background())
	if err := f(conn); err != nil {
		return fmt.Errorf("server %s: %w", s.Name, err)
	}
	return nil
}

// mostAdvanced is the running standby that has received the most WAL.
func (in Injector) mostAdvanced(ctx context.Context, primary *localpg.Server) (*localpg.Server, error) {
	var best *localpg.Server
	var bestLSN uint64
	for _, s := range in.Cluster.Nodes {
		if s == primary || !s.Running() {
			continue
		}
		st, err := s.State(ctx)
		if err != nil || !st.Standby {
			continue
		}
		if best == nil || st.Received > bestLSN {
			best, bestLSN = s, st.Received
		}
	}
	if best == nil {
		return nil, errors.New("no running standby to promote")
	}
	return best, nil
}

// rejoin makes node a standby of primary: it follows on the WAL it has, or,
// where its WAL went past the promotion (a primary killed before its standby
// had everything), is cloned again.
func (in Injector) rejoin(ctx context.Context, node, primary *localpg.Server) error {
	err := in.Cluster.Follow(ctx, node, primary)
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
		err = in.Cluster.WaitStreaming(wctx, node, primary)
		cancel()
	}
	if err == nil {
		return nil
	}
	in.log("fault: server %s cannot follow %s (%v); cloning it again", node.Name, primary.Name, err)
	if err := in.Cluster.Reclone(ctx, node, primary); err != nil {
		return err
	}
	return in.Cluster.WaitStreaming(ctx, node, primary)
}

// readyAt is when s logged that it accepted connections after t0; zero when its
// log does not say (a log_line_prefix of the user's own).
func readyAt(s *localpg.Server, t0 time.Time) time.Time {
	if at, ok, err := s.LoggedAt(localpg.LogReady, t0); err == nil && ok {
		return at
	}
	return time.Time{}
}

func (in Injector) log(format string, args ...any) {
	if in.Log != nil {
		in.Log(format, args...)
	}
}
