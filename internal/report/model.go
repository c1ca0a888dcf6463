package report

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
)

// Report is everything a report shows, assembled from the results store by the
// CLI. Renderers only read it: running and reporting share nothing but the stored
// data.
type Report struct {
	// SchemaVersion is the version of the JSON `export --format json` writes
	// (engine.SchemaVersion; `pgbakeoff schema export`); Assemble sets it.
	SchemaVersion int `json:"schema_version"`

	Title     string
	Generated time.Time
	// Source says where the runs come from, beyond the title: "study pg11-vs-pg16
	// (examples/pg11-vs-pg16.yaml, last run ...)", "chosen by --label demo=tuned".
	Source string
	// Baseline is the target the others are compared with (ratios, verdicts).
	Baseline string
	// Noise is the relative difference below which two targets are "within noise"
	// (0.05 = 5%).
	Noise     float64
	Aggregate string // median, mean or best: how repetitions are summarised
	// Objective is the study's latency objective; nil without one. Open-loop
	// runs are judged by it: the highest rate within it is compared.
	Objective *findmax.Objective
	Targets   []Target
	Workloads []Workload
	Env       Environment
}

// Target is one deployment, in the order the study lists them.
type Target struct {
	Name     string
	Version  string            // server_version
	Address  string            // where the runs connected
	Labels   map[string]string // from the study file
	Settings map[string]string // non-default settings as the server reported them
	// Price is nil when the target has none.
	Price *Price
	// PriceNote says why a target whose price is to be looked up has none.
	PriceNote string
}

// Price is a target's cost, already reduced to a month.
type Price struct {
	Monthly  float64 // in Currency per month (730 hours)
	Currency string  // ISO 4217, e.g. "USD"
	Detail   string  // how it was made up, for people: "compute 0.34/h x 730 + storage 512 GB x 0.115"
	Source   string  // where the figures come from and when, e.g. "seed report 000, Jan 2024"
	Date     string  // when the figures were published, or a price list's effective date
	// Fetched is when a price looked up in a cloud's list was read from it;
	// zero for a price given by hand.
	Fetched time.Time
	// Hourly is the price broken down by the hour (HoursPerMonth to a month),
	// in the order of cost.Price.Components.
	Hourly []PriceComponent
}

// PriceComponent is one part of a price: compute, storage, iops, throughput,
// ha, backup, network, fee, or total for a price given as one figure.
type PriceComponent struct {
	Name    string
	PerHour float64
	Detail  string // how it is made up, by the month: "storage 1000 GB x 0.115 = 115.00"
}

// Workload is one workload of the study with all its runs.
type Workload struct {
	Name    string // as the study names it
	Kind    string // the workload's kind (workload.Names)
	Metric  string // the headline measure (workload.MeasuresOf): "tps" unless the kind has its own
	Clients []int  // ascending
	Rates   []int  // the open-loop rates of its runs, ascending; none for closed-loop runs and searches
	// Search: its open-loop runs are find-max searches' (Run.Search), each at rates
	// of its own, so they are shown as the searches' results and curves, not by rate.
	Search bool
	Runs   []Run
}

// Run is one stored run, reduced to what reports show.
type Run struct {
	ID       int64
	Target   string // Target.Name
	Clients  int
	Rate     int    // the open-loop rate asked for, in transactions a second; 0: closed loop
	Repeat   int    // 1-based repetition within its cell; 0 when not from a study
	Search   string // the find-max search it was a run of (its find_max label); "" for none
	Started  time.Time
	Status   string // completed, interrupted, failed
	Machine  string // the client machine that ran it, "" when not recorded
	Invalid  bool   // any flag with Invalid set
	Flags    []Flag
	Warnings []string

	Metric float64 // the headline figure (Workload.Metric)
	TPS    float64
	// Transactions committed and failed in the window.
	Committed, Failed int64
	TPM               float64 // PostgreSQL transactions per minute (whole cluster, as HammerDB), where the workload counts them
	QPS               float64 // statements per second, where the workload counts them
	// Statements are each statement's average latency, where the run timed them
	// (pgbench -r).
	Statements []Statement
	// Latency of all transactions in the window, milliseconds.
	Latency Latency
	// Percentiles is the latency distribution from the stored HDR histograms:
	// quantile (0-100) to milliseconds, from p50 to the max, for a log-scale plot.
	Percentiles []Percentile
	// latency is the window's distribution, for an objective's percentile.
	latency *hdrhistogram.Histogram

	// Server-side means over the measured window; NaN-free: 0 when not sampled,
	// with Sampled telling which were.
	ServerCPU float64 // cores busy by the server's processes (local servers) or node_exporter
	IOPS      float64 // read_iops + write_iops as PostgreSQL sees them
	WALMBps   float64
	Sampled   Sampled
	// Waits are the shares of active sessions per wait class over the window,
	// largest first.
	Waits []Wait

	// Series is per second, measured window and warm-up; T is seconds from the
	// window's start (negative in warm-up).
	Series      []Point
	Checkpoints []float64 // T of each checkpoint
	Outages     []Span    // client connection outages
	// Faults are those done on purpose during the run (run --fault).
	Faults []Fault
}

// Fault is a fault done during a run and what it cost (engine.FaultSummary).
// Times are in milliseconds from the fault, -1 for "never".
type Fault struct {
	Kind        string
	AtS         float64 // seconds from the run's start, as --fault gives it
	T           float64 // seconds from the window's start, for the charts
	Done        bool
	Error       string
	NoCommitsMs float64 // the longest time without any commit
	ResumedMs   float64 // when commits resumed, from the fault
	ClientMaxMs float64 // the longest a client went without one
	RecoveredMs float64 // back to 90% of the throughput before
	BeforeTPS   float64
	InDoubt     int64 // transactions lost with their connection
	// From the ledger: acknowledged commits missing afterwards, and the
	// recovery point (engine.LedgerSummary's RPOMs); Lost is -1 when the
	// ledger was not read.
	Lost  int64
	RPOMs float64
	// A command fault's command and the end of what it printed, passwords
	// replaced, and its exit code.
	Command, Output string
	ExitCode        int
}

// Sampled says which server figures a run has.
type Sampled struct{ CPU, IOPS, WAL bool }

type Statement struct {
	Script, Text string
	AvgMs        float64
	Failures     int64
}

type Latency struct{ Avg, P50, P90, P95, P99, P999, Max float64 }

type Percentile struct{ Quantile, Ms float64 }

type Wait struct {
	Class string // "CPU", "LWLock:WALWrite", "IO:DataFileRead", ...
	Share float64
}

type Point struct {
	T    float64 // seconds from the window's start, at the interval's end
	Secs float64 // the interval's length; 0 when not known
	TPS  float64
	P99  float64 // ms
	// Server figures of the sample covering T, when sampled.
	ServerCPU, IOPS, WALMBps float64
}

type Span struct {
	Start, End float64 // seconds from the window's start
	Cause      string
}

type Flag struct {
	Name    string
	Invalid bool
	Reason  string
}

// Environment is what the reader needs to judge the comparison's fairness.
type Environment struct {
	Client      string   // the client machines that ran the runs, with their runs when more than one
	Differences []string // settings that differ between targets: "shared_buffers: pg11 128MB, pg16 1GB"
	Warnings    []string // preflight and study-level warnings
}
