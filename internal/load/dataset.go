package load

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"
)

// Dataset is a workload's data as its load options describe it: `init <kind>`
// binds the options to flags, a study to its load: keys.
type Dataset interface {
	// Flags binds the load options to fs, at their defaults.
	Flags(fs *pflag.FlagSet)
	// Validate checks the options once they are set.
	Validate() error
	// Describe names the data for people: "TPC-B scale 100".
	Describe() string
	// Bytes is the estimated size on disk, tables and indexes.
	Bytes() int64
	// Params are the options as the load journal keeps them, to tell whether an
	// unfinished load can be resumed; "" when the options load no data.
	Params() string
	// Marked is the table a load marks while it runs (MarkLoading).
	Marked() string
	// Load loads the data through connect, counting rows on p; with resume it goes
	// on with an unfinished load of the same options. It returns what it did for
	// people: the phases of the load, or another line when it loaded no data.
	Load(ctx context.Context, connect Connector, resume bool, p *Progress) (string, error)
}

// Sharded is a Dataset that may load one share of a load spread over several
// machines, or finish one, rather than a whole load.
type Sharded interface {
	Sharded() bool
}

// Resumable tells whether a load of ds into the database conn is connected to
// can go on with an unfinished one, and why or why not, for a line after "the
// previous load into <target> ..."; note is "" when nothing was left unfinished.
// workload names the load's journal.
func Resumable(ctx context.Context, conn *pgconn.PgConn, workload string, ds Dataset, reload bool) (resume bool, note string, err error) {
	if sh, ok := ds.(Sharded); ok && sh.Sharded() {
		return false, "", nil // a share of a load goes on with the shared journal itself
	}
	unfinished, err := Unfinished(ctx, conn, ds.Marked())
	if err != nil || !unfinished {
		return false, "", err
	}
	prior, err := ReadJournal(ctx, conn, workload)
	if err != nil {
		return false, "", err
	}
	params := ds.Params()
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

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
