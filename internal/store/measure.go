package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Interval phases.
const (
	PhaseWarmup  = "warmup"
	PhaseMeasure = "measure"
)

// Histogram kinds.
const (
	KindWarmup  = "warmup"
	KindMeasure = "measure"
)

// Server statistics points, in the order a run reaches them.
const (
	PointBeforeConnect   = "before_connect"
	PointWindowStart     = "window_start"
	PointWindowEnd       = "window_end"
	PointAfterDisconnect = "after_disconnect"
)

// Interval is what one reporting interval of a run measured.
type Interval struct {
	Seq        int    // from 0 or 1, increasing; unique within a run
	Phase      string // PhaseWarmup or PhaseMeasure
	Start, End time.Time
	Txns       int64 // committed transactions
	Failed     int64
	Retried    int64
	TPS        float64
	LatencyMs  Latency
	Errors     int64
	// Down is how many clients had no connection at the interval's end;
	// ConnectErrors how many attempts to connect again failed during it.
	Down          int
	ConnectErrors int64
}

// Latency summarises a latency distribution, in milliseconds.
type Latency struct {
	Avg, P50, P90, P95, P99, P999, Max float64
}

// Histogram is an encoded hdrhistogram-go snapshot of one transaction type's
// latencies. The store keeps the bytes as given.
type Histogram struct {
	TxType  string
	Kind    string // KindMeasure or KindWarmup
	Encoded []byte
}

// ErrorCount is how often one SQLSTATE was seen for one transaction type.
// Count is the run's total so far, not an increment.
type ErrorCount struct {
	SQLState string
	Class    string
	TxType   string
	Count    int64
	Retried  bool // the transaction was retried after this error
	Example  string
}

// ServerStats is a snapshot of pg_stat_database counters at one point of a run.
type ServerStats struct {
	Point  string // one of the Point constants
	At     time.Time
	Values map[string]int64 // by pg_stat_database column name
}

// execer is the store's database or a transaction of it: the writes below run in
// either, one statement or a whole run at once (SaveRun).
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// AddInterval records interval iv of run runID. Each interval has its own Seq.
func (s *Store) AddInterval(ctx context.Context, runID int64, iv Interval) error {
	return addInterval(ctx, s.db, runID, iv)
}

