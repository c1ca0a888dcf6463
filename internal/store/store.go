package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
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

// Store is an open results store. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
}

// Open opens the results store at path, creating it if needed, and brings its
// schema up to date.
//
// The file and its -wal and -shm companions are kept readable by the owner
// only, because runs record targets, settings and labels: a new file is
// created with mode 0600, and an existing file that group or others can access
// is tightened to owner-only rather than refused.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open results store: no path given")
	}
	s, err := open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	return s, nil
}

func open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := prepareFile(abs); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path}
	if err := s.setup(ctx, abs); err != nil {
		if cerr := db.Close(); cerr != nil {
			return nil, fmt.Errorf("%w (and close failed: %v)", err, cerr)
		}
		return nil, err
	}
	return s, nil
}

// setup checks the connection settings, migrates the schema and tightens the
// companion files that SQLite has created by now.
func (s *Store) setup(ctx context.Context, abs string) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %s, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	if err := migrate(ctx, s.db); err != nil {
		return err
	}
	return tightenCompanions(abs)
}

// dsn builds a SQLite URI for the absolute path, escaped so that any file
// name works, with the connection settings every pooled connection needs.
// _txlock=immediate makes write transactions take the write lock at BEGIN, so
// two writers queue on busy_timeout instead of one failing on lock upgrade.
func dsn(abs string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// prepareFile creates the database file owner-only before SQLite sees it, or
// checks an existing one: it must be a regular file, writable, and either
// empty or a SQLite database.
func prepareFile(abs string) error {
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
	if fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(fi.Mode().Perm() &^ 0o077); err != nil {
			return fmt.Errorf("make owner-only: %w", pathErr(err))
		}
	}
	if fi.Size() == 0 {
		return nil
	}
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, sqliteHeader) {
		return errors.New("not a SQLite database")
	}
	return tightenCompanions(abs)
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
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close results store %s: %w", s.path, err)
	}
	return nil
}
