package sampler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// DatabaseCounters are the pg_stat_database columns stored for each run.
var DatabaseCounters = []string{"xact_commit", "xact_rollback", "blks_read", "blks_hit",
	"tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted", "conflicts", "deadlocks"}

// Control is a run's control session in the benchmark's database. It reads
// pg_stat_database around the run and counts the transactions it runs itself
// (every statement outside an explicit transaction is one, and they count in
// xact_commit like the benchmark's), so that readings can leave them out. A
// session found broken (backends terminated, a server restarted) is opened
// again at its next use. It is not safe for concurrent use.
type Control struct {
	connect func(context.Context) (*pgconn.PgConn, error)
	conn    *pgconn.PgConn
	version int   // server_version_num
	own     int64 // transactions of this control's sessions, since the first opened
	pid     atomic.Uint32
}

// NewControl opens the control session.
func NewControl(ctx context.Context, connect func(context.Context) (*pgconn.PgConn, error)) (*Control, error) {
	c := &Control{connect: connect}
	if _, err := c.Conn(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Conn is the session, opened again if it was lost. Whoever runs statements
// on it between two readings says how many with Ran; those before the first
// reading need not be counted, since readings are compared with each other.
func (c *Control) Conn(ctx context.Context) (*pgconn.PgConn, error) {
	if c.conn != nil && !c.conn.IsClosed() {
		return c.conn, nil
	}
	conn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.own += connectCommits
	if c.version == 0 {
		v, err := serverVersion(ctx, conn)
		if err != nil {
			closeConn(conn)
			return nil, err
		}
		c.own++
		c.version = v
	}
	c.conn = conn
	c.pid.Store(conn.PID())
	return conn, nil
}

// PID is the backend of the session; it may be called from any goroutine.
func (c *Control) PID() uint32 { return c.pid.Load() }

// Ran notes n statements run on Conn outside explicit transactions.
func (c *Control) Ran(n int) { c.own += int64(n) }

// Own is the number of transactions the control's sessions have run so far.
func (c *Control) Own() int64 { return c.own }

// Version is the server's server_version_num.
func (c *Control) Version() int { return c.version }

// Close ends the session.
func (c *Control) Close() {
	if c.conn != nil {
		closeConn(c.conn)
		c.conn = nil
	}
}

// query runs sql as one transaction on the session, opening it again and
// trying once more when the session was found broken.
func (c *Control) query(ctx context.Context, sql string) ([][]string, error) {
	var err error
	for range 2 {
		var conn *pgconn.PgConn
		if conn, err = c.Conn(ctx); err != nil {
			return nil, err
		}
		var rows [][]string
		rows, err = target.Query(ctx, conn, sql)
		if err == nil {
			c.own++
			return rows, nil
		}
		if ctx.Err() != nil || !broken(conn, err) {
			return nil, err
		}
		closeConn(conn)
		c.conn = nil
	}
	return nil, err
}

// Reading is one reading of pg_stat_database's counters (DatabaseCounters)
// for the benchmark's database.
type Reading struct {
	Values map[string]int64
	// Own is how many of the transactions counted in Values' xact_commit the
	// control's sessions ran.
	Own int64
	// Settled says the counters had stopped moving: every session whose work
	// is counted had reported it (see Settled).
	Settled bool
	// Epoch tells whether Values can be compared with another reading's.
	Epoch Epoch
}

// Commits is xact_commit without the control's own transactions and extra
// (the sampler's).
func (r Reading) Commits(extra int64) int64 { return r.Values["xact_commit"] - r.Own - extra }

// Database reads the counters from a fresh statistics snapshot, without
// waiting for other sessions to report: those still connected report at most
// once a second while busy. From 15 the control's own transactions are
// reported first; before 15 the last half second of them may be missing, and
// the statistics collector may answer with a file half a second old. Settled
// waits for all of it.
func (c *Control) Database(ctx context.Context) (Reading, error) {
	if c.version >= 150000 {
		// An idle session reports only ten seconds after its last report.
		if _, err := c.query(ctx, "select pg_stat_force_next_flush()"); err != nil && ctx.Err() != nil {
			return Reading{}, fmt.Errorf("read pg_stat_database: %w", err)
		}
	}
	own := c.own
	rows, err := c.query(ctx, databaseQuery(c.version))
	if err != nil {
		return Reading{}, fmt.Errorf("read pg_stat_database: %w", err)
	}
	if c.own-own > 1 {
		own = c.own - 1 // a new session: its start counts, the reading's own does not
	}
	v, epoch, err := parseDatabase(rows)
	return Reading{Values: v, Own: own, Epoch: epoch}, err
}

// settle says how to wait for the statistics to hold everything that ended
// before the reading: the statement that makes the control's own pending
// counts reported, and how long to wait between readings.
func (c *Control) settle() (flush string, pause time.Duration) {
	if c.version >= 150000 {
		// From 15 a backend reports its counts when idle at most once a
		// second (an idle one ten seconds after its last report), and at
		// once after pg_stat_force_next_flush(); the readings are of shared
		// memory and current.
		return "select pg_stat_force_next_flush(); ", 20 * time.Millisecond
	}
	// Before 15 a backend sends its counts to the statistics collector
	// when idle and at least PGSTAT_STAT_INTERVAL (500 ms) after its last
	// report, and a reader may be given the collector's file of up to
	// 500 ms ago: readings 600 ms apart each see a newer file, holding what
	// every session had sent before it was asked for.
	return "", 600 * time.Millisecond
}

// Settled reads the counters once every session whose work is to be counted
// has reported it: call it after those sessions have ended (WaitGone), since
// sessions report what is left as they exit. It reads until two readings in a
// row differ by exactly the control's own transactions between them, or until
// timeout; Settled is false then, and the reading is the last one (before 15,
// the statistics collector had not caught up, or other sessions went on
// committing). From 15 the first two readings agree unless another session
// reported in the few milliseconds between them: sessions still connected
// report at most once a second, so this is no test for them.
func (c *Control) Settled(ctx context.Context, timeout time.Duration) (Reading, error) {
	flush, pause := c.settle()
	deadline := time.Now().Add(timeout)
	if flush == "" {
		// The control's own recent transactions are sent with the next
		// statement's, once the interval since its last report has passed.
		if err := sleep(ctx, pause); err != nil {
			return Reading{}, err
		}
		if _, err := c.query(ctx, "select 1"); err != nil {
			return Reading{}, fmt.Errorf("read pg_stat_database: %w", err)
		}
	} else if _, err := c.query(ctx, strings.TrimSuffix(flush, "; ")); err != nil {
		// Without the right to call it, fall back to waiting out the
		// once-a-second report.
		flush, pause = "", 1100*time.Millisecond
	}
	var prev Reading
	for i := 0; ; i++ {
		if err := sleep(ctx, pause); err != nil {
			return Reading{}, err
		}
		own := c.own
		rows, err := c.query(ctx, flush+databaseQuery(c.version))
		if err != nil {
			return Reading{}, fmt.Errorf("read pg_stat_database: %w", err)
		}
		v, epoch, err := parseDatabase(rows)
		if err != nil {
			return Reading{}, err
		}
		if c.own-own > 1 {
			// The session was opened again: the readings before it are of
			// another session's counts, and this one may lack its start.
			own, i = c.own-1, 0
		}
		cur := Reading{Values: v, Own: own, Epoch: epoch}
		if i > 0 && cur.Values["xact_commit"]-prev.Values["xact_commit"] == cur.Own-prev.Own &&
			cur.Values["xact_rollback"] == prev.Values["xact_rollback"] {
			cur.Settled = true
			return cur, nil
		}
		if time.Now().After(deadline) {
			return cur, nil
		}
		prev = cur
	}
}

// WaitGone waits, for up to timeout, until no session with the given
// application_name or process ID is left: until then their counts may be
// missing from the statistics, which backends report when they exit.
func (c *Control) WaitGone(ctx context.Context, appName string, pids []uint32, timeout time.Duration) error {
	ids := make([]string, len(pids))
	for i, p := range pids {
		ids[i] = strconv.FormatUint(uint64(p), 10)
	}
	sql := fmt.Sprintf("select count(*) from pg_stat_activity where application_name = '%s' or pid = any('{%s}'::int[])",
		strings.ReplaceAll(appName, "'", "''"), strings.Join(ids, ","))
	deadline := time.Now().Add(timeout)
	for {
		rows, err := c.query(ctx, sql)
		if err != nil {
			return err
		}
		if len(rows) != 1 || len(rows[0]) != 1 {
			return errors.New("count the benchmark's sessions: unexpected result")
		}
		if rows[0][0] == "0" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s of the benchmark's sessions still connected after %s", rows[0][0], timeout)
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// databaseQuery reads the counters and their Epoch on a server of the given
// version (server_version_num).
func databaseQuery(version int) string {
	return "select pg_stat_clear_snapshot(); select " + strings.Join(DatabaseCounters, ", ") + ", " + epochColumns(version) +
		" from pg_stat_database d where datname = current_database()"
}

// parseDatabase reads the counters and their Epoch from the last row of
// databaseQuery's statements.
func parseDatabase(rows [][]string) (map[string]int64, Epoch, error) {
	n := len(DatabaseCounters)
	if len(rows) < 2 || len(rows[len(rows)-1]) != n+3 {
		return nil, Epoch{}, errors.New("read pg_stat_database: no row for the current database")
	}
	row := rows[len(rows)-1]
	out := make(map[string]int64, n)
	for i, name := range DatabaseCounters {
		v, err := strconv.ParseInt(row[i], 10, 64)
		if err != nil {
			return nil, Epoch{}, fmt.Errorf("read pg_stat_database: %s %q: %w", name, row[i], err)
		}
		out[name] = v
	}
	epoch, err := parseEpoch(row[n:])
	if err != nil {
		return nil, Epoch{}, fmt.Errorf("read pg_stat_database: %w", err)
	}
	return out, epoch, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
