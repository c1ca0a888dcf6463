package localpg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// What a fault needs from a cluster: which node is primary and how far each
// has got (State, Replication), promoting a standby (Promote), bringing a
// node back (Restart), as a standby of another primary (Follow, then
// WaitStreaming) or cloned again where it cannot rejoin (Reclone), and when
// the server logged that it was ready (LoggedAt).

// State is where a running node stands, read from the node itself.
type State struct {
	Standby bool // in recovery
	// Received is the end of the WAL the node holds: the current WAL
	// position on a primary, the last position received on a standby.
	Received uint64
	Replayed uint64 // the last position replayed; Received on a primary
}

// State asks the running server s whether it is a standby and how far its
// WAL goes.
func (s *Server) State(ctx context.Context) (State, error) {
	var st State
	err := s.query(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `select pg_is_in_recovery(),
			coalesce(pg_wal_lsn_diff(case when pg_is_in_recovery() then pg_last_wal_receive_lsn() else pg_current_wal_lsn() end, '0/0'), 0)::bigint,
			coalesce(pg_wal_lsn_diff(case when pg_is_in_recovery() then pg_last_wal_replay_lsn() else pg_current_wal_lsn() end, '0/0'), 0)::bigint`).
			Scan(&st.Standby, &st.Received, &st.Replayed)
	})
	if err != nil {
		return st, fmt.Errorf("state of server %q: %w", s.Name, err)
	}
	return st, nil
}

// Replica is a standby as its primary sees it, in pg_stat_replication.
type Replica struct {
	Name      string        // the standby's application_name: its node name
	State     string        // streaming, catchup, ...
	Sync      string        // async, sync, quorum or potential
	LagBytes  int64         // WAL written on the primary and not yet replayed there
	ReplayLag time.Duration // replay_lag: how long the last replayed WAL waited
}

// Replication lists the standbys connected to the primary s.
func (s *Server) Replication(ctx context.Context) ([]Replica, error) {
	var out []Replica
	err := s.query(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `select application_name, coalesce(state, ''), coalesce(sync_state, ''),
			coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), 0)::bigint,
			coalesce(extract(epoch from replay_lag), 0)::float8
			from pg_stat_replication order by application_name`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r Replica
			var lag float64
			if err := rows.Scan(&r.Name, &r.State, &r.Sync, &r.LagBytes, &lag); err != nil {
				return err
			}
			r.ReplayLag = time.Duration(lag * float64(time.Second))
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("replication of server %q: %w", s.Name, err)
	}
	return out, nil
}

// query runs f on a session of its own with s.
func (s *Server) query(ctx context.Context, f func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return f(conn)
}

// Primary is the running node that is not in recovery; with several (a
// split after a failover) the first.
func (c *Cluster) Primary(ctx context.Context) (*Server, error) {
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		if st, err := s.State(ctx); err == nil && !st.Standby {
			return s, nil
		}
	}
	return nil, fmt.Errorf("cluster %q has no running primary", c.Name)
}

