package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
)

// Run statuses.
const (
	StatusRunning     = "running"     // started and not finished, or its process was killed
	StatusCompleted   = "completed"   // ran for its whole duration
	StatusInterrupted = "interrupted" // stopped early, e.g. by Ctrl-C; what was measured is kept
	StatusFailed      = "failed"      // stopped by an error
	StatusIncomplete  = "incomplete"  // ended early because the server stayed away; what was measured is kept
)

var statuses = []string{StatusRunning, StatusCompleted, StatusInterrupted, StatusFailed, StatusIncomplete}

// Run is one workload at one client count against one target.
type Run struct {
	ID            int64
	Target        string // DSN without its password; stored as given
	Workload      string // "tpcb", "tpcc", "sysbench"
	Script        string // e.g. "tpcb-like@9,select-only@1"
	Clients       int
	Params        map[string]any // every run parameter; numbers read back as json.Number
	ServerVersion string
	Settings      map[string]string // non-default server settings
	Labels        map[string]string
	Started       time.Time
	Ended         time.Time       // zero while running
	Status        string          // one of the Status constants
	ClientCPUUser float64         // seconds of client CPU in user mode
	ClientCPUSys  float64         // seconds of client CPU in kernel mode
	Summary       json.RawMessage // the CLI's --json summary; nil until finished
	Process       Process         // the process writing the run; CreateRun fills in this one when PID is 0
}

// Filter selects runs for Runs.
type Filter struct {
	Workload string // empty for all workloads
	Limit    int    // at most this many runs; 0 for all
}

// RunDetail is a run with everything recorded for it.
type RunDetail struct {
	Run
	Intervals   []Interval    // by Seq
	Histograms  []Histogram   // by TxType, then Kind
	Errors      []ErrorCount  // by SQLState, then TxType, then Retried
	ServerStats []ServerStats // by At, then Point
	Samples     []Sample      // by Seq
	Flags       []Flag        // by Name
}

// WindowLatency is the latency distribution of the measured window, all
// transaction types merged.
func (d *RunDetail) WindowLatency() (*hdrhistogram.Histogram, error) {
	all := histogram.New()
	for _, h := range d.Histograms {
		if h.Kind != KindMeasure {
			continue
		}
		hh, err := histogram.Decode(h.Encoded)
		if err != nil {
			return nil, fmt.Errorf("run %d histogram %s: %w", d.ID, h.TxType, err)
		}
		all.Merge(hh)
	}
	return all, nil
}

// timeLayout is fixed-width so stored times sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) sql.NullString {
	if t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: formatTime(t), Valid: true}
}

// CreateRun records a new run and sets r.ID. An empty Status becomes
// StatusRunning, and a zero Process this process.
func (s *Store) CreateRun(ctx context.Context, r *Run) (int64, error) {
	if r.Status == "" {
		r.Status = StatusRunning
	}
	if r.Process.PID == 0 {
		r.Process = self()
	}
	if err := checkRun(r); err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	return createRun(ctx, s.db, r)
}

func createRun(ctx context.Context, ex execer, r *Run) (int64, error) {
	params, settings, labels, err := encodeMaps(r)
	if err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	var id int64
	err = ex.QueryRowContext(ctx, `
		INSERT INTO runs (target, workload, script, clients, params, server_version, settings, labels,
			started, ended, status, client_cpu_user, client_cpu_sys, summary, pid, host, pid_start)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`,
		r.Target, r.Workload, r.Script, r.Clients, params, r.ServerVersion, settings, labels,
		formatTime(r.Started), nullTime(r.Ended), r.Status, r.ClientCPUUser, r.ClientCPUSys, nullJSON(r.Summary),
		r.Process.PID, r.Process.Host, r.Process.Start).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	r.ID = id
	return id, nil
}

