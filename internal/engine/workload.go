package engine

import (
	"context"
	"io"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
)

// Workload is what a workload adds to the common run: its options, checked before
// anything connects, and its scripts, built once the data was inspected. The
// workloads implement it in their own packages (internal/workload/...).
type Workload interface {
	// Name is the workload's kind as commands and the store name it: "tpcb".
	Name() string
	// Check validates every option that can be judged without the data, so that a
	// mistake is found before anything connects, loads or runs.
	Check(spec *Spec) error
	// Setup inspects the data on the control session and builds the scripts.
	// spec.Target names the target in errors; env.Log takes warnings.
	Setup(ctx context.Context, spec *Spec, env *Env, ctl *pgconn.PgConn) (*Setup, error)
}

// Setup is a workload ready to run on the data it found.
type Setup struct {
	Scripts []*driver.Script
	// Protocol is how the scripts' statements are sent; TPC-B's and script files'
	// runs choose it (their --protocol), the others prepare theirs.
	Protocol driver.Protocol
	Scale    int            // TPC-B scale or TPC-C warehouses
	Size     string         // the scale for people: "scale 100", "10 warehouses"
	Params   map[string]any // stored with the run
	Deck     bool           // deal scripts from a deck (driver.Config.Deck)
	// Window, when set, samples workload figures at the window's edges on the control
	// connection; Finish then adds them to the summary.
	// own is how many transactions pgbakeoff's sampler has committed so far, so the
	// workload's counts can leave them out.
	Window func(ctx context.Context, ctl *pgconn.PgConn, open bool, own int64) error
	Finish func(sum *Summary, res *driver.Result)
	// OnTransaction sees each transaction end (driver.Config.OnTransaction).
	OnTransaction func(driver.TxEvent)
}

// Figures are a workload's own results beside the common ones (TPC-C's NOPM,
// sysbench's query counts). Their JSON fields sit at the top level of the
// summary's.
type Figures interface {
	// Scope is the summary's line saying what ran on which data.
	Scope(s *Summary) string
	// WriteText writes the figures' own lines of the text summary.
	WriteText(w io.Writer, s *Summary)
	// Headline is the run's main figures in a few words, for a study's progress.
	Headline(s *Summary) string
	// Measure is one of the figures by the name Measures gives it ("NOPM", "TPM",
	// "QPS"); false when the workload has no such figure.
	Measure(name string) (float64, bool)
}

// StatementLatency is one statement's average latency over a run's window, for
// workloads that time each statement (pgbench -r).
type StatementLatency struct {
	Script   string  // the script's name
	Text     string  // the statement's first line
	Count    int64   // executions
	AvgMs    float64 // over the executions that succeeded
	Failures int64
}

// PerStatement is Figures that time each statement, for the reports' tables.
type PerStatement interface {
	StatementLatencies() []StatementLatency
}

// Measures name what runs of a workload are compared by: the headline ("tps"
// unless the workload has its own, as TPC-C's NOPM) and the other rates its
// runs have ("TPM", "QPS").
type Measures struct {
	Headline string
	Rates    []string
}
