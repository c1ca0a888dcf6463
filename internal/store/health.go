package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrDamaged is wrapped by Open for a store that fails SQLite's check.
var ErrDamaged = errors.New("results store is damaged")

type damagedError struct{ path, detail string }

func (e *damagedError) Error() string {
	return fmt.Sprintf("results store %s is damaged (%s): nothing was written to it; "+
		"recover its runs with `sqlite3 %s .recover | sqlite3 recovered.db`", e.path, e.detail, e.path)
}

func (e *damagedError) Is(target error) bool { return target == ErrDamaged }

// damaged reports whether err is SQLite finding a malformed file.
func damaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// quickCheckTimeout bounds the check a writer makes before its first write.
// PRAGMA quick_check reads every page, so its time grows with the store; one
// so large that the check takes longer is let through unchecked rather than
// delay every run, and damage in it is found by the first query that reads
// the bad page.
const quickCheckTimeout = 3 * time.Second

// quickCheck refuses a store whose pages SQLite finds malformed, before a
// writer adds to it what it could not read back.
func (s *Store) quickCheck(ctx context.Context) error {
	qctx, cancel := context.WithTimeout(ctx, quickCheckTimeout)
	defer cancel()
	var first string
	err := s.db.QueryRowContext(qctx, "PRAGMA quick_check(1)").Scan(&first)
	switch {
	case err != nil && ctx.Err() == nil && qctx.Err() != nil:
		return nil // too large to check in time; see quickCheckTimeout
	case err != nil && damaged(err):
		return &damagedError{path: s.path, detail: err.Error()}
	case err != nil:
		return fmt.Errorf("check integrity: %w", err)
	case first != "ok":
		// The first problem, without the header line SQLite puts before it.
		lines := strings.Split(strings.TrimSpace(first), "\n")
		return &damagedError{path: s.path, detail: lines[len(lines)-1]}
	}
	return nil
}

// Damaged is, for a store opened by OpenReadOnly, the error saying that SQLite's
// quick_check found it damaged; nil when it did not. What can be read is read.
func (s *Store) Damaged() error { return s.damaged }

// Process is the process that writes a run.
type Process struct {
	PID   int
	Host  string // os.Hostname
	Start string // when it started, as the system counts (Linux: clock ticks after boot); "" if unknown
}

// self is this process.
func self() Process {
	host, _ := os.Hostname()
	start, _ := processStart(os.Getpid())
	return Process{PID: os.Getpid(), Host: host, Start: start}
}

// gone reports whether the process is known to have exited: no process has
// its pid, or the one that has started at another time (the pid was reused).
// It can only tell for processes of this host.
func (p Process) gone() bool {
	if p.PID <= 0 {
		return false
	}
	if noProcess(p.PID) {
		return true
	}
	if p.Start == "" {
		return false
	}
	now, ok := processStart(p.PID)
	return ok && now != p.Start
}

// processStart is field 22 of /proc/PID/stat, the process's start time in
// clock ticks after boot; false where there is no /proc.
func processStart(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(string(b[i+1:]))
	const startField = 22 - 3 // fields after the name start at field 3
	if len(fields) <= startField {
		return "", false
	}
	return fields[startField], true
}

// Abandoned is a run left running by a process that is gone.
type Abandoned struct {
	ID   int64
	PID  int
	Host string
}

// Abandoned returns the runs found left running by a process that is gone
// when the store was opened, by id. Open has marked them StatusInterrupted;
// OpenReadOnly shows them so without changing the file.
func (s *Store) Abandoned() []Abandoned { return s.abandoned }

// findAbandoned lists the running runs of this host whose process is gone.
// Runs of other hosts cannot be checked and are left as they are.
func (s *Store) findAbandoned(ctx context.Context) error {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return nil
	}
	recorded := s.pg // false for a SQLite schema older than migration 4
	if !s.pg {
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) > 0 FROM pragma_table_info('runs') WHERE name = 'pid'").Scan(&recorded); err != nil {
			return fmt.Errorf("find abandoned runs: %w", err)
		}
	}
	if !recorded {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, pid, pid_start FROM runs
		WHERE status = ? AND pid > 0 AND host = ? ORDER BY id`, StatusRunning, host)
	if err != nil {
		return fmt.Errorf("find abandoned runs: %w", err)
	}
	defer rows.Close()
	s.abandoned = nil
	for rows.Next() {
		a := Abandoned{Host: host}
		var start string
		if err := rows.Scan(&a.ID, &a.PID, &start); err != nil {
			return fmt.Errorf("find abandoned runs: %w", err)
		}
		if (Process{PID: a.PID, Host: host, Start: start}).gone() {
			s.abandoned = append(s.abandoned, a)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("find abandoned runs: %w", err)
	}
	return nil
}

// markAbandoned marks the runs whose process is gone interrupted, ended at
// the end of their last stored interval (else when they started): what they
// measured is kept.
func (s *Store) markAbandoned(ctx context.Context) error {
	if err := s.findAbandoned(ctx); err != nil {
		return err
	}
	for _, a := range s.abandoned {
		_, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?,
			ended = coalesce((SELECT max(end_time) FROM intervals WHERE run_id = runs.id), started)
			WHERE id = ? AND status = ?`, StatusInterrupted, a.ID, StatusRunning)
		if err != nil {
			return fmt.Errorf("mark run %d interrupted: %w", a.ID, err)
		}
	}
	return nil
}

// shownStatus is the status a reader shows for run id: interrupted when its
// process was found gone.
func (s *Store) shownStatus(id int64, status string) string {
	if s.readOnly && status == StatusRunning {
		for _, a := range s.abandoned {
			if a.ID == id {
				return StatusInterrupted
			}
		}
	}
	return status
}
