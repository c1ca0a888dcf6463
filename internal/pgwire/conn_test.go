package pgwire

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// open connects to dsn with pgx and takes the connection over.
func open(t *testing.T, dsn string, blocking bool) (*Conn, uint32) {
	t.Helper()
	return openAfter(t, dsn, blocking, nil)
}

// openAfter is open with prev's buffers.
func openAfter(t *testing.T, dsn string, blocking bool, prev *Conn) (*Conn, uint32) {
	t.Helper()
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	pid := conn.PID()
	hc, err := conn.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	c := New(hc.Conn, blocking, prev)
	c.ChooseWait(&WaitChooser{}, new(atomic.Int64))
	t.Cleanup(c.Close)
	return c, pid
}

// ways runs f on a connection read through Go's poller and on a blocking one.
func ways(t *testing.T, f func(t *testing.T, blocking bool)) {
	for _, blocking := range []bool{false, true} {
		t.Run("blocking="+strconv.FormatBool(blocking), func(t *testing.T) { f(t, blocking) })
	}
}

// TestWriteAfterTerminate: a request written to a backend that was terminated
// between transactions fails with a broken pipe, but the server said why before it
// left, and that is what the client reports: 57P01, in both ways of waiting.
func TestWriteAfterTerminate(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ways(t, func(t *testing.T, blocking bool) {
		c, pid := open(t, dsn, blocking)
		p := strconv.Itoa(int(pid))
		// With a timeout, pg_terminate_backend returns once the backend is gone.
		if got := pgtest.Query(t, dsn, "select pg_terminate_backend("+p+", 5000)"); got != "t" {
			t.Fatalf("the backend was not gone within 5 s: %s", got)
		}
		c.AppendQuery([]byte("SELECT 1"))
		err := c.RoundTrip()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57P01" || !errors.Is(err, ErrClosed) {
			t.Errorf("got %v, want the server's last words before the broken pipe: 57P01", err)
		}
	})
}

// TestQueriesCount: the server's own command tags are counted as sysbench counts
// results: a result set, even empty, is a read (and so is INSERT ... RETURNING);
// changed rows make a write; BEGIN, DDL and a write that changed nothing are other.
func TestQueriesCount(t *testing.T) {
	c, _ := open(t, pgtest.NewDatabase(t), false)
	var q Queries
	c.Stmts = &q
	c.AppendQuery([]byte(`BEGIN; SELECT 1 WHERE false; CREATE TEMP TABLE x (a int); INSERT INTO x VALUES (1), (2);
		UPDATE x SET a = 3 WHERE a = 9; DELETE FROM x; INSERT INTO x SELECT 1 RETURNING a; COMMIT`))
	if err := c.RoundTrip(); err != nil || c.Err() != nil {
		t.Fatal(err, c.Err())
	}
	if want := (Queries{Read: 2, Write: 2, Other: 4}); q != want {
		t.Errorf("counted %+v, want %+v", q, want)
	}
}

// TestLongAnswer: an answer many times the read buffer, with rows of every size,
// is framed whole and its rows kept in order, in both ways of waiting.
func TestLongAnswer(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ways(t, func(t *testing.T, blocking bool) {
		c, _ := open(t, dsn, blocking)
		c.KeepRows(true)
		var p Params
		p.Int(5000)
		AppendParse(c, "SELECT g, repeat('x', g % 300) FROM generate_series(1, $1) g")
		c.AppendBindText("", &p)
		c.AppendExecuteSync()
		if err := c.RoundTrip(); err != nil || c.Err() != nil {
			t.Fatal(err, c.Err())
		}
		if c.KeptRows() != 5000 {
			t.Fatalf("%d rows, want 5000", c.KeptRows())
		}
		for _, row := range []int{0, 1, 299, 2500, 4999} {
			g := c.IntValue(row, 0)
			if g != int64(row+1) || string(c.Value(row, 1)) != strings.Repeat("x", int(g%300)) {
				t.Fatalf("row %d: %d, %d bytes", row, g, len(c.Value(row, 1)))
			}
		}
	})
}

