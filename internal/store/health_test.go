package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDamagedStore: a store with a page of garbage in the middle is refused by
// a writer, which names the file and says what to do, and is left as it was.
func TestDamagedStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	// Enough runs, with long labels, for the runs table to span many pages.
	for i := range 400 {
		r := newRun("tpcb", t0.Add(time.Duration(i)*time.Second))
		r.Labels = map[string]string{"note": strings.Repeat("x", 200)}
		if _, err := s.CreateRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(data) / page
	if pages < 20 {
		t.Fatalf("the store has %d pages, want a page in the middle of many", pages)
	}
	mid := pages / 2 * page
	for i := range page {
		data[mid+i] = byte(i*7 + 13)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, path)

	s, err = Open(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a damaged store succeeded")
	}
	msg := err.Error()
	for _, want := range []string{path, "is damaged", "nothing was written", ".recover | sqlite3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is more than one line", msg)
	}
	if after := stateOf(t, path); !before.same(after) {
		t.Error("the damaged store was changed")
	}

	// A reader opens it to read what can be read, and says it is damaged.
	r, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Damaged(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path+" is damaged") {
		t.Errorf("Damaged() = %v, want the file named as damaged", err)
	}
	if after := stateOf(t, path); !before.same(after) {
		t.Error("the reader changed the damaged store")
	}
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestAbandonedRuns: a run whose process is gone is shown as interrupted by a
// reader and marked so by a writer; runs of live processes, of other hosts and
// of stores that did not record a process stay running.
func TestAbandonedRuns(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dead := deadPID(t)
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	add := func(name string, pid int, host, start string) int64 {
		r := newRun("tpcb", t0)
		r.Labels = map[string]string{"case": name}
		r.Process = Process{PID: pid, Host: host, Start: start}
		id, err := s.CreateRun(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	gone := add("gone", dead, host, "")
	reused := add("pid reused", os.Getpid(), host, "1") // this process did not start at tick 1
	live := add("live", 0, "", "")                      // filled in: this process
	other := add("other host", dead, host+"-elsewhere", "")
	unknown := add("not recorded", 0, "", "")
	if _, err := s.db.ExecContext(t.Context(), "UPDATE runs SET pid = 0, host = '', pid_start = '' WHERE id = ?", unknown); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{gone: StatusInterrupted, reused: StatusInterrupted, live: StatusRunning, other: StatusRunning, unknown: StatusRunning}

	check := func(t *testing.T, s *Store) {
		t.Helper()
		var found []int64
		for _, a := range s.Abandoned() {
			found = append(found, a.ID)
			if a.ID == gone && (a.PID != dead || a.Host != host) {
				t.Errorf("abandoned run %d: pid %d on %q, want %d on %q", a.ID, a.PID, a.Host, dead, host)
			}
		}
		if len(found) != 2 || found[0] != gone || found[1] != reused {
			t.Errorf("abandoned runs %v, want [%d %d]", found, gone, reused)
		}
		runs, err := s.Runs(t.Context(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Status != want[r.ID] {
				t.Errorf("run %d (%s) is %s, want %s", r.ID, r.Labels["case"], r.Status, want[r.ID])
			}
		}
		d, err := s.Run(t.Context(), gone)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != StatusInterrupted {
			t.Errorf("Run(%d).Status = %s, want %s", gone, d.Status, StatusInterrupted)
		}
	}

	t.Run("reader", func(t *testing.T) {
		before := stateOf(t, path)
		r, err := OpenReadOnly(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		check(t, r)
		r.Close()
		if !before.same(stateOf(t, path)) {
			t.Error("the reader changed the store")
		}
	})
	t.Run("writer", func(t *testing.T) {
		w, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		check(t, w)
		w.Close()
		// Marked in the file: the next opener finds nothing left to mark.
		w, err = Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if a := w.Abandoned(); len(a) != 0 {
			t.Errorf("abandoned again on the next open: %+v", a)
		}
		d, err := w.Run(t.Context(), gone)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != StatusInterrupted || d.Ended.IsZero() {
			t.Errorf("run %d after a writer opened: status %s, ended %v; want interrupted with an end time", gone, d.Status, d.Ended)
		}
	})
}
