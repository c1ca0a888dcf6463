package load_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// numbers is a source of n rows holding 1..n, counting the batches it generates.
func numbers(table string, n int64, made *atomic.Int64, hook func(first int64)) *load.Source {
	return &load.Source{Table: table, Rows: n, BatchRows: 100,
		Append: func(buf []byte, first, last int64) []byte {
			made.Add(1)
			if hook != nil {
				hook(first)
			}
			for i := first; i < last; i++ {
				buf = strconv.AppendInt(buf, i+1, 10)
				buf = append(buf, '\n')
			}
			return buf
		}}
}

// TestJournalResumes interrupts a load after some of its tasks committed and checks
// that resuming copies exactly the missing ones, runs only the statements not yet
// done, and leaves every row once.
func TestJournalResumes(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
	conn, err := connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const params = "rows=10000"
	j, err := load.StartJournal(ctx, conn, "numbers", params)
	if err != nil {
		t.Fatal(err)
	}
	schema := "create table n (v int); create table f (v int); " + load.MarkLoadingSQL("n")
	if err := j.Step(ctx, conn, schema); err != nil {
		t.Fatal(err)
	}
	if err := j.Keep(ctx, conn, "time", "12345"); err != nil {
		t.Fatal(err)
	}

	// First attempt: ten tasks on one worker; the fifth stops it halfway through.
	var made atomic.Int64
	stop, cancel := context.WithCancelCause(ctx)
	interrupted := errors.New("interrupted")
	src := numbers("n", 10000, &made, func(first int64) {
		if first == 4500 {
			cancel(interrupted)
		}
	})
	frozen := numbers("f", 500, &made, nil)
	tasks := append(load.Split(src, 10), load.Task{Source: frozen, Table: "f", Last: frozen.Batches(), Freeze: true})
	if err := load.Run(stop, connect, tasks, 1, nil, j); !errors.Is(err, interrupted) && !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	if got := pgtest.Query(t, dsn, "select count(*) from n"); got != "4000" {
		t.Fatalf("after the interruption n holds %s rows, want the 4 committed tasks' 4000", got)
	}
	if unfinished, err := load.Unfinished(ctx, conn, "n"); err != nil || !unfinished {
		t.Fatalf("unfinished = %v, %v; want the mark to say so", unfinished, err)
	}
	st, err := load.ReadJournal(ctx, conn, "numbers")
	if err != nil || st == nil || st.Params != params || st.Copied != 4 || st.Rows != 4000 || st.Steps != 1 {
		t.Fatalf("journal state %+v, %v; want params %q, 4 tasks of 4000 rows, 1 step", st, err, params)
	}
	if other, err := load.ResumeJournal(ctx, conn, "numbers", "rows=20000"); err != nil || other != nil {
		t.Fatalf("resume with other params: %v, %v; want nothing to resume", other, err)
	}

	// Second attempt: only the six unfinished tasks (60 batches) and f's 5 batches.
	j, err = load.ResumeJournal(ctx, conn, "numbers", params)
	if err != nil || j == nil {
		t.Fatalf("resume: %v, %v", j, err)
	}
	if !j.StepDone(schema) || j.Value("time") != "12345" {
		t.Errorf("resumed journal: schema done %v, time %q; want true, 12345", j.StepDone(schema), j.Value("time"))
	}
	made.Store(0)
	src = numbers("n", 10000, &made, nil)
	tasks = append(load.Split(src, 10), load.Task{Source: frozen, Table: "f", Last: frozen.Batches(), Freeze: true})
	if err := load.Run(ctx, connect, tasks, 2, nil, j); err != nil {
		t.Fatal(err)
	}
	if got := made.Load(); got != 65 {
		t.Errorf("resumed load generated %d batches, want 65 (60 of n's missing tasks and 5 of f)", got)
	}
	if got := pgtest.Query(t, dsn, "select count(*) || ' ' || count(distinct v) || ' ' || min(v) || ' ' || max(v) from n"); got != "10000 10000 1 10000" {
		t.Errorf("n after resuming: count, distinct, min, max = %s; want every row once", got)
	}
	stmts := []string{"create index on n (v)", "vacuum analyze f"}
	if err := load.Exec(ctx, connect, stmts, 2, j); err != nil {
		t.Fatal(err)
	}
	// Done statements are not run again: a second index build would add n_v_idx1.
	if err := load.Exec(ctx, connect, stmts, 2, j); err != nil {
		t.Fatal(err)
	}
	if got := pgtest.Query(t, dsn, "select count(*) from pg_indexes where tablename = 'n'"); got != "1" {
		t.Errorf("n has %s indexes, want 1: a finished statement ran again", got)
	}
	if err := load.MarkLoaded(ctx, conn, "n", "", j); err != nil {
		t.Fatal(err)
	}
	if got := pgtest.Query(t, dsn, "select to_regclass('"+load.JournalTable+"') is null"); got != "t" {
		t.Error("the journal table is still there after the load finished")
	}
	if unfinished, err := load.Unfinished(ctx, conn, "n"); err != nil || unfinished {
		t.Errorf("unfinished = %v, %v after MarkLoaded", unfinished, err)
	}
}