// TestBuffersLent: a connection made after another closed takes its buffers,
// grown as they were, and starts with nothing of its answers.
func TestBuffersLent(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ways(t, func(t *testing.T, blocking bool) {
		first, _ := open(t, dsn, blocking)
		first.KeepRows(true)
		first.AppendQuery([]byte("SELECT repeat('x', 40000)"))
		if err := first.RoundTrip(); err != nil || first.Err() != nil {
			t.Fatal(err, first.Err())
		}
		grown := len(first.in)
		first.AppendQuery([]byte("SELECT 1")) // left unsent in the buffer
		first.Close()
		c, _ := openAfter(t, dsn, blocking, first)
		if len(c.in) != grown || grown <= 16384 {
			t.Errorf("read buffer of %d bytes, want the first connection's, grown to %d", len(c.in), grown)
		}
		c.KeepRows(true)
		c.AppendQuery([]byte("SELECT 'second'"))
		if err := c.RoundTrip(); err != nil || c.Err() != nil {
			t.Fatal(err, c.Err())
		}
		if c.KeptRows() != 1 || string(c.Value(0, 0)) != "second" {
			t.Errorf("%d rows, first %q; want the one row of the second connection's answer", c.KeptRows(), c.Value(0, 0))
		}
	})
}

// TestQueued: exchanges queued ahead are answered first, their errors kept and
// their rows not, and the last one's results are kept apart with their columns;
// the commits are those of the transactions that ended well.
func TestQueued(t *testing.T) {
	c, _ := open(t, pgtest.NewDatabase(t), false)
	var commits int64
	c.Commits = &commits
	c.AppendQuery([]byte("SELECT 1/0"))
	c.Queue()
	c.AppendQuery([]byte("SELECT 7"))
	c.Queue()
	c.AppendQuery([]byte("SELECT 1 AS a, NULL AS b; CREATE TEMP TABLE y (c int); SELECT -42 AS c"))
	c.KeepResults(true)
	if err := c.RoundTrip(); err != nil {
		t.Fatal(err)
	}
	if c.Err() == nil || c.Err().Code != "22012" || c.Outcome() != c.Err() {
		t.Errorf("error %v, want the first exchange's division by zero", c.Err())
	}
	if commits != 2 || c.InTransaction() {
		t.Errorf("%d commits, in a transaction %v; want 2 and idle", commits, c.InTransaction())
	}
	if c.Results() != 3 || c.KeptRows() != 2 {
		t.Fatalf("%d results and %d rows, want 3 and 2", c.Results(), c.KeptRows())
	}
	var names []string
	for r := range c.Results() {
		c.Columns(r, func(_ int, name []byte) error {
			names = append(names, string(name))
			return nil
		})
	}
	if strings.Join(names, ",") != "a,b,c" {
		t.Errorf("columns %v, want a,b,c", names)
	}
	tuples, first, last := c.Result(2)
	if !tuples || first != 1 || last != 2 || c.IntValue(first, 0) != -42 || c.Value(0, 1) != nil {
		t.Errorf("the last result: %v %d %d %d", tuples, first, last, c.IntValue(first, 0))
	}
	if tuples, _, _ := c.Result(1); tuples {
		t.Error("CREATE TABLE has no rows, yet its result says it has")
	}
}

// TestStatement: a statement with integer parameters sends the same values by
// every protocol, and the simple protocol refuses placeholders it cannot fill.
func TestStatement(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	const sql = "SELECT $2::bigint - $1::bigint, $1::bigint * 10, '-'"
	for _, p := range []Protocol{Prepared, Extended, Simple} {
		t.Run(p.String(), func(t *testing.T) {
			pc, err := pgconn.Connect(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pc.Prepare(context.Background(), "s", sql, nil); err != nil {
				t.Fatal(err)
			}
			hc, err := pc.Hijack()
			if err != nil {
				t.Fatal(err)
			}
			c := New(hc.Conn, false, nil)
			defer c.Close()
			st, err := NewStatement(p, "s", sql, 2)
			if err != nil {
				t.Fatal(err)
			}
			c.KeepRows(true)
			c.AppendStatement(st, []int64{-3, 10})
			if err := c.RoundTrip(); err != nil || c.Err() != nil {
				t.Fatal(err, c.Err())
			}
			if c.KeptRows() != 1 || c.IntValue(0, 0) != 13 || c.IntValue(0, 1) != -30 || string(c.Value(0, 2)) != "-" {
				t.Errorf("%d rows: %s, %s, %s", c.KeptRows(), c.Value(0, 0), c.Value(0, 1), c.Value(0, 2))
			}
		})
	}
	for _, bad := range []string{"SELECT $3", "SELECT $0", "SELECT '$'"} {
		if _, err := NewStatement(Simple, "", bad, 2); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
