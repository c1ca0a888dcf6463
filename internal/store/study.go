package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Study is a study file's state: which cells of its matrix have run and which
// datasets are loaded, so that running it again continues where it stopped.
type Study struct {
	ID      int64
	Name    string
	File    string // the file's path when last run
	Spec    string // the file's text then
	Created time.Time
	Updated time.Time
}

// StudyRun is the latest attempt at one cell of a study's matrix.
type StudyRun struct {
	Key         string
	Fingerprint string // of what the cell measures, to notice edits of the file
	RunID       int64  // 0 when the run is gone from the store
	Status      string // a run status
}

// Dataset is a dataset a study loaded into one of its targets.
type Dataset struct {
	Target      string
	Name        string
	Fingerprint string // of the target and the load, to notice edits of the file
	Loaded      time.Time
	LoadS       float64
}

// StudyPrice is a target's price as the study looked it up in its cloud's list.
type StudyPrice struct {
	Target   string
	Query    string // the lookup it answers (pricelist.Query.Key)
	Price    string // the price, as JSON
	LookedUp time.Time
}

// SetStudyPrice records a target's price looked up, in place of an earlier one.
func (s *Store) SetStudyPrice(ctx context.Context, studyID int64, p StudyPrice) error {
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO study_prices (study_id, target, query, price, looked_up) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (study_id, target) DO UPDATE SET
			query = excluded.query, price = excluded.price, looked_up = excluded.looked_up`,
		studyID, p.Target, p.Query, p.Price, formatTime(p.LookedUp))
	if err != nil {
		return fmt.Errorf("record the price of %s: %w", p.Target, err)
	}
	return nil
}

// StudyPrices returns the prices the study looked up, by target.
func (s *Store) StudyPrices(ctx context.Context, studyID int64) (map[string]StudyPrice, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT target, query, price, looked_up FROM study_prices WHERE study_id = ?`, studyID)
	if err != nil {
		return nil, fmt.Errorf("read study prices: %w", err)
	}
	defer rows.Close()
	out := map[string]StudyPrice{}
	for rows.Next() {
		var p StudyPrice
		var at string
		if err := rows.Scan(&p.Target, &p.Query, &p.Price, &at); err != nil {
			return nil, fmt.Errorf("read study prices: %w", err)
		}
		if p.LookedUp, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("read study prices: %w", err)
		}
		out[p.Target] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read study prices: %w", err)
	}
	return out, nil
}

// SaveStudy creates the study named st.Name or updates its file and text, and sets
// st.ID and st.Created.
func (s *Store) SaveStudy(ctx context.Context, st *Study) error {
	now := formatTime(st.Updated)
	err := s.db.QueryRowContext(ctx, `
		INSERT INTO studies (name, file, spec, created, updated) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET file = excluded.file, spec = excluded.spec, updated = excluded.updated
		RETURNING id, created`, st.Name, st.File, st.Spec, now, now).Scan(&st.ID, &now)
	if err != nil {
		return fmt.Errorf("save study %s: %w", st.Name, err)
	}
	if st.Created, err = parseTime(now); err != nil {
		return fmt.Errorf("save study %s: creation time: %w", st.Name, err)
	}
	return nil
}

// FindStudy returns the study called name; an unknown name gives an error wrapping
// ErrNotFound.
func (s *Store) FindStudy(ctx context.Context, name string) (*Study, error) {
	var st Study
	var created, updated string
	err := s.db.QueryRowContext(ctx, `SELECT id, name, file, spec, created, updated FROM studies WHERE name = ?`, name).
		Scan(&st.ID, &st.Name, &st.File, &st.Spec, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("study %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read study %s: %w", name, err)
	}
	if st.Created, err = parseTime(created); err == nil {
		st.Updated, err = parseTime(updated)
	}
	if err != nil {
		return nil, fmt.Errorf("read study %s: %w", name, err)
	}
	return &st, nil
}

