package sampler

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Epoch is what tells whether two readings of the server's counters can be
// compared: counters grow only between readings of one epoch. A crash and
// recovery keeps the postmaster and its start time but discards every
// statistic, and resets the shared ones, whose stats_reset then changes;
// pg_stat_reset() resets the database's. A clean restart keeps the counters,
// which it saves and restores.
type Epoch struct {
	Started time.Time // pg_postmaster_start_time()
	// SharedReset is the stats_reset of pg_stat_bgwriter (before 17) or
	// pg_stat_checkpointer (17+): a crash and recovery resets it, as does
	// pg_stat_reset_shared().
	SharedReset time.Time
	// DBReset is the stats_reset of the database's row of pg_stat_database,
	// zero when it was never reset (NULL): pg_stat_reset() sets it; a crash and
	// recovery sets it (before 15) or leaves it NULL (from 15).
	DBReset time.Time
}

// Same tells whether e and o are one epoch: readings of both can be compared.
func (e Epoch) Same(o Epoch) bool {
	return e.Started.Equal(o.Started) && e.SharedReset.Equal(o.SharedReset) && e.DBReset.Equal(o.DBReset)
}

// ResetSince tells whether the statistics were reset between a reading of
// before and one of e, and when, as far as the server says: the latest of the
// reset times that changed (zero when none is known).
func (e Epoch) ResetSince(before Epoch) (reset bool, at time.Time) {
	if !e.SharedReset.Equal(before.SharedReset) {
		reset, at = true, e.SharedReset
	}
	if !e.DBReset.Equal(before.DBReset) {
		reset = true
		if e.DBReset.After(at) {
			at = e.DBReset
		}
	}
	return reset, at
}

// Crashed tells whether the shared statistics were reset between a reading of
// before and one of e under the same postmaster, as a crash and recovery does.
func (e Epoch) Crashed(before Epoch) bool {
	return e.Started.Equal(before.Started) && !e.SharedReset.Equal(before.SharedReset)
}

// epochColumns are the three columns that read an Epoch on a server of the
// given version (server_version_num), in microseconds since 1970 (0 for NULL),
// from a query of the database's row of pg_stat_database, aliased d.
func epochColumns(version int) string {
	shared := "pg_stat_bgwriter"
	if version >= 170000 {
		shared = "pg_stat_checkpointer"
	}
	return `(extract(epoch from pg_postmaster_start_time()) * 1000000)::bigint,
	coalesce((extract(epoch from (select stats_reset from ` + shared + `)) * 1000000)::bigint, 0),
	coalesce((extract(epoch from d.stats_reset) * 1000000)::bigint, 0)`
}

// parseEpoch reads an Epoch from the text of epochColumns' three columns.
func parseEpoch(cols []string) (Epoch, error) {
	var us [3]int64
	for i, c := range cols {
		v, err := strconv.ParseInt(c, 10, 64)
		if err != nil {
			return Epoch{}, fmt.Errorf("postmaster start and statistics reset times %q: %w", cols, err)
		}
		us[i] = v
	}
	at := func(v int64) time.Time {
		if v == 0 {
			return time.Time{}
		}
		return time.UnixMicro(v)
	}
	return Epoch{Started: at(us[0]), SharedReset: at(us[1]), DBReset: at(us[2])}, nil
}

// DownError is the server's error in err when it says that the server is not
// running normally: a session ended because another server process crashed
// (57P02 crash_shutdown), or refused while the server starts up, recovers or
// shuts down (57P03 cannot_connect_now); nil otherwise.
func DownError(err error) *pgconn.PgError {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "57P02" || pe.Code == "57P03") {
		return pe
	}
	return nil
}