// newJournal starts a journal of workload, with options "p", in a database of
// the test's own, and returns the database, a connection to it and the journal.
func newJournal(t *testing.T, workload string) (string, *pgconn.PgConn, *load.Journal) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	j, err := load.StartJournal(context.Background(), conn, workload, "p")
	if err != nil {
		t.Fatal(err)
	}
	return dsn, conn, j
}

// TestJournalLongStep: a statement too long for an index key (a schema with many
// partitions) is still recorded, and recognised as done.
func TestJournalLongStep(t *testing.T) {
	ctx := context.Background()
	_, conn, j := newJournal(t, "long")
	sql := "create table p (v int) partition by range (v)"
	for i := range 300 {
		sql += "; create table p_" + strconv.Itoa(i) + " partition of p for values from (" + strconv.Itoa(i*10) + ") to (" + strconv.Itoa(i*10+10) + ")"
	}
	if err := j.Step(ctx, conn, sql); err != nil {
		t.Fatal(err)
	}
	j, err := load.ResumeJournal(ctx, conn, "long", "p")
	if err != nil || !j.StepDone(sql) || j.StepDone(sql+" ") {
		t.Fatalf("resumed: %v; done %v, a different statement done %v", err, j.StepDone(sql), j.StepDone(sql+" "))
	}
	if err := j.Step(ctx, conn, sql); err != nil {
		t.Errorf("a finished step ran again: %v", err)
	}
}

// TestJournalUnlogged: an unlogged load keeps no journal (a crash empties its tables
// but would leave the journal), and forgets the journal of an earlier load, which
// no longer describes the tables.
func TestJournalUnlogged(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := "create unlogged table u (v int); " + load.MarkLoadingSQL("u")
	start := load.Start{Workload: "u", Params: "p", Resume: true, Unlogged: true, Schema: schema,
		Clear: func() error { return load.ExecSQL(ctx, conn, "drop table if exists u") }}
	earlier, err := load.StartJournal(ctx, conn, "u", "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := earlier.Step(ctx, conn, schema); err != nil {
		t.Fatal(err)
	}
	var phases load.Phases
	j, resumed, err := load.Begin(ctx, conn, &phases, start)
	if err != nil || j != nil || resumed {
		t.Fatalf("Begin unlogged: journal %v, resumed %v, %v; want no journal, not resumed", j, resumed, err)
	}
	if st, err := load.ReadJournal(ctx, conn, "u"); err != nil || st != nil {
		t.Errorf("journal after an unlogged Begin: %+v, %v; want the earlier one forgotten", st, err)
	}
	if unfinished, err := load.Unfinished(ctx, conn, "u"); err != nil || !unfinished {
		t.Errorf("unfinished = %v, %v; want the new tables marked loading", unfinished, err)
	}
}

// A step whose client is gone may still commit on the server, journal row and
// all: its statements went in one message. A load resuming meanwhile waits for
// it, and so skips it rather than running it twice.
func TestJournalStepOutlivesItsClient(t *testing.T) {
	ctx := context.Background()
	dsn, conn, j := newJournal(t, "slow")
	// A client that sends the step and then reads nothing more, as one stopped
	// dead: the server goes on alone.
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	stalled := make(chan struct{})
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		return &silentConn{Conn: c, after: stalled}, err
	}
	gone, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Conn().Close()
	step := "create table s (v int); select pg_sleep(1); alter table s add primary key (v)"
	close(stalled)
	go j.Step(ctx, gone, step) // never returns: its replies are never read
	// Until the step is under way (it holds the journal's lock through its sleep),
	// however long a loaded machine takes to send it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if pgtest.Query(t, dsn, "select count(*) > 0 from pg_stat_activity where pid = "+strconv.Itoa(int(gone.PID()))+" and wait_event = 'PgSleep'") == "t" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the step never began its sleep")
		}
	}

	resumed, err := load.ResumeJournal(ctx, conn, "slow", "p")
	if err != nil {
		t.Fatal(err)
	}
	if !resumed.StepDone(step) {
		t.Fatalf("the resumed journal lacks the step that went on without its client")
	}
	if err := resumed.Step(ctx, conn, step); err != nil {
		t.Errorf("the step ran again: %v", err)
	}
}

// silentConn reads nothing once after is closed: a client stopped dead.
type silentConn struct {
	net.Conn
	after chan struct{}
}

func (c *silentConn) Read(p []byte) (int, error) {
	select {
	case <-c.after:
		select {} // never: the test ends first
	default:
		return c.Conn.Read(p)
	}
}
