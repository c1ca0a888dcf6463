package load

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// JournalTable keeps, in the database being loaded, the steps of a load that have
// finished: each copy task and each statement after the data is recorded in the
// transaction that does its work, so the journal never claims more than the data
// holds. An interrupted load can then go on with the steps that are missing instead
// of starting over. A finished load removes its journal.
const JournalTable = "pgbakeoff_load_journal"

// paramsStep is the journal row holding the load's options; the step names of the
// work itself start with "copy " or "sql ".
const paramsStep = "params"

// Journal records one workload's finished load steps. A nil *Journal records nothing.
type Journal struct {
	workload string
	mu       sync.Mutex
	done     map[string]bool
	values   map[string]string
}

// JournalState is what a load that did not finish left in its journal.
type JournalState struct {
	Params string // the options it was started with, as the workload wrote them
	Copied int    // copy tasks finished
	Rows   int64  // rows those tasks copied
	Steps  int    // statements after the data that finished
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ReadJournal returns the journal workload's last load left, or nil if there is none.
func ReadJournal(ctx context.Context, conn *pgconn.PgConn, workload string) (*JournalState, error) {
	rows, err := readJournal(ctx, conn, workload, false)
	if err != nil || rows == nil {
		return nil, err
	}
	var st JournalState
	found := false
	for step, value := range rows {
		switch {
		case step == paramsStep:
			st.Params, found = value, true
		case strings.HasPrefix(step, "copy "):
			st.Copied++
			n, _ := strconv.ParseInt(value, 10, 64) // rows, written by record
			st.Rows += n
		case strings.HasPrefix(step, "sql "):
			st.Steps++
		}
	}
	if !found {
		return nil, nil
	}
	return &st, nil
}

// readJournal reads workload's journal rows. With settled it first waits for
// the steps still running: a step's statements go to the server in one
// message, so one whose client was interrupted can still commit, journal row
// and all, after the client is gone, and a load resuming before that would
// run it again.
func readJournal(ctx context.Context, conn *pgconn.PgConn, workload string, settled bool) (map[string]string, error) {
	res, err := conn.Exec(ctx, "select to_regclass("+quoteLiteral(JournalTable)+") is not null").ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read the load journal: %w", err)
	}
	if len(res) == 0 || len(res[0].Rows) == 0 || string(res[0].Rows[0][0]) != "t" {
		return nil, nil
	}
	sql := "select step, coalesce(value, '') from " + JournalTable + " where workload = " + quoteLiteral(workload)
	if settled {
		// Share mode waits for the steps' row exclusive locks (see Step).
		sql = "begin; lock table " + JournalTable + " in share mode; " + sql + "; commit"
	}
	res, err = conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		_ = ExecSQL(context.Background(), conn, "rollback")
		return nil, fmt.Errorf("read the load journal: %w", err)
	}
	sel := res[len(res)-1]
	if settled {
		sel = res[len(res)-2] // before the commit
	}
	rows := map[string]string{}
	for _, r := range sel.Rows {
		rows[string(r[0])] = string(r[1])
	}
	return rows, nil
}

// StartJournal begins a new journal for workload's load with these options,
// forgetting any earlier one.
func StartJournal(ctx context.Context, conn *pgconn.PgConn, workload, params string) (*Journal, error) {
	sql := "begin; " +
		"create table if not exists " + JournalTable + " (workload text not null, step text not null, value text, primary key (workload, step)); " +
		forgetSQL(workload) + "; " +
		"insert into " + JournalTable + " values (" + quoteLiteral(workload) + ", " + quoteLiteral(paramsStep) + ", " + quoteLiteral(params) + "); " +
		"commit"
	if err := ExecSQL(ctx, conn, sql); err != nil {
		_ = ExecSQL(context.Background(), conn, "rollback")
		return nil, fmt.Errorf("start the load journal: %w", err)
	}
	return &Journal{workload: workload, done: map[string]bool{}, values: map[string]string{}}, nil
}

func forgetSQL(workload string) string {
	return "delete from " + JournalTable + " where workload = " + quoteLiteral(workload)
}

// forgetJournal removes what an earlier load of workload journalled, if anything.
func forgetJournal(ctx context.Context, conn *pgconn.PgConn, workload string) error {
	rows, err := readJournal(ctx, conn, workload, false)
	if err != nil || len(rows) == 0 {
		return err
	}
	if err := ExecSQL(ctx, conn, (&Journal{workload: workload}).finishSQL()); err != nil {
		return fmt.Errorf("remove the load journal: %w", err)
	}
	return nil
}

// ResumeJournal reopens workload's journal when it was started with the same
// options; it returns nil when there is none to resume.
func ResumeJournal(ctx context.Context, conn *pgconn.PgConn, workload, params string) (*Journal, error) {
	rows, err := readJournal(ctx, conn, workload, true)
	if err != nil || rows == nil || rows[paramsStep] != params {
		return nil, err
	}
	j := &Journal{workload: workload, done: map[string]bool{}, values: map[string]string{}}
	for step, value := range rows {
		if k, ok := strings.CutPrefix(step, "value "); ok {
			j.values[k] = value
			continue
		}
		j.done[step] = true
	}
	return j, nil
}

