package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Sample is what the server was doing during one sampling interval of a run: rates
// and counts by name (see package sampler for the names), and wait-event shares
// under names beginning with "wait:".
type Sample struct {
	Seq        int
	Start, End time.Time
	Values     map[string]float64
}

// Flag says why a run's figures are not to be trusted (Invalid) or deserve a note.
type Flag struct {
	Name    string // restarted, failover, client_cpu, errors, dip, checkpoint
	Invalid bool
	Reason  string
}

// AddSample records one sampling interval of run runID.
func (s *Store) AddSample(ctx context.Context, runID int64, sm Sample) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return addSample(ctx, tx, runID, sm) })
}

func addSample(ctx context.Context, tx execer, runID int64, sm Sample) error {
	err := func() error {
		_, err := tx.ExecContext(ctx, `INSERT INTO samples (run_id, seq, start_time, end_time) VALUES (?, ?, ?, ?)`,
			runID, sm.Seq, formatTime(sm.Start), formatTime(sm.End))
		if err != nil {
			return runErr(err)
		}
		// Many rows a statement: a sample has dozens of values, a run thousands of
		// samples. Chunks of a fixed size, so that a prepared statement serves again.
		names := slices.Sorted(maps.Keys(sm.Values))
		for len(names) > 0 {
			n := min(len(names), sampleChunk)
			if n < sampleChunk && n > 8 {
				n = 8 * (n / 8) // the rest in a few shapes of statement, not one for each count
			}
			args := make([]any, 0, 4*n)
			for _, name := range names[:n] {
				args = append(args, runID, sm.Seq, name, sm.Values[name])
			}
			q := "INSERT INTO sample_values (run_id, seq, name, value) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", n), ", ")
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("%s: %w", names[0], err)
			}
			names = names[n:]
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("add sample %d to run %d: %w", sm.Seq, runID, err)
	}
	return nil
}

// sampleChunk is how many values one statement inserts.
const sampleChunk = 64

// SetFlags replaces the flags of run runID.
func (s *Store) SetFlags(ctx context.Context, runID int64, flags []Flag) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return setFlags(ctx, tx, runID, flags) })
}

func setFlags(ctx context.Context, tx execer, runID int64, flags []Flag) error {
	err := func() error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_flags WHERE run_id = ?`, runID); err != nil {
			return err
		}
		for _, f := range flags {
			_, err := tx.ExecContext(ctx, `INSERT INTO run_flags (run_id, flag, invalid, reason) VALUES (?, ?, ?, ?)`,
				runID, f.Name, f.Invalid, f.Reason)
			if err != nil {
				return fmt.Errorf("%s: %w", f.Name, runErr(err))
			}
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("set flags of run %d: %w", runID, err)
	}
	return nil
}

func (s *Store) samples(ctx context.Context, runID int64) ([]Sample, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT s.seq, s.start_time, s.end_time, v.name, v.value
		FROM samples s LEFT JOIN sample_values v USING (run_id, seq)
		WHERE s.run_id = ? ORDER BY s.seq, v.name`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		var (
			seq        int
			start, end string
			name       sql.NullString
			value      sql.NullFloat64
		)
		if err := rows.Scan(&seq, &start, &end, &name, &value); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].Seq != seq {
			sm := Sample{Seq: seq, Values: map[string]float64{}}
			if sm.Start, err = parseTime(start); err != nil {
				return nil, fmt.Errorf("sample %d start: %w", seq, err)
			}
			if sm.End, err = parseTime(end); err != nil {
				return nil, fmt.Errorf("sample %d end: %w", seq, err)
			}
			out = append(out, sm)
		}
		if name.Valid {
			out[len(out)-1].Values[name.String] = value.Float64
		}
	}
	return out, rows.Err()
}

func (s *Store) flags(ctx context.Context, runID int64) ([]Flag, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT flag, invalid, reason FROM run_flags WHERE run_id = ? ORDER BY flag`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Flag
	for rows.Next() {
		var f Flag
		if err := rows.Scan(&f.Name, &f.Invalid, &f.Reason); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
