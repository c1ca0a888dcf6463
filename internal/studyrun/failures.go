package studyrun

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
)

// sameFailures notices a workload whose runs all fail the same way: a missing
// table or a script that cannot work fails on every target and repetition, and
// hours of a study should not pass making the same failure again.
type sameFailures struct {
	targets int // the study's targets
	byWork  map[*study.Workload]*failStreak
}

// failStreak is a workload's runs that failed one way, none having succeeded.
type failStreak struct {
	cause   string
	runs    int
	targets map[*study.Target]bool
	ok      bool // a run of the workload succeeded: it is not broken everywhere
}

func newSameFailures(targets int) *sameFailures {
	return &sameFailures{targets: targets, byWork: map[*study.Workload]*failStreak{}}
}

// cause is what tells one failure from another: the SQLSTATE and message of a
// server's error, else the error's text.
func cause(err error) string {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pe.Code + " " + pe.Message
	}
	return err.Error()
}

func (f *sameFailures) streak(w *study.Workload) *failStreak {
	fs := f.byWork[w]
	if fs == nil {
		fs = &failStreak{targets: map[*study.Target]bool{}}
		f.byWork[w] = fs
	}
	return fs
}

// succeeded records a run of c that did not fail.
func (f *sameFailures) succeeded(c study.Cell) { f.streak(c.Workload).ok = true }

// failed records a run of c that failed with err and returns an error that
// stops the study once the workload failed the same way on every target, and
// more than once where the study has one target.
func (f *sameFailures) failed(c study.Cell, err error) error {
	fs := f.streak(c.Workload)
	if fs.ok {
		return nil
	}
	if why := cause(err); why != fs.cause {
		fs.cause, fs.runs, fs.targets = why, 0, map[*study.Target]bool{}
	}
	fs.runs++
	fs.targets[c.Target] = true
	if len(fs.targets) < f.targets || fs.runs < 2 {
		return nil
	}
	return fmt.Errorf("workload %s failed the same way in all %d of its runs, on every target: %w; the study stops here, fix this and `study run` again",
		c.Workload.Name, fs.runs, err)
}
