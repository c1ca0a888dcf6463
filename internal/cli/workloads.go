package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// kind is one workload as the commands know it: the options of its init and run
// commands. `init`, `run` and study files share this one definition, so a study's
// load: and run: keys are exactly the commands' options.
type kind struct {
	name                   string
	initShort, initExample string
	runShort, runExample   string
	// marked is the table a load marks while it runs (load.MarkLoading).
	marked string
	// loadFlags adds init's options to fl; the dataset reads them when used.
	loadFlags func(fl *pflag.FlagSet) *dataset
	// runFlags adds run's options to fl, the common ones into f, and returns what
	// builds the workload from them once they are parsed.
	runFlags func(env *Env, fl *pflag.FlagSet, f *runFlags) func() engine.Workload
}

// dataset is a workload's data as init's options describe it.
type dataset struct {
	validate func() error
	describe func() string // for people: "TPC-B scale 100"
	bytes    func() int64  // estimated size on disk, tables and indexes
	// params are the load options as the load journal keeps them ("" when the
	// command loads nothing), to tell whether an unfinished load can be resumed.
	params func() string
	// load loads the data; with resume it goes on with an unfinished load of the
	// same options, where there is one.
	load func(ctx context.Context, env *Env, t *target.Target, resume bool) error
}

// kinds are the workloads, in the order help lists them.
var kinds = []kind{tpcbKind, tpccKind, sysbenchKind}

func findKind(name string) (kind, bool) {
	for _, k := range kinds {
		if k.name == name {
			return k, true
		}
	}
	return kind{}, false
}

func kindNames() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// newInitKindCmd is `init <kind>`.
func newInitKindCmd(env *Env, k kind) *cobra.Command {
	var dsn string
	var reload bool
	cmd := &cobra.Command{Use: k.name, Short: k.initShort, Example: k.initExample, Args: cobra.NoArgs}
	fl := cmd.Flags()
	fl.StringVar(&dsn, "dsn", "", "target: libpq URI or key=value DSN (default: PG* environment variables)")
	fl.BoolVar(&reload, "reload", false, "load from the start even where an unfinished load could be resumed")
	ds := k.loadFlags(fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := ds.validate(); err != nil {
			return usageError{err}
		}
		// Connect once first so a bad target fails before anything is dropped.
		ctx, stop, t, conn, err := openTarget(cmd, env, dsn)
		if err != nil {
			return err
		}
		defer stop()
		resume, note, err := resumable(ctx, conn, k, ds, reload)
		conn.Close(context.Background())
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("%w: before the load began", ErrInterrupted)
		}
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintf(env.Stderr, "the previous load into %s %s\n", t, note)
		}
		return ds.load(ctx, env, t, resume)
	}
	return cmd
}

// resumable tells whether a load into the database conn is connected to can resume
// an unfinished one, and why or why not, for a line after "the previous load into
// <target> ..."; the note is empty when there is nothing unfinished.
func resumable(ctx context.Context, conn *pgconn.PgConn, k kind, ds *dataset, reload bool) (resume bool, note string, err error) {
	unfinished, err := load.Unfinished(ctx, conn, k.marked)
	if err != nil || !unfinished {
		return false, "", err
	}
	prior, err := load.ReadJournal(ctx, conn, k.name)
	if err != nil {
		return false, "", err
	}
	params := ds.params()
	switch {
	case reload:
		return false, "did not finish; loading it again from the start, as --reload asks", nil
	case params == "":
		return false, "did not finish", nil
	case prior == nil:
		return false, "did not finish and left no journal to resume from; loading it again from the start", nil
	case prior.Params != params:
		return false, fmt.Sprintf("did not finish and had other options (%s); loading it again from the start with yours", prior.Params), nil
	}
	return true, fmt.Sprintf("did not finish (done: %s of %d rows, %s); resuming it (--reload starts over)",
		plural(prior.Copied, "copy task"), prior.Rows, plural(prior.Steps, "other step")), nil
}

// newRunKindCmd is `run <kind>`.
func newRunKindCmd(env *Env, k kind) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{Use: k.name, Short: k.runShort, Example: k.runExample, Args: cobra.NoArgs}
	wl := k.runFlags(env, cmd.Flags(), &f)
	cmd.RunE = runCommand(env, &f, wl)
	return cmd
}

// checkJobs checks init's --jobs: the loaders take 0 for their default, a user
// who types it means a mistake.
func checkJobs(n int) error {
	if n < 1 {
		return fmt.Errorf("--jobs must be at least 1, got %d", n)
	}
	return nil
}

// plural is "1 step" or "2 steps".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