// StudyRuns returns the latest attempt at each cell of the study, by key.
func (s *Store) StudyRuns(ctx context.Context, studyID int64) (map[string]StudyRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key, fingerprint, coalesce(run_id, 0), status FROM study_runs WHERE study_id = ?`, studyID)
	if err != nil {
		return nil, fmt.Errorf("read study runs: %w", err)
	}
	defer rows.Close()
	out := map[string]StudyRun{}
	for rows.Next() {
		var r StudyRun
		if err := rows.Scan(&r.Key, &r.Fingerprint, &r.RunID, &r.Status); err != nil {
			return nil, fmt.Errorf("read study runs: %w", err)
		}
		out[r.Key] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read study runs: %w", err)
	}
	return out, nil
}

// SetStudyRun records the latest attempt at a cell of the study.
func (s *Store) SetStudyRun(ctx context.Context, studyID int64, r StudyRun) error {
	var runID any
	if r.RunID != 0 {
		runID = r.RunID
	}
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO study_runs (study_id, key, fingerprint, run_id, status) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (study_id, key) DO UPDATE SET
			fingerprint = excluded.fingerprint, run_id = excluded.run_id, status = excluded.status`,
		studyID, r.Key, r.Fingerprint, runID, r.Status)
	if err != nil {
		return fmt.Errorf("record study run %s: %w", r.Key, err)
	}
	return nil
}

// StudyDatasets returns the datasets the study has loaded.
func (s *Store) StudyDatasets(ctx context.Context, studyID int64) ([]Dataset, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT target, dataset, fingerprint, loaded, load_s FROM study_datasets
		WHERE study_id = ? ORDER BY target, dataset`, studyID)
	if err != nil {
		return nil, fmt.Errorf("read study datasets: %w", err)
	}
	defer rows.Close()
	var out []Dataset
	for rows.Next() {
		var d Dataset
		var loaded string
		if err := rows.Scan(&d.Target, &d.Name, &d.Fingerprint, &loaded, &d.LoadS); err != nil {
			return nil, fmt.Errorf("read study datasets: %w", err)
		}
		if d.Loaded, err = parseTime(loaded); err != nil {
			return nil, fmt.Errorf("read study datasets: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read study datasets: %w", err)
	}
	return out, nil
}

// SetStudyDataset records that the study loaded a dataset into a target.
func (s *Store) SetStudyDataset(ctx context.Context, studyID int64, d Dataset) error {
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO study_datasets (study_id, target, dataset, fingerprint, loaded, load_s) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (study_id, target, dataset) DO UPDATE SET
			fingerprint = excluded.fingerprint, loaded = excluded.loaded, load_s = excluded.load_s`,
		studyID, d.Target, d.Name, d.Fingerprint, formatTime(d.Loaded), d.LoadS)
	if err != nil {
		return fmt.Errorf("record dataset %s on %s: %w", d.Name, d.Target, err)
	}
	return nil
}

// ForgetStudyRuns removes the study's records of the runs whose keys start with
// prefix (a search's earlier attempt); the runs themselves stay in the store.
func (s *Store) ForgetStudyRuns(ctx context.Context, studyID int64, prefix string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM study_runs WHERE study_id = ? AND substr(key, 1, ?) = ?`, studyID, len(prefix), prefix)
	if err != nil {
		return fmt.Errorf("forget study runs %s: %w", prefix, err)
	}
	return nil
}

// ForgetStudy removes the study's record of its runs, datasets and prices, so
// that it starts again; the runs themselves stay in the store.
func (s *Store) ForgetStudy(ctx context.Context, studyID int64) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM study_runs WHERE study_id = ?`, studyID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM study_datasets WHERE study_id = ?`, studyID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM study_prices WHERE study_id = ?`, studyID)
		return err
	})
	if err != nil {
		return fmt.Errorf("forget study %d: %w", studyID, err)
	}
	return nil
}
