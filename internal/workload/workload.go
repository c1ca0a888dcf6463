// Package workload is pgbakeoff's one list of workloads and the interface they
// share. A workload lives in its own package (tpcb, tpcc, sysbench) and gives:
//
//   - its name and the help of its run command;
//   - NewRun: its own run options, typed and at their defaults, which bind to
//     flags (the command line's and a study's run: keys) and build the run
//     (engine.Workload);
//
// and, through small optional interfaces, what only some workloads have: a
// dataset to load (Loader), a consistency check (Verifier), figures of their own
// in the summary (FiguresReader), measures other than tps to compare runs by
// (Measured), and defaults of its own for common settings (Defaulter). The command line, the study parser and runner, reports and the
// demo take workloads from All; nothing else lists or names them.
package workload

import (
	"context"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/pgbench"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sbtpcc"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sysbench"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
	"github.com/spf13/pflag"
)

// Workload is one kind of benchmark.
type Workload interface {
	// Name is the kind, as commands, study files and the store name it.
	Name() string
	// RunHelp is the run command's one-line description and examples.
	RunHelp() (short, example string)
	// NewRun is a run's own options at their defaults; it implements Options.
	NewRun() engine.Workload
}

// Options bind a workload's own run options to flags: the command line's, and
// those of a study's run: keys that are not common settings
// (engine.Settings.Field). The command line binds the common settings apart.
type Options interface {
	Flags(fs *pflag.FlagSet)
}

// Defaulter is a run that changes the defaults of common settings (sysbench's
// retries and loops).
type Defaulter interface {
	Defaults(s *engine.Settings)
}

// Settings are the common settings at run's defaults: engine.DefaultSettings,
// as run changes them when it is a Defaulter.
func Settings(run engine.Workload) engine.Settings {
	s := engine.DefaultSettings()
	if d, ok := run.(Defaulter); ok {
		d.Defaults(&s)
	}
	return s
}

// PathResolver is a run whose options name files: a study file gives them as paths
// from its own directory, which ResolvePaths turns into paths from the working one.
type PathResolver interface {
	ResolvePaths(dir string)
}

// StdinReader is a run that may read from standard input (pgbench's -f -).
type StdinReader interface {
	SetStdin(in io.Reader)
}

// Loader is a workload with data to load (`init <kind>`).
type Loader interface {
	LoadHelp() (short, example string)
	// NewLoad is the load's options at their defaults.
	NewLoad() load.Dataset
}

// Verifier is a workload whose data can be checked for consistency
// (`check <kind>`). Verify writes its findings to w and fails when the data is
// not consistent.
type Verifier interface {
	VerifyHelp() (short, example string)
	Verify(ctx context.Context, t *target.Target, conn *pgconn.PgConn, w io.Writer) error
}

// FiguresReader is a workload with figures of its own in the summary: NewFigures
// is an empty one to read a stored summary's into.
type FiguresReader interface {
	NewFigures() engine.Figures
}

// Measured is a workload compared by more than tps.
type Measured interface {
	Measures() engine.Measures
}

// all are the workloads in the order help lists them.
var all = []Workload{tpcb.Workload{}, tpcc.Workload{}, sysbench.Workload{}, sbtpcc.Workload{}, pgbench.Workload{}}

// All lists the workloads.
func All() []Workload { return all }

// Find is the workload of the given name.
func Find(name string) (Workload, bool) {
	for _, w := range all {
		if w.Name() == name {
			return w, true
		}
	}
	return nil, false
}

// Names are the workloads' names, in All's order.
func Names() []string {
	names := make([]string, len(all))
	for i, w := range all {
		names[i] = w.Name()
	}
	return names
}

// NameList is Names for a message: "tpcb, tpcc, sysbench".
func NameList() string { return strings.Join(Names(), ", ") }

// MeasuresOf is what runs of the named workload are compared by: tps alone
// unless it is Measured.
func MeasuresOf(name string) engine.Measures {
	if w, ok := Find(name); ok {
		if m, ok := w.(Measured); ok {
			return m.Measures()
		}
	}
	return engine.Measures{Headline: "tps"}
}