// Done reports whether step finished in an earlier attempt (or this one).
func (j *Journal) Done(step string) bool {
	if j == nil {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.done[step]
}

func (j *Journal) markDone(step string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	j.done[step] = true
	j.mu.Unlock()
}

// record is the statement that marks step finished, for the step's own transaction.
func (j *Journal) record(step, value string) string {
	return "insert into " + JournalTable + " values (" + quoteLiteral(j.workload) + ", " + quoteLiteral(step) + ", " + quoteLiteral(value) + ") on conflict (workload, step) do update set value = excluded.value"
}

// Value returns what Keep stored under key, "" if nothing.
func (j *Journal) Value(key string) string {
	if j == nil {
		return ""
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.values[key]
}

// Keep stores a value the load must reuse when it resumes (the time its rows carry).
func (j *Journal) Keep(ctx context.Context, conn *pgconn.PgConn, key, value string) error {
	if j == nil {
		return nil
	}
	if err := ExecSQL(ctx, conn, j.record("value "+key, value)); err != nil {
		return fmt.Errorf("write the load journal: %w", err)
	}
	j.mu.Lock()
	j.values[key] = value
	j.mu.Unlock()
	return nil
}

// Step runs sql unless an earlier attempt finished it, recording it in the same
// transaction. sql may hold several statements; it must be able to run in a
// transaction block.
func (j *Journal) Step(ctx context.Context, conn *pgconn.PgConn, sql string) error {
	if j == nil {
		return ExecSQL(ctx, conn, sql)
	}
	step := sqlStep(sql)
	if j.Done(step) {
		return nil
	}
	// The lock, held to the end, lets a resuming load wait for this step.
	lock := "lock table " + JournalTable + " in row exclusive mode"
	if err := ExecSQL(ctx, conn, "begin;\n"+lock+";\n"+sql+";\n"+j.record(step, "")+";\ncommit"); err != nil {
		_ = ExecSQL(context.Background(), conn, "rollback")
		return err
	}
	j.markDone(step)
	return nil
}

// finishSQL removes the workload's journal, and the journal table once no load uses
// it; MarkLoaded runs it with the mark that declares the data whole.
func (j *Journal) finishSQL() string {
	return "delete from " + JournalTable + " where workload = " + quoteLiteral(j.workload) + ";\n" +
		"do $$ begin if not exists (select from " + JournalTable + ") then drop table " + JournalTable + "; end if; end $$"
}

// StepDone reports whether Step or Exec finished sql in an earlier attempt.
func (j *Journal) StepDone(sql string) bool { return j.Done(sqlStep(sql)) }

// sqlStep names a statement in the journal: its text, or for a long one (a schema
// with a thousand partitions) its start and a hash, within what a key may hold.
func sqlStep(sql string) string {
	if len(sql) <= 200 {
		return "sql " + sql
	}
	sum := sha256.Sum256([]byte(sql))
	return fmt.Sprintf("sql %s... #%x", strings.ToValidUTF8(sql[:100], ""), sum[:12])
}

// taskStep names a copy task in the journal.
func taskStep(t Task) string {
	return fmt.Sprintf("copy %s %d-%d", t.Table, t.First, t.Last)
}

// transactional reports whether a statement may run inside a transaction block;
// VACUUM may not.
func transactional(sql string) bool {
	return !strings.HasPrefix(strings.ToLower(strings.TrimSpace(sql)), "vacuum")
}

// Start is how a load begins. Schema makes the tables and marks them loading; Clear
// removes an earlier load's tables.
type Start struct {
	Workload, Params string
	Resume           bool // go on with an unfinished load of the same Params
	// Unlogged data is emptied by a server crash while a journal would outlive it:
	// such a load keeps no journal and is never resumed.
	Unlogged   bool
	Schema     string
	Clear      func() error
	ClearPhase string            // the phase Clear is timed as; "" = "move old tables aside"
	Values     map[string]string // kept in a new journal for a resumed load to reuse (see Keep)
}

// Begin resumes the journal of an unfinished load of the same options when s.Resume
// asks and its tables were made, returning resumed; otherwise it starts a new
// journal, clears the old tables (as phase "move old tables aside") and makes the
// new ones (phase "create tables") as the journal's first step after s.Values.
func Begin(ctx context.Context, conn *pgconn.PgConn, phases *Phases, s Start) (j *Journal, resumed bool, err error) {
	if s.Resume && !s.Unlogged {
		if j, err = ResumeJournal(ctx, conn, s.Workload, s.Params); err != nil {
			return nil, false, err
		}
		if j.StepDone(s.Schema) {
			return j, true, nil
		}
	}
	if s.Unlogged {
		j = nil // a nil journal records nothing
		if err := forgetJournal(ctx, conn, s.Workload); err != nil {
			return nil, false, err
		}
	} else if j, err = StartJournal(ctx, conn, s.Workload, s.Params); err != nil {
		return nil, false, err
	}
	for k, v := range s.Values {
		if err := j.Keep(ctx, conn, k, v); err != nil {
			return nil, false, err
		}
	}
	phases.Begin(cmp.Or(s.ClearPhase, "move old tables aside"))
	if err := s.Clear(); err != nil {
		return nil, false, fmt.Errorf("drop old tables: %w", err)
	}
	phases.Begin("create tables")
	if err := j.Step(ctx, conn, s.Schema); err != nil {
		return nil, false, fmt.Errorf("create tables: %w", err)
	}
	return j, false, nil
}