// FinishRun records how run r.ID ended: Ended, Status, the client CPU times
// and Summary. Params, Settings and Labels are rewritten when non-nil, and
// ServerVersion when non-empty, since some are only known once connected.
func (s *Store) FinishRun(ctx context.Context, r *Run) error {
	if err := checkFinish(r); err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	params, settings, labels, err := encodeMaps(r)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	res, err := s.db.ExecContext(ctx, `
		UPDATE runs SET
			ended = ?, status = ?, client_cpu_user = ?, client_cpu_sys = ?, summary = ?,
			params = coalesce(?, params), settings = coalesce(?, settings), labels = coalesce(?, labels),
			server_version = coalesce(nullif(?, ''), server_version)
		WHERE id = ?`,
		formatTime(r.Ended), r.Status, r.ClientCPUUser, r.ClientCPUSys, nullJSON(r.Summary),
		nilIfNull(params, r.Params == nil), nilIfNull(settings, r.Settings == nil), nilIfNull(labels, r.Labels == nil),
		r.ServerVersion, r.ID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("finish run %d: %w", r.ID, ErrNotFound)
	}
	return nil
}

func checkRun(r *Run) error {
	switch {
	case r.Workload == "":
		return errors.New("no workload")
	case r.Started.IsZero():
		return errors.New("no start time")
	case r.Clients < 0:
		return fmt.Errorf("negative client count %d", r.Clients)
	case !slices.Contains(statuses, r.Status):
		return fmt.Errorf("unknown status %q", r.Status)
	case r.Summary != nil && !json.Valid(r.Summary):
		return errors.New("summary is not valid JSON")
	}
	return nil
}

func checkFinish(r *Run) error {
	switch {
	case r.Ended.IsZero():
		return errors.New("no end time")
	case r.Status == StatusRunning || !slices.Contains(statuses, r.Status):
		return fmt.Errorf("status %q is not a final status", r.Status)
	case r.Summary != nil && !json.Valid(r.Summary):
		return errors.New("summary is not valid JSON")
	}
	return nil
}

func encodeMaps(r *Run) (params, settings, labels string, err error) {
	for _, m := range []struct {
		name string
		v    any
		out  *string
	}{
		{"params", r.Params, &params},
		{"settings", r.Settings, &settings},
		{"labels", r.Labels, &labels},
	} {
		b, err := json.Marshal(m.v)
		if err != nil {
			return "", "", "", fmt.Errorf("encode %s: %w", m.name, err)
		}
		*m.out = string(b)
	}
	return params, settings, labels, nil
}

func nilIfNull(s string, null bool) any {
	if null {
		return nil
	}
	return s
}

func nullJSON(m json.RawMessage) any {
	if m == nil {
		return nil
	}
	return string(m)
}

func notFound(id int64) error { return fmt.Errorf("run %d: %w", id, ErrNotFound) }

const runColumns = `id, target, workload, script, clients, params, server_version, settings, labels,
	started, ended, status, client_cpu_user, client_cpu_sys, summary, pid, host, pid_start`