func addInterval(ctx context.Context, ex execer, runID int64, iv Interval) error {
	if iv.Phase != PhaseWarmup && iv.Phase != PhaseMeasure {
		return fmt.Errorf("add interval %d to run %d: unknown phase %q", iv.Seq, runID, iv.Phase)
	}
	l := iv.LatencyMs
	_, err := ex.ExecContext(ctx, `
		INSERT INTO intervals (run_id, seq, phase, start_time, end_time, txns, failed, retried, tps,
			lat_avg_ms, lat_p50_ms, lat_p90_ms, lat_p95_ms, lat_p99_ms, lat_p999_ms, lat_max_ms, errors, down, connect_errors)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		runID, iv.Seq, iv.Phase, formatTime(iv.Start), formatTime(iv.End), iv.Txns, iv.Failed, iv.Retried, iv.TPS,
		l.Avg, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max, iv.Errors, iv.Down, iv.ConnectErrors)
	if err != nil {
		return fmt.Errorf("add interval %d to run %d: %w", iv.Seq, runID, runErr(err))
	}
	return nil
}

// AddHistograms records histograms of run runID. A histogram with the same
// TxType and Kind as one already stored replaces it, so a caller may save the
// cumulative histograms periodically and a killed run keeps the latest.
func (s *Store) AddHistograms(ctx context.Context, runID int64, hs []Histogram) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return addHistograms(ctx, tx, runID, hs) })
}

func addHistograms(ctx context.Context, tx execer, runID int64, hs []Histogram) error {
	err := func() error {
		for _, h := range hs {
			if len(h.Encoded) == 0 {
				return fmt.Errorf("histogram %s/%s is empty", h.TxType, h.Kind)
			}
			_, err := tx.ExecContext(ctx, `
				INSERT INTO histograms (run_id, tx_type, kind, encoded) VALUES (?, ?, ?, ?)
				ON CONFLICT (run_id, tx_type, kind) DO UPDATE SET encoded = excluded.encoded`,
				runID, h.TxType, h.Kind, h.Encoded)
			if err != nil {
				return fmt.Errorf("histogram %s/%s: %w", h.TxType, h.Kind, runErr(err))
			}
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("add histograms to run %d: %w", runID, err)
	}
	return nil
}

// AddErrors records error counts of run runID. A count with the same
// SQLState, TxType and Retried as one already stored replaces it.
func (s *Store) AddErrors(ctx context.Context, runID int64, es []ErrorCount) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return addErrors(ctx, tx, runID, es) })
}

func addErrors(ctx context.Context, tx execer, runID int64, es []ErrorCount) error {
	err := func() error {
		for _, e := range es {
			_, err := tx.ExecContext(ctx, `
				INSERT INTO errors (run_id, sqlstate, tx_type, retried, class, count, example)
				VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (run_id, sqlstate, tx_type, retried) DO UPDATE SET
					class = excluded.class, count = excluded.count, example = excluded.example`,
				runID, e.SQLState, e.TxType, e.Retried, e.Class, e.Count, e.Example)
			if err != nil {
				return fmt.Errorf("error %s/%s: %w", e.SQLState, e.TxType, runErr(err))
			}
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("add errors to run %d: %w", runID, err)
	}
	return nil
}

// AddServerStats records the server statistics of run runID at st.Point.
// Each point is recorded once per run.
func (s *Store) AddServerStats(ctx context.Context, runID int64, st ServerStats) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return addServerStats(ctx, tx, runID, st) })
}

func addServerStats(ctx context.Context, tx execer, runID int64, st ServerStats) error {
	err := func() error {
		_, err := tx.ExecContext(ctx, `INSERT INTO server_stats (run_id, point, at) VALUES (?, ?, ?)`,
			runID, st.Point, formatTime(st.At))
		if err != nil {
			return runErr(err)
		}
		for _, name := range slices.Sorted(maps.Keys(st.Values)) {
			_, err := tx.ExecContext(ctx, `INSERT INTO server_stat_values (run_id, point, name, value) VALUES (?, ?, ?, ?)`,
				runID, st.Point, name, st.Values[name])
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("add server stats %s to run %d: %w", st.Point, runID, err)
	}
	return nil
}

// inTx runs f in a transaction that commits if f returns nil.
func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return rollback(tx, err)
	}
	return tx.Commit()
}

// rollback rolls tx back after err, keeping both errors.
func rollback(tx *sql.Tx, err error) error {
	if rbErr := tx.Rollback(); rbErr != nil {
		return fmt.Errorf("%w (and rollback failed: %v)", err, rbErr)
	}
	return err
}

// runErr turns a foreign key violation, which means the run does not exist,
// into ErrNotFound.
func runErr(err error) error {
	if se, ok := errors.AsType[*sqlite.Error](err); ok && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY {
		return ErrNotFound
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == "23503" { // foreign_key_violation
		return ErrNotFound
	}
	return err
}

func (s *Store) intervals(ctx context.Context, runID int64) ([]Interval, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT seq, phase, start_time, end_time, txns, failed, retried, tps,
			lat_avg_ms, lat_p50_ms, lat_p90_ms, lat_p95_ms, lat_p99_ms, lat_p999_ms, lat_max_ms, errors, down, connect_errors
		FROM intervals WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ivs []Interval
	for rows.Next() {
		var (
			iv         Interval
			start, end string
		)
		l := &iv.LatencyMs
		if err := rows.Scan(&iv.Seq, &iv.Phase, &start, &end, &iv.Txns, &iv.Failed, &iv.Retried, &iv.TPS,
			&l.Avg, &l.P50, &l.P90, &l.P95, &l.P99, &l.P999, &l.Max, &iv.Errors, &iv.Down, &iv.ConnectErrors); err != nil {
			return nil, err
		}
		if iv.Start, err = parseTime(start); err != nil {
			return nil, fmt.Errorf("interval %d start: %w", iv.Seq, err)
		}
		if iv.End, err = parseTime(end); err != nil {
			return nil, fmt.Errorf("interval %d end: %w", iv.Seq, err)
		}
		ivs = append(ivs, iv)
	}
	return ivs, rows.Err()
}

func (s *Store) histograms(ctx context.Context, runID int64) ([]Histogram, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT tx_type, kind, encoded FROM histograms WHERE run_id = ? ORDER BY tx_type, kind`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hs []Histogram
	for rows.Next() {
		var h Histogram
		if err := rows.Scan(&h.TxType, &h.Kind, &h.Encoded); err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	return hs, rows.Err()
}

func (s *Store) errorCounts(ctx context.Context, runID int64) ([]ErrorCount, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT sqlstate, class, tx_type, count, retried, example
		FROM errors WHERE run_id = ? ORDER BY sqlstate, tx_type, retried`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var es []ErrorCount
	for rows.Next() {
		var e ErrorCount
		if err := rows.Scan(&e.SQLState, &e.Class, &e.TxType, &e.Count, &e.Retried, &e.Example); err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, rows.Err()
}

func (s *Store) serverStats(ctx context.Context, runID int64) ([]ServerStats, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT s.point, s.at, v.name, v.value
		FROM server_stats s LEFT JOIN server_stat_values v USING (run_id, point)
		WHERE s.run_id = ? ORDER BY s.at, s.point, v.name`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var sts []ServerStats
	for rows.Next() {
		var (
			point, at string
			name      sql.NullString
			value     sql.NullInt64
		)
		if err := rows.Scan(&point, &at, &name, &value); err != nil {
			return nil, err
		}
		if len(sts) == 0 || sts[len(sts)-1].Point != point {
			t, err := parseTime(at)
			if err != nil {
				return nil, fmt.Errorf("%s time: %w", point, err)
			}
			sts = append(sts, ServerStats{Point: point, At: t, Values: map[string]int64{}})
		}
		if name.Valid {
			sts[len(sts)-1].Values[name.String] = value.Int64
		}
	}
	return sts, rows.Err()
}
