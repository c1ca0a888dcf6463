package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fileState is what a reader must leave as it found: the bytes, the mode and
// which companion files exist.
type fileState struct {
	data      []byte
	mode      fs.FileMode
	companion map[string]bool
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fileState{data: data, mode: fi.Mode().Perm(), companion: map[string]bool{}}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		_, err := os.Stat(path + suffix)
		st.companion[suffix] = err == nil
	}
	return st
}

func (a fileState) same(b fileState) bool {
	return bytes.Equal(a.data, b.data) && a.mode == b.mode && a.companion["-wal"] == b.companion["-wal"] &&
		a.companion["-shm"] == b.companion["-shm"] && a.companion["-journal"] == b.companion["-journal"]
}

// TestReadOnlyRefusesNonStores: opening for reading never makes a store of a
// file, nor changes one that is not a store, and says what the file is not.
func TestReadOnlyRefusesNonStores(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		want    string
	}{
		{"empty", func(t *testing.T, path string) { writeMode(t, path, nil, 0o644) },
			"is not a pgbakeoff results store (the file is empty)"},
		{"text", func(t *testing.T, path string) {
			writeMode(t, path, []byte(strings.Repeat("not a database\n", 100)), 0o644)
		}, "is not a pgbakeoff results store (not a SQLite database)"},
		{"another program's database", func(t *testing.T, path string) {
			exec1(t, path, "CREATE TABLE notes (body TEXT)")
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is not a pgbakeoff results store (a SQLite database of another program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.db")
			tt.prepare(t, path)
			before := stateOf(t, path)
			s, err := OpenReadOnly(t.Context(), path)
			if err == nil {
				s.Close()
				t.Fatal("OpenReadOnly succeeded")
			}
			if !errors.Is(err, ErrNotStore) {
				t.Errorf("error %q does not wrap ErrNotStore", err)
			}
			if !strings.Contains(err.Error(), path+" "+tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line with %q", err, path+" "+tt.want)
			}
			if after := stateOf(t, path); !before.same(after) {
				t.Errorf("the file changed: mode %v -> %v, %d -> %d bytes, companions %v -> %v",
					before.mode, after.mode, len(before.data), len(after.data), before.companion, after.companion)
			}
		})
	}

	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "results.db")
		s, err := OpenReadOnly(t.Context(), path)
		if err == nil {
			s.Close()
			t.Fatal("OpenReadOnly succeeded")
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %q does not wrap fs.ErrNotExist", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a file was made (stat error %v)", err)
		}
	})
}

// TestWriterLeavesForeignFiles: a file that is neither empty nor SQLite is
// refused by a writer before anything about it changes, its mode included.
func TestWriterLeavesForeignFiles(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{"text", func(t *testing.T, path string) {
			writeMode(t, path, []byte(strings.Repeat("my notes\n", 50)), 0o644)
		}},
		{"another program's application_id", func(t *testing.T, path string) {
			exec1(t, path, "PRAGMA application_id = 1234; CREATE TABLE notes (body TEXT)")
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"another program's schema version", func(t *testing.T, path string) {
			exec1(t, path, "PRAGMA user_version = 7; CREATE TABLE notes (body TEXT)")
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes")
			tt.prepare(t, path)
			before := stateOf(t, path)
			s, err := Open(t.Context(), path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), path+" is not a pgbakeoff results store") {
				t.Errorf("error %q, want it to say the file is not a pgbakeoff results store", err)
			}
			if after := stateOf(t, path); !before.same(after) {
				t.Errorf("the file changed: mode %v -> %v, %d -> %d bytes, companions %v -> %v",
					before.mode, after.mode, len(before.data), len(after.data), before.companion, after.companion)
			}
		})
	}
}

// TestReadOnlyReads: a store that cannot be written, by its mode or because its
// file system is read-only, is read; nothing is written to it or next to it,
// and a store of an older schema is read without being migrated.
func TestReadOnlyReads(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{"mode 0400", func(t *testing.T, path string) {
			if err := os.Chmod(path, 0o400); err != nil {
				t.Fatal(err)
			}
		}},
		{"read-only file system", func(t *testing.T, path string) {
			// Permission bits do not stop root; a read-only mount stops everyone.
			dir := filepath.Dir(path)
			if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
				t.Fatalf("remount %s read-only: %v: %s", dir, err, strings.TrimSpace(string(out)))
			}
		}},
		{"older schema", func(t *testing.T, path string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.name == "read-only file system" {
				if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
					t.Skipf("cannot mount a file system here (%v: %s)", err, strings.TrimSpace(string(out)))
				}
				t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
			}
			path := filepath.Join(dir, "results.db")
			all := migrations
			if tt.name == "older schema" {
				migrations = all[:3] // before runs recorded their process
			}
			s, err := Open(t.Context(), path)
			if err == nil {
				for _, w := range []string{"tpcb", "tpcc"} {
					if err = createOldRun(t, s, newRun(w, t0)); err != nil {
						break
					}
				}
				err = errors.Join(err, s.Close())
			}
			migrations = all
			if err != nil {
				t.Fatal(err)
			}
			tt.prepare(t, path)
			before := stateOf(t, path)

			r, err := OpenReadOnly(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := r.Runs(t.Context(), Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 2 {
				t.Errorf("%d runs, want 2", len(runs))
			}
			if _, err := r.Run(t.Context(), runs[0].ID); err != nil {
				t.Error(err)
			}
			if _, err := r.CreateRun(t.Context(), newRun("tpcb", t0)); err == nil {
				t.Error("a store opened read-only took a new run")
			}
			if err := r.Close(); err != nil {
				t.Error(err)
			}
			if after := stateOf(t, path); !before.same(after) {
				t.Errorf("reading changed the store: mode %v -> %v, %d -> %d bytes, companions %v -> %v",
					before.mode, after.mode, len(before.data), len(after.data), before.companion, after.companion)
			}
		})
	}
}

// createOldRun records a run with the columns of the first schema, as older
// versions did.
func createOldRun(t *testing.T, s *Store, r *Run) error {
	t.Helper()
	_, err := s.db.ExecContext(t.Context(), `INSERT INTO runs (target, workload, script, clients, params, server_version,
		settings, labels, started, status, client_cpu_user, client_cpu_sys) VALUES (?, ?, ?, ?, '{}', '', '{}', '{}', ?, ?, 0, 0)`,
		r.Target, r.Workload, r.Script, r.Clients, formatTime(r.Started), StatusRunning)
	return err
}
