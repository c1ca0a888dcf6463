package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// Source is one table's data. Rows are numbered 0..Rows-1 and produced BatchRows at a
// time; Append writes batch number b in COPY text format to buf. Append must depend only
// on b (and the Source's own immutable fields), so any worker can generate any batch.
type Source struct {
	Table     string
	Columns   string // "(a,b,c)" or "" for all columns in table order
	Rows      int64
	BatchRows int64
	Append    func(buf []byte, first, last int64) []byte // rows [first, last)
	// Binary means Append writes PostgreSQL's binary COPY tuples (without the file
	// header and trailer, which the loader adds). The server parses binary faster.
	Binary bool
}

// Batches is the number of batches in the source.
func (s *Source) Batches() int64 { return (s.Rows + s.BatchRows - 1) / s.BatchRows }

// Task copies batches [First, Last) of a source into Table (which may be a partition
// of the source's table). With Freeze the task runs in its own transaction that first
// truncates Table, so that COPY may freeze the rows; only a task that owns a whole
// table (or partition) may do that.
type Task struct {
	Source      *Source
	Table       string
	First, Last int64
	Freeze      bool
}

// Rows is how many rows the task copies.
func (t Task) Rows() int64 {
	return min(t.Last*t.Source.BatchRows, t.Source.Rows) - t.First*t.Source.BatchRows
}

// Split cuts a source into n tasks of nearly equal batch counts.
func Split(s *Source, n int) []Task {
	b := s.Batches()
	if int64(n) > b {
		n = int(b)
	}
	if n < 1 {
		n = 1
	}
	tasks := make([]Task, 0, n)
	for i := int64(0); i < int64(n); i++ {
		tasks = append(tasks, Task{Source: s, Table: s.Table, First: b * i / int64(n), Last: b * (i + 1) / int64(n)})
	}
	return tasks
}

// Connector opens a connection for one loading worker.
type Connector func(ctx context.Context) (*pgconn.PgConn, error)

// Run executes tasks on up to workers connections and shows their rows on p (which
// may be nil) from start to finish. The first error cancels the rest. With a journal
// (which may be nil) each task is recorded as it commits, and tasks an earlier
// attempt finished are skipped.
func Run(ctx context.Context, connect Connector, tasks []Task, workers int, p *Progress, j *Journal) error {
	tasks = slices.DeleteFunc(slices.Clone(tasks), func(t Task) bool { return j.Done(taskStep(t)) })
	if len(tasks) == 0 {
		return nil
	}
	if p != nil {
		var total int64
		for _, t := range tasks {
			total += t.Rows()
		}
		p.SetTotal(total)
		p.Start()
		defer p.Finish()
	}
	if workers < 1 {
		workers = 1
	}
	workers = min(workers, len(tasks))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	queue := make(chan Task)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := connect(ctx)
			if err != nil {
				cancel(err)
				return
			}
			defer conn.Close(context.Background())
			for t := range queue {
				if err := copyTask(ctx, conn, t, p, j); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
feed:
	for _, t := range tasks {
		select {
		case queue <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

func copyTask(ctx context.Context, conn *pgconn.PgConn, t Task, p *Progress, j *Journal) error {
	sql := "COPY " + t.Table + t.Source.Columns + " FROM STDIN"
	var opts []string
	if t.Source.Binary {
		opts = append(opts, "FORMAT binary")
	}
	if t.Freeze {
		opts = append(opts, "FREEZE")
	}
	if len(opts) > 0 {
		sql += " WITH (" + strings.Join(opts, ", ") + ")"
	}
	// A frozen copy must follow a TRUNCATE in its transaction; a journalled one
	// commits with its journal row.
	inTx := t.Freeze || j != nil
	begin := "BEGIN"
	if t.Freeze {
		begin += "; TRUNCATE " + t.Table
	}
	if inTx {
		if err := conn.Exec(ctx, begin).Close(); err != nil {
			return fmt.Errorf("load %s: %s: %w", t.Table, strings.ToLower(begin), err)
		}
	}
	r := &reader{task: t, next: t.First, progress: p}
	if t.Source.Binary {
		r.buf = append(r.buf, binaryHeader...)
	}
	if _, err := conn.CopyFrom(ctx, r, sql); err != nil {
		if inTx {
			_ = conn.Exec(context.Background(), "ROLLBACK").Close()
		}
		return fmt.Errorf("load %s: %w", t.Table, err)
	}
	if inTx {
		commit := "COMMIT"
		if j != nil {
			commit = j.record(taskStep(t), strconv.FormatInt(t.Rows(), 10)) + "; COMMIT"
		}
		if err := conn.Exec(ctx, commit).Close(); err != nil {
			return fmt.Errorf("load %s: commit: %w", t.Table, err)
		}
		j.markDone(taskStep(t))
	}
	r.flushProgress()
	return nil
}

// reader turns a task into the byte stream COPY reads, generating a batch whenever
// the previous one has been consumed.
type reader struct {
	task     Task
	next     int64
	buf      []byte
	off      int
	progress *Progress
	pending  int64
	trailer  bool
}

// binaryHeader starts a binary COPY stream: signature, flags, header extension length.
var binaryHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func (r *reader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.next >= r.task.Last {
			if r.task.Source.Binary && !r.trailer {
				r.trailer = true
				r.buf, r.off = append(r.buf[:0], 0xff, 0xff), 0
				continue
			}
			return 0, io.EOF
		}
		s := r.task.Source
		first := r.next * s.BatchRows
		last := min(first+s.BatchRows, s.Rows)
		r.buf = s.Append(r.buf[:0], first, last)
		r.off = 0
		r.next++
		r.pending += last - first
		if r.pending >= 50000 {
			r.flushProgress()
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

func (r *reader) flushProgress() {
	if r.progress != nil && r.pending > 0 {
		r.progress.Add(r.pending)
	}
	r.pending = 0
}

// Exec runs the statements in order on up to n connections, as the steps after the
// data (keys, indexes, VACUUM, ANALYZE) want; the first error stops the rest. With a
// journal (which may be nil) each statement is recorded as it finishes, in its
// transaction where it has one, and those an earlier attempt finished are skipped.
func Exec(ctx context.Context, connect Connector, stmts []string, n int, j *Journal) error {
	stmts = slices.DeleteFunc(slices.Clone(stmts), func(s string) bool { return j.StepDone(s) })
	if len(stmts) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	queue := make(chan string, len(stmts))
	for _, s := range stmts {
		queue <- s
	}
	close(queue)
	var wg sync.WaitGroup
	for range max(1, min(n, len(stmts))) {
		wg.Go(func() {
			conn, err := connect(ctx)
			if err != nil {
				cancel(err)
				return
			}
			defer conn.Close(context.Background())
			for s := range queue {
				if ctx.Err() != nil {
					return
				}
				if err := execStep(ctx, conn, s, j); err != nil {
					cancel(fmt.Errorf("%s: %w", s, err))
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// execStep runs one statement of Exec and records it in the journal.
func execStep(ctx context.Context, conn *pgconn.PgConn, sql string, j *Journal) error {
	if j == nil {
		_, err := conn.Exec(ctx, sql).ReadAll()
		return err
	}
	if transactional(sql) {
		return j.Step(ctx, conn, sql)
	}
	if _, err := conn.Exec(ctx, sql).ReadAll(); err != nil {
		return err
	}
	step := sqlStep(sql)
	if err := ExecSQL(ctx, conn, j.record(step, "")); err != nil {
		return fmt.Errorf("write the load journal: %w", err)
	}
	j.markDone(step)
	return nil
}
