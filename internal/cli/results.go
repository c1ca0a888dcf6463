package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/spf13/cobra"
)

// storeHint is what to do about a --results file that is not a store.
const storeHint = "pass --results with the file your runs were written to"

// openExisting opens the results store named by --results for reading: it never
// creates or changes a file, and says so when the file is not a store.
func openExisting(cmd *cobra.Command) (*store.Store, error) {
	path, _ := cmd.Flags().GetString("results")
	return openReading(cmd.Context(), cmd.ErrOrStderr(), path)
}

// openReading opens the results store at path for reading, warning on stderr
// of runs that are shown as interrupted.
func openReading(ctx context.Context, stderr io.Writer, path string) (*store.Store, error) {
	st, err := store.OpenReadOnly(ctx, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("no results store at %s: run a benchmark first, or pass --results FILE", target.Redact(path))
	case errors.Is(err, store.ErrNotStore):
		return nil, fmt.Errorf("%w: %s", err, storeHint)
	case err != nil:
		return nil, err
	}
	if err := st.Damaged(); err != nil {
		fmt.Fprintf(stderr, "warning: %v; what can still be read follows\n", err)
	}
	warnAbandoned(stderr, st, "shown as interrupted")
	return st, nil
}

// openForWriting opens (or creates) the results store at path for a command that
// adds runs to it, and says which runs it found abandoned and marked.
func openForWriting(ctx context.Context, env *Env, path string) (*store.Store, error) {
	st, err := store.Open(ctx, path)
	switch {
	case errors.Is(err, store.ErrNotStore):
		return nil, fmt.Errorf("%w: nothing was changed; %s, or a new file", err, storeHint)
	case errors.Is(err, store.ErrDamaged):
		return nil, fmt.Errorf("%w, or pass --results with another file", err)
	}
	if err != nil {
		return nil, err
	}
	warnAbandoned(env.Stderr, st, "marked interrupted")
	return st, nil
}

// warnAbandoned prints a line for each run whose process was found gone.
func warnAbandoned(w io.Writer, st *store.Store, done string) {
	for _, a := range st.Abandoned() {
		fmt.Fprintf(w, "warning: run %d was left running by a process that is gone (pid %d on host %s): %s\n", a.ID, a.PID, a.Host, done)
	}
}
