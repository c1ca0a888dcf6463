package sampler

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The counters the statistics query returns, in its column order, followed by
// their Epoch (epochColumns) and the server's address, port and recovery state.
var counters = []string{"xact_commit", "xact_rollback", "blks_read", "blks_hit",
	"io_reads", "io_writes", "wal", "checkpoints", "autovacuums", "autoanalyzes"}

// statsQuery is the one round trip of each sample, written for the server's
// major version (server_version_num). The views joined to the current
// database's row of pg_stat_database have one row each.
//
// The statistics a session reads are a snapshot taken at its first access in a
// transaction; the query is a transaction of its own, and clears the snapshot
// first in case that ever changes.
func statsQuery(version int) string {
	from := []string{"pg_stat_database d"}
	ioReads, ioWrites := "d.blks_read", "b.buffers_checkpoint + b.buffers_clean + b.buffers_backend"
	if version >= 160000 {
		// pg_stat_io counts blocks through 17 and operations, which may span
		// several blocks, from 18. From 18 it also has rows for WAL; they are
		// left out so that write_iops means data files on every version, and
		// WAL has its own value.
		from = append(from, `(select coalesce(sum(reads), 0) as reads,
		coalesce(sum(writes), 0) + coalesce(sum(extends), 0) as writes
		from pg_stat_io where object <> 'wal') io`)
		ioReads, ioWrites = "io.reads", "io.writes"
	}
	var checkpoints string
	switch {
	case version >= 180000:
		// num_timed and num_requested also count checkpoints skipped on an
		// idle server; num_done only those performed.
		from = append(from, "pg_stat_checkpointer c")
		checkpoints = "c.num_done"
	case version >= 170000:
		from = append(from, "pg_stat_checkpointer c")
		checkpoints = "c.num_timed + c.num_requested"
	default:
		checkpoints = "b.checkpoints_timed + b.checkpoints_req"
	}
	if version < 170000 {
		from = append(from, "pg_stat_bgwriter b")
	}
	// Before 14 the WAL position is read instead of a byte count, as text,
	// because it goes beyond the range of bigint.
	wal := "w.wal_bytes"
	if version >= 140000 {
		from = append(from, "pg_stat_wal w")
	} else {
		wal = "(case when pg_is_in_recovery() then pg_last_wal_replay_lsn() else pg_current_wal_lsn() end)::text"
	}
	// Autovacuum's work on the current database's tables (catalogs and TOAST
	// included), counted when each vacuum or analyze ends.
	from = append(from, `(select coalesce(sum(autovacuum_count), 0) as vacuums,
		coalesce(sum(autoanalyze_count), 0) as analyzes from pg_stat_all_tables) av`)
	return fmt.Sprintf(`select pg_stat_clear_snapshot();
select d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, %s, %s, %s, %s, av.vacuums, av.analyzes,
	%s,
	host(inet_server_addr()), inet_server_port(), pg_is_in_recovery()
from %s
where d.datname = current_database()`, ioReads, ioWrites, wal, checkpoints, epochColumns(version), strings.Join(from, " cross join "))
}

// dbReading is one reading of the server's cumulative statistics.
type dbReading struct {
	at         time.Time         // halfway through the query's round trip
	counters   map[string]uint64 // by the names in counters; absent when NULL
	own        int64             // the sampler's own transactions so far
	epoch      Epoch             // the postmaster's start and the statistics' last resets
	addr       string            // host:port, "" over a Unix socket
	inRecovery bool
}

// queryStats runs the statistics query.
func queryStats(ctx context.Context, conn *pgconn.PgConn, sql string, version int) (*dbReading, error) {
	before := time.Now()
	results, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	after := time.Now()
	if len(results) != 2 || len(results[1].Rows) != 1 {
		return nil, fmt.Errorf("pg_stat_database has no row for the current database")
	}
	row := results[1].Rows[0]
	if len(row) != len(counters)+6 {
		return nil, fmt.Errorf("statistics query returned %d columns, want %d", len(row), len(counters)+6)
	}
	r := &dbReading{at: before.Add(after.Sub(before) / 2), counters: make(map[string]uint64, len(counters))}
	for i, name := range counters {
		if row[i] == nil {
			continue
		}
		var v uint64
		if name == "wal" && version < 140000 {
			v, err = parseLSN(string(row[i]))
		} else {
			v, err = strconv.ParseUint(string(row[i]), 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("statistics query: %s: %w", name, err)
		}
		r.counters[name] = v
	}
	id := row[len(counters):]
	if r.epoch, err = parseEpoch([]string{string(id[0]), string(id[1]), string(id[2])}); err != nil {
		return nil, fmt.Errorf("statistics query: %w", err)
	}
	if id[3] != nil {
		r.addr = net.JoinHostPort(string(id[3]), string(id[4]))
	}
	r.inRecovery = string(id[5]) == "t"
	return r, nil
}

// parseLSN turns a WAL position such as "16/B374D848" into a byte offset.
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("invalid WAL position %q", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid WAL position %q", s)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid WAL position %q", s)
	}
	return h<<32 | l, nil
}

// serverVersion reads server_version_num, such as 160004.
func serverVersion(ctx context.Context, conn *pgconn.PgConn) (int, error) {
	results, err := conn.Exec(ctx, "show server_version_num").ReadAll()
	if err != nil {
		return 0, fmt.Errorf("read server_version_num: %w", err)
	}
	if len(results) != 1 || len(results[0].Rows) != 1 {
		return 0, fmt.Errorf("read server_version_num: no value")
	}
	v, err := strconv.Atoi(string(results[0].Rows[0][0]))
	if err != nil {
		return 0, fmt.Errorf("read server_version_num: %w", err)
	}
	return v, nil
}

// dbValues adds to values the rates between two readings of one postmaster
// and one Epoch. own is the number of the sampler's own commits to leave out of
// commits; it returns those it could not, because the server had not yet
// counted them, for the next interval.
func dbValues(prev, cur *dbReading, own float64, values map[string]float64) (owed float64) {
	secs := cur.at.Sub(prev.at).Seconds()
	if secs <= 0 {
		return own
	}
	for _, v := range []struct {
		name, counter string
	}{
		{"commits", "xact_commit"}, {"rollbacks", "xact_rollback"},
		{"blks_read", "blks_read"}, {"blks_hit", "blks_hit"},
		{"read_iops", "io_reads"}, {"write_iops", "io_writes"},
		{"wal_bytes", "wal"},
	} {
		if d, ok := delta(prev.counters, cur.counters, v.counter); ok {
			if v.name == "commits" {
				owed = max(own-d, 0)
				d = max(d-own, 0)
			}
			values[v.name] = d / secs
		}
	}
	for _, name := range []string{"checkpoints", "autovacuums", "autoanalyzes"} {
		if d, ok := delta(prev.counters, cur.counters, name); ok {
			values[name] = d
		}
	}
	return owed
}

// delta is the growth of a counter. A counter that shrank was reset (for
// example by pg_stat_reset) and gives no value.
func delta(prev, cur map[string]uint64, name string) (float64, bool) {
	p, ok1 := prev[name]
	c, ok2 := cur[name]
	if !ok1 || !ok2 || c < p {
		return 0, false
	}
	return float64(c - p), true
}