// Promote makes the standby s a primary, waits until it is one, and creates
// the replication slots of the other nodes on it so that they can follow it.
func (c *Cluster) Promote(ctx context.Context, s *Server) error {
	err := s.query(ctx, func(conn *pgx.Conn) error {
		var done bool
		if err := conn.QueryRow(ctx, "select pg_promote(true, 60)").Scan(&done); err != nil {
			return err
		}
		if !done {
			return errors.New("not promoted within 60 s")
		}
		for _, other := range c.Nodes {
			if other == s {
				continue
			}
			if _, err := conn.Exec(ctx, `select pg_create_physical_replication_slot($1, true)
				where not exists (select from pg_replication_slots where slot_name = $1)`, slotName(other.Name)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("promote server %q: %w", s.Name, err)
	}
	return nil
}

// Restart stops s if it runs and starts it again with the settings it had,
// on its port. After a crash, the postmaster's children may outlive it for
// a moment; Restart waits for them to go.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(ctx); err != nil {
		return err
	}
	acct, err := s.account()
	if err == nil {
		err = s.rewriteConnConf(acct)
	}
	if err == nil {
		err = s.runAfterCrash(ctx, acct)
	}
	if err != nil {
		return fmt.Errorf("restart server %q: %w", s.Name, err)
	}
	return nil
}

// Follow restarts node as a standby of primary, on the WAL it has. A node
// whose WAL went past the point primary was promoted at cannot stream from
// it: WaitStreaming then fails, and Reclone brings it back.
func (c *Cluster) Follow(ctx context.Context, node, primary *Server) error {
	if err := node.Stop(ctx); err != nil {
		return err
	}
	acct, err := node.account()
	if err == nil {
		err = node.writeStandbyConf(acct, primary)
	}
	if err != nil {
		return fmt.Errorf("make server %q a standby of %q: %w", node.Name, primary.Name, err)
	}
	return node.Restart(ctx)
}

// Reclone replaces node's data with a new base backup of primary and starts
// it as primary's standby.
func (c *Cluster) Reclone(ctx context.Context, node, primary *Server) error {
	if err := node.Stop(ctx); err != nil {
		return err
	}
	acct, err := node.account()
	if err == nil {
		err = os.RemoveAll(node.DataDir)
	}
	if err == nil {
		err = os.Mkdir(node.DataDir, 0o700)
	}
	if err == nil {
		err = acct.chown(node.DataDir)
	}
	if err == nil {
		err = node.clone(ctx, acct, primary, io.Discard)
	}
	if err != nil {
		return fmt.Errorf("clone server %q again: %w", node.Name, err)
	}
	return c.Follow(ctx, node, primary)
}

// WaitStreaming waits until primary streams WAL to node and node has received
// all the WAL primary had written when the wait began. Streaming alone does not
// tell that node follows: one whose WAL went past the point primary was
// promoted at streams the old timeline for a moment, up to that point, and
// stops again, over and over; it never receives primary's newer WAL.
func (c *Cluster) WaitStreaming(ctx context.Context, node, primary *Server) error {
	target, err := primary.State(ctx)
	if err != nil {
		return err
	}
	for {
		reps, err := primary.Replication(ctx)
		for _, r := range reps {
			if r.Name != node.Name || r.State != "streaming" {
				continue
			}
			var st State
			if st, err = node.State(ctx); err == nil && st.Received >= target.Received {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server %q does not stream from %q (%v): %w", node.Name, primary.Name, err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Messages of the server log that LoggedAt looks for.
const (
	LogReady    = "database system is ready to accept connections"
	LogReadOnly = "database system is ready to accept read-only connections"
	LogPromoted = "received promote request"
)

// logTime reads the time at the start of a log line in the default
// log_line_prefix, '%m [%p] ', which a cluster logs in UTC.
var logTime = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC `)

// LoggedAt is the time of the last line of s's log that holds msg and was
// logged at or after since; ok is false when there is none.
func (s *Server) LoggedAt(msg string, since time.Time) (at time.Time, ok bool, err error) {
	b, err := os.ReadFile(s.LogFile)
	if err != nil {
		return at, false, fmt.Errorf("read log of server %q: %w", s.Name, err)
	}
	for line := range strings.Lines(string(b)) {
		m := logTime.FindStringSubmatch(line)
		if m == nil || !strings.Contains(line, msg) {
			continue
		}
		t, err := time.Parse("2006-01-02 15:04:05.000", m[1])
		if err == nil && !t.Before(since.Truncate(time.Millisecond)) {
			at, ok = t, true
		}
	}
	return at, ok, nil
}

// account is the user s runs as, for servers loaded from a registry too.
func (s *Server) account() (account, error) {
	if s.User == "" {
		return account{}, nil
	}
	return lookupAccount(s.User)
}

// connKeys are the settings of pgbakeoff.conf that name where the server
// listens.
var connKeys = regexp.MustCompile(`^(listen_addresses|port|unix_socket_directories) = `)

// rewriteConnConf writes s's port and socket directory into its
// pgbakeoff.conf, keeping the other settings: a cloned node has its
// primary's.
func (s *Server) rewriteConnConf(acct account) error {
	path := filepath.Join(s.DataDir, confFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var settings []Setting
	for line := range strings.Lines(string(b)) {
		name, value, ok := strings.Cut(strings.TrimRight(line, "\n"), " = ")
		if ok && !connKeys.MatchString(line) {
			settings = append(settings, Setting{Name: name, Value: unquoteConf(value)})
		}
	}
	return s.writeConf(acct, settings)
}

// unquoteConf undoes confQuote.
func unquoteConf(v string) string {
	v = strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
	return strings.ReplaceAll(strings.ReplaceAll(v, "''", "'"), `\\`, `\`)
}

// runAfterCrash starts s, trying again for a while when it exits at once
// because the backends of a killed postmaster still hold its shared memory.
// Crash recovery replays the WAL written since the last checkpoint, which
// under load takes minutes: the wait for it is ctx's to bound (ten minutes
// without a deadline), not a start's minute.
func (s *Server) runAfterCrash(ctx context.Context, acct account) error {
	wait := 10 * time.Minute
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.run(ctx, acct, wait)
		if err == nil || time.Now().After(deadline) || !errors.Is(err, errExitedAtStart) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
