package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// eachStore runs f against a SQLite store and a PostgreSQL one: both hold the
// same results, and answer alike.
func eachStore(t *testing.T, f func(t *testing.T, open func(*testing.T) *Store)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, func(t *testing.T) *Store { s, _ := openTemp(t); return s })
	})
	t.Run("postgres", func(t *testing.T) { f(t, openPostgresTemp) })
}

// openPostgresTemp opens a results store in a new database of the test server.
func openPostgresTemp(t *testing.T) *Store {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	s, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// The PostgreSQL store has the SQLite store's tables and columns, in the same
// schema version.
func TestPostgresSchema(t *testing.T) {
	pgtest.Long(t)
	ctx := t.Context()
	lite, _ := openTemp(t)
	pg := openPostgresTemp(t)
	tables := func(s *Store, q string) map[string][]string {
		rows, err := s.db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string][]string{}
		for rows.Next() {
			var table, column string
			if err := rows.Scan(&table, &column); err != nil {
				t.Fatal(err)
			}
			out[table] = append(out[table], column)
		}
		for k := range out {
			slices.Sort(out[k])
		}
		return out
	}
	want := tables(lite, `SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p WHERE m.type = 'table'`)
	got := tables(pg, `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'pgbakeoff' AND table_name <> 'schema_version'`)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PostgreSQL tables:\n%v\nSQLite's:\n%v", got, want)
	}
	var version int
	if err := pg.db.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&version); err != nil || version != len(migrations) {
		t.Errorf("schema version %d (%v), want %d", version, err, len(migrations))
	}
}

// Many writers at once, each with its own store: nothing is lost, and a reader
// sees every run whole.
func TestPostgresWriters(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	const writers, runs = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, dsn) // all opening a new store at once: one migrates it
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := range runs {
				r := newRun("tpcb", t0.Add(time.Duration(w*runs+i)*time.Second))
				r.Labels = map[string]string{"writer": fmt.Sprint(w)}
				id, err := s.CreateRun(ctx, r)
				if err == nil {
					err = s.AddInterval(ctx, id, Interval{Seq: 1, Phase: PhaseMeasure, Start: r.Started, End: r.Started.Add(time.Second), Txns: int64(i)})
				}
				if err == nil {
					r.Ended, r.Status, r.Summary = r.Started.Add(time.Second), StatusCompleted, []byte(`{"tps":1}`)
					err = s.FinishRun(ctx, r)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, err := OpenReadOnly(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers*runs {
		t.Fatalf("%d runs, want %d", len(all), writers*runs)
	}
	for _, r := range all {
		d, err := s.Run(ctx, r.ID)
		if err != nil || d.Status != StatusCompleted || len(d.Intervals) != 1 {
			t.Errorf("run %d: %+v, %v", r.ID, d, err)
		}
	}
}

// A reader refuses a database that holds no store rather than create one, and the
// store names its database without the password.
func TestPostgresReadOnly(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	if _, err := OpenReadOnly(t.Context(), dsn); err == nil || !strings.Contains(err.Error(), "no pgbakeoff results") {
		t.Errorf("reading an empty database: %v", err)
	}
	withPassword := strings.Replace(dsn, "user=", "password=hunter2 user=", 1)
	if !strings.Contains(withPassword, "hunter2") {
		withPassword = dsn + " password=hunter2"
	}
	s, err := Open(t.Context(), withPassword)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if strings.Contains(s.Path(), "hunter2") || !IsPostgres(withPassword) || IsPostgres("results.db") || IsPostgres("/tmp/a=b.db") {
		t.Errorf("path %q", s.Path())
	}
	var n int
	if err := s.db.QueryRowContext(t.Context(), "SELECT count(*) FROM runs WHERE id = ?", 1).Scan(&n); err != nil && err != sql.ErrNoRows {
		t.Errorf("a statement with a placeholder: %v", err)
	}
}
