package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotFound is wrapped by errors for a run that is not in the store.
var ErrNotFound = errors.New("not found")

// ErrSchemaTooNew is wrapped by Open when the file was written by a newer
// pgbakeoff whose schema this one does not know.
var ErrSchemaTooNew = errors.New("written by a newer pgbakeoff")

// busyTimeoutMs is how long a statement waits for another writer (another
// pgbakeoff process on the same file) before failing with SQLITE_BUSY.
const busyTimeoutMs = 10000

// sqliteHeader starts every SQLite 3 database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// ErrNotStore is wrapped by Open and OpenReadOnly for a file that is not a
// results store: not SQLite, another program's database, or (for reading) empty.
var ErrNotStore = errors.New("not a pgbakeoff results store")

// notStore says which file is not a results store, and what it is instead.
type notStore struct{ path, why string }

func (e *notStore) Error() string {
	return fmt.Sprintf("%s is not a pgbakeoff results store (%s)", e.path, e.why)
}

func (e *notStore) Is(target error) bool { return target == ErrNotStore }

// Store is an open results store. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
	// readOnly stores are opened by OpenReadOnly; copy is the temporary file
	// such a store reads from when the file has an older schema.
	readOnly bool
	copy     string
	// abandoned are the runs whose process was found gone when the store was
	// opened; a writer has marked them interrupted, a reader shows them so.
	abandoned []Abandoned
	// damaged is, for a reader, what quick_check found wrong with the file.
	damaged error
	// pg: the store is a PostgreSQL database (openPostgres); path is then its
	// DSN without the password.
	pg bool
}

// Open opens the results store at path for writing, creating it if needed,
// and brings its schema up to date. A file that is neither empty nor SQLite is
// refused before anything about it changes, as is a damaged store (see
// quickCheck). Runs left running by a process of this host that is gone are
// marked interrupted; Abandoned lists them.
//
// The file and its -wal and -shm companions are kept readable by the owner
// only, because runs record targets, settings and labels: a new file is
// created with mode 0600, and an existing store that group or others can
// access is tightened to owner-only rather than refused.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open results store: no path given")
	}
	if IsPostgres(path) {
		return openPostgres(ctx, path, false)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	s, err := open(ctx, path)
	if err != nil {
		return nil, openError(path, err)
	}
	return s, nil
}

// openError names the store in an error of Open's, unless the error does.
func openError(path string, err error) error {
	if errors.Is(err, ErrNotStore) || errors.Is(err, ErrDamaged) {
		return err
	}
	return fmt.Errorf("open results store %s: %w", path, err)
}

func open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := prepareFile(abs, path); err != nil {
		return nil, err
	}
	// Switching a new file to WAL takes an exclusive lock without SQLite's
	// busy handler, so two processes opening one new store at once can get
	// SQLITE_BUSY at once: setup is tried again, as a busy statement would wait,
	// for up to busyTimeoutMs.
	//
	// An attempt may have marked runs abandoned before it failed; the next finds
	// them marked already, so they are carried over for Abandoned to report.
	deadline := time.Now().Add(busyTimeoutMs * time.Millisecond)
	var found []Abandoned
	for {
		db, err := sql.Open("sqlite", dsn(abs))
		if err != nil {
			return nil, err
		}
		s := &Store{db: db, path: path}
		err = s.setup(ctx, abs)
		for _, a := range found {
			if !slices.ContainsFunc(s.abandoned, func(b Abandoned) bool { return b.ID == a.ID }) {
				s.abandoned = append(s.abandoned, a)
			}
		}
		slices.SortFunc(s.abandoned, func(a, b Abandoned) int { return cmp.Compare(a.ID, b.ID) })
		if err == nil {
			return s, nil
		}
		found = s.abandoned
		if cerr := db.Close(); cerr != nil {
			return nil, fmt.Errorf("%w (and close failed: %v)", err, cerr)
		}
		if !busy(err) || time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (gave up waiting: %w)", err, ctx.Err())
		case <-time.After(time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
}

// busy reports whether err is SQLite's "database is locked".
func busy(err error) bool {
	se, ok := errors.AsType[*sqlite.Error](err)
	return ok && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// setup checks the connection settings and the file's integrity, migrates the
// schema, marks abandoned runs and tightens the companion files that SQLite
// has created by now.
func (s *Store) setup(ctx context.Context, abs string) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		if damaged(err) {
			return &damagedError{path: s.path, detail: err.Error()}
		}
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %s, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	if err := s.quickCheck(ctx); err != nil {
		return err
	}
	if err := migrate(ctx, s.db, s.path); err != nil {
		if damaged(err) {
			return &damagedError{path: s.path, detail: err.Error()}
		}
		return err
	}
	if err := s.markAbandoned(ctx); err != nil {
		return err
	}
	return tightenCompanions(abs)
}

// dsn builds a SQLite URI for the absolute path, escaped so that any file
// name works, with the connection settings every pooled connection needs.
// _txlock=immediate makes write transactions take the write lock at BEGIN, so
// two writers queue on busy_timeout instead of one failing on lock upgrade.
// Each connection's page cache is held to 512 KiB (SQLite's default is 2 MiB): a
// long run's pool fills several with pages it never reads again, and reading a
// page back from the operating system's cache costs a system call.
func dsn(abs string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "cache_size(-512)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// prepareFile creates the database file owner-only before SQLite sees it, or
// checks an existing one: it must be a regular file, writable, and either
// empty or a SQLite database. Only then is an existing file made owner-only:
// a file that is not a store is left exactly as it was.
func prepareFile(abs, path string) error {
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return pathErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return pathErr(err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > 0 {
		if err := checkHeader(f, path); err != nil {
			return err
		}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(fi.Mode().Perm() &^ 0o077); err != nil {
			return fmt.Errorf("make owner-only: %w", pathErr(err))
		}
	}
	if fi.Size() == 0 {
		return nil
	}
	return tightenCompanions(abs)
}

// checkHeader refuses, from the file's first bytes and before SQLite changes
// anything (its journal mode, say), a file that is not SQLite or that the
// header shows to be another program's: an application_id not ours, or none
// with a schema version, which pgbakeoff sets together. Other programs'
// databases without either are refused by migrate.
func checkHeader(f io.Reader, path string) error {
	head := make([]byte, 100) // the database header
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head[:len(sqliteHeader)], sqliteHeader) {
		return &notStore{path: path, why: "not a SQLite database"}
	}
	version, appID := binary.BigEndian.Uint32(head[60:]), binary.BigEndian.Uint32(head[68:])
	if appID != applicationID && (appID != 0 || version != 0) {
		return &notStore{path: path, why: fmt.Sprintf("a SQLite database of another program, application_id %#x", appID)}
	}
	return nil
}

// tightenCompanions makes the -wal and -shm files owner-only if they exist.
// SQLite gives them the main file's mode when it creates them, but files left
// behind by an older writer may be looser.
func tightenCompanions(abs string) error {
	for _, suffix := range []string{"-wal", "-shm"} {
		name := abs + suffix
		fi, err := os.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(name, fi.Mode().Perm()&^0o077); err != nil {
				return fmt.Errorf("make %s owner-only: %w", filepath.Base(name), pathErr(err))
			}
		}
	}
	return nil
}

// pathErr drops the path from an *fs.PathError, since the caller's message
// already names the file.
func pathErr(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// Path returns the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the store. Everything written is already committed.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.copy != "" {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if rerr := os.Remove(s.copy + suffix); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = errors.Join(err, rerr)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("close results store %s: %w", s.path, err)
	}
	return nil
}