// Runs returns the runs matching f, newest first.
func (s *Store) Runs(ctx context.Context, f Filter) ([]Run, error) {
	var limit any = f.Limit
	if f.Limit <= 0 {
		limit = -1 // no limit: SQLite's -1, PostgreSQL's NULL
		if s.pg {
			limit = nil
		}
	}
	rows, err := s.db.QueryContext(ctx, `
		SELECT `+runColumns+` FROM runs
		WHERE ? = '' OR workload = ?
		ORDER BY started DESC, id DESC
		LIMIT ?`, f.Workload, f.Workload, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		r.Status = s.shownStatus(r.ID, r.Status)
		runs = append(runs, *r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return runs, nil
}

// Run returns run id with its intervals, histograms, errors and server
// statistics. An unknown id gives an error wrapping ErrNotFound.
func (s *Store) Run(ctx context.Context, id int64) (*RunDetail, error) {
	d, err := s.runDetail(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read run: %w", err)
	}
	return d, nil
}

func (s *Store) runDetail(ctx context.Context, id int64) (*RunDetail, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", id, err)
	}
	r.Status = s.shownStatus(r.ID, r.Status)
	d := &RunDetail{Run: *r}
	if d.Intervals, err = s.intervals(ctx, id); err != nil {
		return nil, fmt.Errorf("run %d intervals: %w", id, err)
	}
	if d.Histograms, err = s.histograms(ctx, id); err != nil {
		return nil, fmt.Errorf("run %d histograms: %w", id, err)
	}
	if d.Errors, err = s.errorCounts(ctx, id); err != nil {
		return nil, fmt.Errorf("run %d errors: %w", id, err)
	}
	if d.ServerStats, err = s.serverStats(ctx, id); err != nil {
		return nil, fmt.Errorf("run %d server stats: %w", id, err)
	}
	if d.Samples, err = s.samples(ctx, id); err != nil {
		return nil, fmt.Errorf("run %d samples: %w", id, err)
	}
	if d.Flags, err = s.flags(ctx, id); err != nil {
		return nil, fmt.Errorf("run %d flags: %w", id, err)
	}
	return d, nil
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner) (*Run, error) {
	var (
		r                        Run
		params, settings, labels string
		started                  string
		ended, summary           sql.NullString
	)
	err := sc.Scan(&r.ID, &r.Target, &r.Workload, &r.Script, &r.Clients, &params, &r.ServerVersion,
		&settings, &labels, &started, &ended, &r.Status, &r.ClientCPUUser, &r.ClientCPUSys, &summary,
		&r.Process.PID, &r.Process.Host, &r.Process.Start)
	if err != nil {
		return nil, err
	}
	if r.Started, err = parseTime(started); err != nil {
		return nil, fmt.Errorf("run %d start time: %w", r.ID, err)
	}
	if ended.Valid {
		if r.Ended, err = parseTime(ended.String); err != nil {
			return nil, fmt.Errorf("run %d end time: %w", r.ID, err)
		}
	}
	if summary.Valid {
		r.Summary = json.RawMessage(summary.String)
	}
	// Params keep integers exact (seeds exceed float64's 53 bits) as json.Number.
	dec := json.NewDecoder(bytes.NewReader([]byte(params)))
	dec.UseNumber()
	if err := dec.Decode(&r.Params); err != nil {
		return nil, fmt.Errorf("run %d params: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(settings), &r.Settings); err != nil {
		return nil, fmt.Errorf("run %d settings: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(labels), &r.Labels); err != nil {
		return nil, fmt.Errorf("run %d labels: %w", r.ID, err)
	}
	return &r, nil
}

// SaveRun records a whole run at once, as read from another store (or merged
// from shards' runs): the run as it is, with its Status, Process and Summary, and
// everything recorded for it, in one transaction. It sets d.ID to the new run's.
func (s *Store) SaveRun(ctx context.Context, d *RunDetail) (int64, error) {
	if d.Status == "" {
		d.Status = StatusRunning
	}
	if d.Process.PID == 0 {
		d.Process = self()
	}
	if err := checkRun(&d.Run); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	err := s.inTx(ctx, func(sqlTx *sql.Tx) error {
		tx := &preparedTx{tx: sqlTx, stmts: map[string]*sql.Stmt{}}
		defer tx.close()
		id, err := createRun(ctx, tx, &d.Run)
		if err != nil {
			return err
		}
		for _, iv := range d.Intervals {
			if err := addInterval(ctx, tx, id, iv); err != nil {
				return err
			}
		}
		if err := addHistograms(ctx, tx, id, d.Histograms); err != nil {
			return err
		}
		if err := addErrors(ctx, tx, id, d.Errors); err != nil {
			return err
		}
		for _, st := range d.ServerStats {
			if err := addServerStats(ctx, tx, id, st); err != nil {
				return err
			}
		}
		for _, sm := range d.Samples {
			if err := addSample(ctx, tx, id, sm); err != nil {
				return err
			}
		}
		return setFlags(ctx, tx, id, d.Flags)
	})
	if err != nil {
		return 0, err
	}
	return d.ID, nil
}

// preparedTx is a transaction whose statements are each prepared once: a run of
// thousands of intervals and samples is written without parsing the same
// statement again for every row.
type preparedTx struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (p *preparedTx) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := p.stmts[query]; st != nil {
		return st, nil
	}
	st, err := p.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.stmts[query] = st
	return st, nil
}

func (p *preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (p *preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.prepare(ctx, query)
	if err != nil {
		return p.tx.QueryRowContext(ctx, query, args...) // the same error, where the caller reads it
	}
	return st.QueryRowContext(ctx, args...)
}

func (p *preparedTx) close() {
	for _, st := range p.stmts {
		st.Close()
	}
}
