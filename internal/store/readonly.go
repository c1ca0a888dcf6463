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
)

// OpenReadOnly opens the results store at path for reading. Nothing is
// written to the file or next to it: it must exist and be a store, and one of
// an older schema is read from a migrated temporary copy. One that SQLite's
// quick_check finds damaged is opened all the same, for what can be read, and
// Damaged says what is wrong. Runs left running by a process that is gone are
// shown as interrupted (Abandoned lists them) without being marked so in the
// file. A missing file gives an error wrapping fs.ErrNotExist, a file that is
// not a store one wrapping ErrNotStore.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open results store: no path given")
	}
	if IsPostgres(path) {
		return openPostgres(ctx, path, true)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	s, err := openReadOnly(ctx, path)
	if damaged(err) {
		err = &damagedError{path: path, detail: err.Error()}
	}
	if err != nil {
		return nil, openError(path, err)
	}
	return s, nil
}

func openReadOnly(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := checkStoreFile(abs, path); err != nil {
		return nil, err
	}
	// A store being written, or left by a killed writer, has a -wal file that
	// holds results; reading it takes the shared-memory index, which SQLite
	// makes next to the file if missing. Without a -wal file everything is in
	// the main file and it is opened immutable, which creates nothing.
	// (A writer that starts meanwhile only appends to its own -wal until its
	// first checkpoint, so the immutable reader still reads a whole store.)
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs))
	wal := exists(abs + "-wal")
	if wal {
		q.Set("mode", "ro")
	} else {
		q.Set("immutable", "1")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path, readOnly: true}
	version, err := s.checkSchema(ctx)
	if err != nil && wal && !exists(abs+"-shm") {
		err = fmt.Errorf("%w (its -wal file holds results, and no -shm file can be made next to it: "+
			"copy the store with its -wal file to a directory you can write)", err)
	}
	if err == nil {
		// A damaged store is still read, as far as it can be: the caller says so.
		if err = s.quickCheck(ctx); errors.Is(err, ErrDamaged) {
			s.damaged, err = err, nil
		}
	}
	if err == nil && version < len(migrations) {
		err = s.readCopy(ctx)
	}
	if err == nil {
		if err = s.findAbandoned(ctx); s.damaged != nil {
			err = nil // the runs table may be where the damage is
		}
	}
	if err != nil {
		return nil, errors.Join(err, s.closeQuiet())
	}
	return s, nil
}

// closeQuiet closes a store that failed to open; only a failure is returned.
func (s *Store) closeQuiet() error {
	if err := s.Close(); err != nil {
		return fmt.Errorf("and %w", err)
	}
	return nil
}

// checkStoreFile makes sure that path is a non-empty SQLite file before SQLite
// opens it.
func checkStoreFile(abs, path string) error {
	f, err := os.Open(abs)
	if err != nil {
		return pathErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return pathErr(err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	case fi.Size() == 0:
		return &notStore{path: path, why: "the file is empty"}
	}
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, sqliteHeader) {
		return &notStore{path: path, why: "not a SQLite database"}
	}
	return nil
}

// checkSchema makes sure the file is a store this pgbakeoff can read and
// returns its schema version.
func (s *Store) checkSchema(ctx context.Context) (int, error) {
	var appID, version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, fmt.Errorf("read application_id: %w", err)
	}
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case appID != applicationID:
		return 0, &notStore{path: s.path, why: fmt.Sprintf("a SQLite database of another program, application_id %#x", appID)}
	case version > len(migrations):
		return 0, fmt.Errorf("%w: schema version %d, this one knows up to %d", ErrSchemaTooNew, version, len(migrations))
	}
	return version, nil
}

// readCopy switches s to a temporary copy of the store with its schema brought
// up to date, since the file itself must not change: the next writer migrates
// it.
func (s *Store) readCopy(ctx context.Context) error {
	tmp, err := os.CreateTemp("", "pgbakeoff-read-*.db")
	if err != nil {
		return fmt.Errorf("copy older schema: %w", err)
	}
	s.copy = tmp.Name()
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("copy older schema: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, "VACUUM INTO ?", s.copy); err != nil {
		return fmt.Errorf("copy older schema: %w", err)
	}
	if err := s.db.Close(); err != nil {
		return err
	}
	if s.db, err = sql.Open("sqlite", dsn(s.copy)); err != nil {
		return err
	}
	if err := migrate(ctx, s.db, s.path); err != nil {
		return err
	}
	// Read-only from here on, as the store itself would be.
	if err := s.db.Close(); err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(s.copy), RawQuery: "immutable=1"}
	s.db, err = sql.Open("sqlite", u.String())
	return err
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return !errors.Is(err, fs.ErrNotExist)
}
