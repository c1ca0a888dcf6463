package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StudyLock keeps two `study run`s of one study against one results store from
// running at once: they would load into the same databases and each measure half
// of what the servers do. It is a file beside the store, holding who runs the study;
// one left by a process that is gone is taken over.
type StudyLock struct {
	path string
	pg   *postgresStudyLock // a PostgreSQL store's: an advisory lock
}

type lockOwner struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
}

// LockStudy takes the lock of study name beside the store at results, or says
// who holds it.
func LockStudy(results, name string, now time.Time) (*StudyLock, error) {
	if IsPostgres(results) {
		return lockPostgresStudy(results, name)
	}
	if err := checkFile(results); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(results)
	if err != nil {
		return nil, err
	}
	slug := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, name)
	path := abs + ".study-" + slug + ".lock"
	host, _ := os.Hostname()
	me, _ := json.Marshal(lockOwner{PID: os.Getpid(), Host: host, Started: now})
	// The owner is written whole to a file of its own, then linked to the lock's
	// name, which fails when it exists: no one ever reads a lock half written.
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("lock study %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(me)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("lock study %s: %w", name, err)
	}
	for range 2 {
		err := os.Link(tmp.Name(), path)
		if err == nil {
			return &StudyLock{path: path}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock study %s: %w", name, err)
		}
		b, rerr := os.ReadFile(path)
		var o lockOwner
		if rerr == nil && json.Unmarshal(b, &o) == nil && o.PID > 0 && (o.Host != host || !noProcess(o.PID)) {
			return nil, fmt.Errorf("study %s is already running against %s (pid %d on %s, since %s): wait for it to end, or stop it; if that process is gone for good, remove %s",
				name, results, o.PID, o.Host, o.Started.Local().Format("2006-01-02 15:04:05"), path)
		}
		// Left by a process that is gone: take it over.
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("lock study %s: %w", name, err)
		}
	}
	return nil, fmt.Errorf("lock study %s: %s keeps coming back: another study run is starting", name, path)
}

// Release gives the lock up.
func (l *StudyLock) Release() {
	switch {
	case l == nil:
	case l.pg != nil:
		_ = l.pg.conn.Close(context.Background())
	default:
		_ = os.Remove(l.path)
	}
}
