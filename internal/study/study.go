package study

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
	"go.yaml.in/yaml/v3"
)

// Study is a parsed and validated study file, with its defaults filled in.
type Study struct {
	File        string // the path as given to Load or Parse
	Pos         Pos    // the top-level mapping
	Name        string
	Description string
	Targets     []*Target
	Workloads   []*Workload
	Matrix      Matrix
	// Prices is the prices file the study names, as a path from the working
	// directory (the file's prices: from the study file's directory), or "".
	Prices string
	// Objective is what runs are judged by in reports (the highest rate within
	// it); nil when the study has none.
	Objective *Objective
}

// Objective is a latency objective as find-max takes it: "p99<10ms" and "<0.1%"
// (findmax.ParseObjective).
type Objective struct {
	Pos         Pos
	SLO, Errors string
}

// Target is one deployment under test: an existing server reached by DSN, or
// a local server pgbakeoff starts itself. Exactly one of DSN and Local is set.
type Target struct {
	Name         string
	Pos          Pos
	DSN          string    // never holds a password
	Password     *Password // only with DSN; nil when not given
	Local        *Local
	NodeExporter string            // a node_exporter metrics URL, or ""
	Labels       map[string]string // free-form, for grouping in reports
	Price        *cost.Price       // nil when not given; valid, with its Currency filled in
	PriceRef     string            // the prices file's entry Price is, or "" when given inline
	// PriceLookup is a price to look up in the target's cloud's price list
	// (pricelist), given instead of Price.
	PriceLookup *pricelist.Query
}

// Local describes a server pgbakeoff runs itself.
type Local struct {
	Pos      Pos
	Version  string    // a major version ("16") or an exact one ("16.10")
	Settings []Setting // postgresql.conf, in file order: a later one wins
	Initdb   []string  // extra initdb arguments
	// Standbys are streaming replicas of the server, each cloned from it;
	// Synchronous is how commits wait for them (localpg.SyncOn, ...), "" as off.
	Standbys    int
	Synchronous string
}

// Setting is one postgresql.conf parameter.
type Setting struct {
	Name, Value string
	Pos         Pos
}

// Workload is a benchmark and the options it is loaded and run with.
type Workload struct {
	Name    string // the kind when not given
	Pos     Pos
	Kind    string   // the workload's kind, one of workload.Names
	Load    []Option // options of `pgbakeoff init <kind>`, in file order
	Run     []Option // options of `pgbakeoff run <kind>`, in file order
	Dataset Dataset
	// DataOf is the workload whose data this one runs on, named by its dataset:
	// (a script workload on the tables a TPC-B workload loads); it then has its
	// dataset policy and loads nothing itself. nil: its own data.
	DataOf     *Workload
	dataOf     pair // the dataset: that names it, until resolved
	Vacuum     Vacuum
	Checkpoint bool   // CHECKPOINT before each run
	Database   string // an existing database to run in; only with DatasetKeep
	Clients    []int  // overrides Matrix.Clients when not empty
	ClientsPos Pos    // where Clients was given; zero when it was not
	// Rates or FindMax, when either is given, override the matrix's rates and
	// find_max; a workload has at most one of them.
	Rates   []int
	FindMax *FindMax
	// Faults, when given (FaultsPos not zero), replace the matrix's; an empty
	// list runs the workload without any.
	Faults    []Fault
	FaultsPos Pos
}

// FindMax is a search per target for the highest rate within the study's
// objective, as `pgbakeoff find-max` makes it, in place of fixed rates: each of
// its runs is a run of the study, and the rate it finds is the cell's result.
type FindMax struct {
	Pos Pos
	// Off is a workload's find_max: false: it runs closed-loop though the
	// matrix searches.
	Off        bool
	Confirm    int           // runs at the rate found that must meet the objective again
	Resolution float64       // stop when the bracket is this share of its upper side
	Budget     time.Duration // stop each search after this long; 0: no limit
	Ceiling    int           // a rate known to be too high; 0: a closed-loop run measures it
}

// The defaults of find_max, as find-max's flags have them.
const (
	DefaultFindMaxConfirm    = 2
	DefaultFindMaxResolution = 0.05
	DefaultFindMaxBudget     = 15 * time.Minute
)

// Option is one command-line option of a workload, given in the study file as
// a key and a value or a list of values.
type Option struct {
	Name   string   // the flag's spelling: table_size in the file is table-size here
	Key    string   // the key as written in the file
	Values []string // one per scalar; a list gives a repeatable flag several values
	Pos    Pos      // the key
	value  *yaml.Node
}

// unmarshalError is the YAML library's message for a value of the wrong type.
var unmarshalError = regexp.MustCompile("^cannot unmarshal !!\\w+ `(.*)` into (\\w+)$")

// Decode reads the option's value into v, a pointer to a typed value (as
// engine.Settings.Field gives): a number into a number, text into a type that
// reads text. Its error says what the value should have been.
func (o Option) Decode(v any) error {
	if o.value == nil {
		return fmt.Errorf("has no value")
	}
	err := o.value.Decode(v)
	if te, ok := errors.AsType[*yaml.TypeError](err); ok && len(te.Errors) > 0 {
		// "line 3: cannot unmarshal !!str `x` into int": the place is the key's.
		msg := te.Errors[0]
		if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
			msg = after
		}
		// "cannot unmarshal !!str `many` into int", in the file's words.
		if m := unmarshalError.FindStringSubmatch(msg); m != nil {
			want := map[string]string{"int": "a whole number", "int64": "a whole number", "float64": "a number", "bool": "true or false"}[m[2]]
			if want != "" {
				msg = fmt.Sprintf("%q is not %s", m[1], want)
			}
		}
		return errors.New(msg)
	}
	return err
}

// Dataset says what happens to the loaded data between runs.
type Dataset string

// The datasets.
const (
	DatasetKeep   Dataset = "keep"   // run on the data as the previous run left it
	DatasetClone  Dataset = "clone"  // run on a fresh copy of the loaded data
	DatasetReload Dataset = "reload" // load the data again before each run
)

// Vacuum is the maintenance done before each run.
type Vacuum string

// The vacuum choices.
const (
	VacuumNone    Vacuum = "none"
	VacuumAnalyze Vacuum = "analyze" // ANALYZE
	VacuumPlain   Vacuum = "vacuum"  // VACUUM ANALYZE
	VacuumFreeze  Vacuum = "freeze"  // VACUUM FREEZE ANALYZE
)

// Aggregate is how the repetitions of a cell are summarised.
type Aggregate string

// The aggregates.
const (
	AggregateMedian Aggregate = "median"
	AggregateMean   Aggregate = "mean"
	AggregateBest   Aggregate = "best"
)

// Order is the order of the runs in a plan.
type Order string

// The orders.
const (
	// OrderInterleaved runs every target for one repetition before the next
	// repetition, reversing the targets' order every other time, so that drift
	// over time and position in the sequence affect all targets alike.
	OrderInterleaved Order = "interleaved"
	// OrderSequential runs everything for one target before the next.
	OrderSequential Order = "sequential"
)

// Matrix is how many times each target runs each workload, and how.
type Matrix struct {
	Pos        Pos   // zero when the file has no matrix
	Clients    []int // client counts; [1] when not given
	ClientsPos Pos   // where Clients was given; zero when it was not
	// Rates are open-loop rates in transactions a second, each a run of its own
	// (pgbakeoff run --rate); none: closed-loop runs.
	Rates []int
	// FindMax, when not nil, searches for each target's highest rate within the
	// objective instead.
	FindMax   *FindMax
	Warmup    time.Duration
	Duration  time.Duration
	Repeat    int // runs per cell
	Aggregate Aggregate
	Order     Order
	Pause     time.Duration // between runs
	// Faults are done in every run (run --fault), unless a workload has its own.
	Faults []Fault
}

// Fault is a fault done during a run, At from its start (run --fault).
type Fault struct {
	Pos     Pos
	At      time.Duration
	Kind    string
	Command string
}

// Faults are the faults of w's runs: its own, or the matrix's.
func (s *Study) Faults(w *Workload) []Fault {
	if w.FaultsPos != (Pos{}) {
		return w.Faults
	}
	return s.Matrix.Faults
}

// The defaults for what a study file leaves out.
const (
	DefaultDuration = 60 * time.Second
	DefaultRepeat   = 3
)

// Load reads and parses the study file at path.
func Load(path string) (*Study, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read study: %w", err)
	}
	return Parse(path, data)
}

// Clients is the client counts w runs with, ascending: its own, or else the
// matrix's.
func (s *Study) Clients(w *Workload) []int {
	c := w.Clients
	if len(c) == 0 {
		c = s.Matrix.Clients
	}
	c = slices.Clone(c)
	slices.Sort(c)
	return c
}

// Rates is the open-loop rates w runs at, ascending: its own, or else the
// matrix's; [0] (closed loop) when neither has any, or w searches (FindMax).
func (s *Study) Rates(w *Workload) []int {
	r := w.Rates
	if len(r) == 0 && w.FindMax == nil {
		r = s.Matrix.Rates
	}
	if len(r) == 0 || s.FindMax(w) != nil {
		return []int{0}
	}
	r = slices.Clone(r)
	slices.Sort(r)
	return r
}

// FindMax is the search w makes in place of fixed rates: its own, or else the
// matrix's when w has no rates of its own; nil when it makes none.
func (s *Study) FindMax(w *Workload) *FindMax {
	switch {
	case w.FindMax != nil && w.FindMax.Off:
		return nil
	case w.FindMax != nil || len(w.Rates) > 0:
		return w.FindMax
	}
	return s.Matrix.FindMax
}

// Cell is one run in a plan, or one search of several runs.
type Cell struct {
	Seq      int // 1-based position in the plan
	Target   *Target
	Workload *Workload
	Clients  int
	Rate     int      // open-loop transactions a second; 0: closed loop
	Search   *FindMax // not nil: the cell is a search for the highest rate within the objective
	Repeat   int      // 1-based repetition of this target, workload, client count and rate
	// Key identifies the run within the study: "<target>/<workload>/c<clients>/r<repeat>",
	// with "/rate<rate>" before the repetition for an open-loop run and
	// "/find-max" for a search, whose runs are StepKey(Key, n).
	Key string
	// Fingerprint is 16 hex digits that change when anything changes what the
	// run measures, and only then: the target's DSN or local version, settings
	// and initdb arguments; the workload's kind, options, dataset, vacuum,
	// checkpoint and database; the client count, rate, warm-up and duration; a
	// search's options and the objective. All
	// repetitions of a cell share it. A stored run whose fingerprint differs
	// from its key's in the plan was made with a different study.
	Fingerprint string
}

// Plan lists every run of the study in the order they should be made. Client
// counts go in ascending order.
func (s *Study) Plan() []Cell {
	var cells []Cell
	add := func(t *Target, w *Workload, c, rate, r int) {
		key := fmt.Sprintf("%s/%s/c%d/r%d", t.Name, w.Name, c, r)
		search := s.FindMax(w)
		switch {
		case search != nil:
			key = fmt.Sprintf("%s/%s/c%d/find-max/r%d", t.Name, w.Name, c, r)
		case rate > 0:
			key = fmt.Sprintf("%s/%s/c%d/rate%d/r%d", t.Name, w.Name, c, rate, r)
		}
		cells = append(cells, Cell{
			Seq:         len(cells) + 1,
			Target:      t,
			Workload:    w,
			Clients:     c,
			Rate:        rate,
			Search:      search,
			Repeat:      r,
			Key:         key,
			Fingerprint: s.fingerprint(t, w, c, rate, search),
		})
	}
	switch s.Matrix.Order {
	case OrderSequential:
		for _, t := range s.Targets {
			for _, w := range s.Workloads {
				for _, c := range s.Clients(w) {
					for _, rate := range s.Rates(w) {
						for r := 1; r <= s.Matrix.Repeat; r++ {
							add(t, w, c, rate, r)
						}
					}
				}
			}
		}
	default:
		reversed := slices.Clone(s.Targets)
		slices.Reverse(reversed)
		for _, w := range s.Workloads {
			for _, c := range s.Clients(w) {
				for _, rate := range s.Rates(w) {
					for r := 1; r <= s.Matrix.Repeat; r++ {
						targets := s.Targets
						if r%2 == 0 {
							targets = reversed
						}
						for _, t := range targets {
							add(t, w, c, rate, r)
						}
					}
				}
			}
		}
	}
	return cells
}

// Estimate is how long the plan takes to run: warm-up and measurement of every
// run and the pauses between them, without loading data. A search counts the
// runs a bisection to its resolution and its confirmations take, or its budget
// when that is shorter.
func (s *Study) Estimate() time.Duration {
	var total time.Duration
	runs := 0
	one := s.Matrix.Warmup + s.Matrix.Duration
	for _, w := range s.Workloads {
		cells := len(s.Targets) * len(s.Clients(w)) * len(s.Rates(w)) * s.Matrix.Repeat
		n := 1
		if f := s.FindMax(w); f != nil {
			n = s.SearchRuns(f)
		}
		runs += cells * n
		total += time.Duration(cells*n) * one
	}
	if runs == 0 {
		return 0
	}
	return total + time.Duration(runs-1)*s.Matrix.Pause
}

// SearchRuns is about how many runs a search makes: Runs, or fewer when its
// budget ends it first. The budget is checked before each run (and its pause),
// so the runs begun before it ends are made whole.
func (s *Study) SearchRuns(f *FindMax) int {
	n := f.Runs()
	if f.Budget <= 0 {
		return n
	}
	one, p := s.Matrix.Warmup+s.Matrix.Duration, s.Matrix.Pause
	return min(n, int((f.Budget+p+one+p-1)/(one+p)))
}

// Runs is about how many runs the search makes: the closed-loop run for its
// ceiling, the bisection's from two thirds of it down to the resolution, and the
// confirmations.
func (f *FindMax) Runs() int {
	n := f.Confirm + 1
	if f.Ceiling == 0 {
		n++
	}
	for w := 1.0; w > f.Resolution; w /= 2 {
		n++
	}
	return n
}

// StepKey is the key of the nth run (from 1) of the search whose cell key is key.
func StepKey(key string, n int) string {
	return fmt.Sprintf("%s/step%d", key, n)
}

// SearchKey is the cell key of a search's run whose key StepKey made, and
// whether key is one.
func SearchKey(key string) (string, bool) {
	i := strings.LastIndex(key, "/step")
	if i < 0 || !strings.Contains(key[:i], "/find-max/r") {
		return "", false
	}
	if n, err := strconv.Atoi(key[i+len("/step"):]); err != nil || n < 1 {
		return "", false
	}
	return key[:i], true
}

// DatasetKey names the data w loads: "<kind>_<8 hex digits>". Workloads of the
// same kind with the same load options, in any order, share a key, so they can
// share one dataset.
func (s *Study) DatasetKey(w *Workload) string {
	if w.DataOf != nil {
		return s.DatasetKey(w.DataOf)
	}
	h := newHasher("dataset/1")
	h.add("kind", w.Kind)
	h.options("load", w.Load)
	return w.Kind + "_" + h.sum()[:8]
}

// fingerprint hashes what changes the measurement; see Cell.Fingerprint. A
// search's also has its options and the objective it searches within.
func (s *Study) fingerprint(t *Target, w *Workload, clients, rate int, search *FindMax) string {
	h := newHasher("run/1")
	t.hash(h)
	h.add("kind", w.Kind)
	h.options("load", w.Load)
	h.options("run", w.Run)
	h.add("dataset", string(w.Dataset))
	h.add("vacuum", string(w.Vacuum))
	h.add("checkpoint", fmt.Sprint(w.Checkpoint))
	h.add("database", w.Database)
	if w.DataOf != nil { // added only when set, so other fingerprints stay as they were
		h.add("data_of", s.DatasetKey(w.DataOf))
	}
	h.add("clients", fmt.Sprint(clients))
	if rate > 0 { // closed-loop runs keep the fingerprints they had before rates
		h.add("rate", fmt.Sprint(rate))
	}
	if search != nil {
		h.add("find_max", fmt.Sprint(search.Confirm), fmt.Sprint(search.Resolution), search.Budget.String(), fmt.Sprint(search.Ceiling))
		if o := s.Objective; o != nil {
			h.add("objective", o.SLO, o.Errors)
		}
	}
	for _, f := range s.Faults(w) { // added only when set, so other fingerprints stay as they were
		h.add("fault", f.At.String(), f.Kind, f.Command)
	}
	h.add("warmup", s.Matrix.Warmup.String())
	h.add("duration", s.Matrix.Duration.String())
	return h.sum()[:16]
}

// Fingerprint is 16 hex digits that change when the server the target names
// changes: its DSN, or its local version, settings and initdb arguments. Labels,
// price, password and node_exporter do not count.
func (t *Target) Fingerprint() string {
	h := newHasher("target/1")
	t.hash(h)
	return h.sum()[:16]
}

func (t *Target) hash(h *hasher) {
	h.add("dsn", t.DSN)
	if l := t.Local; l != nil {
		h.add("version", l.Version)
		for _, st := range l.Settings { // in file order: a later setting overrides an earlier one
			h.add("setting", st.Name, st.Value)
		}
		h.add("initdb", l.Initdb...)
		// Absent and zero are the same server, and hash as before these keys.
		if l.Standbys > 0 {
			h.add("standbys", strconv.Itoa(l.Standbys))
		}
		if l.Synchronous != "" && l.Synchronous != localpg.SyncOff {
			h.add("synchronous", l.Synchronous)
		}
	}
}

// hasher hashes labelled lists of strings without ambiguity: every string is
// written with its length.
type hasher struct {
	h hash.Hash
}

func newHasher(what string) *hasher {
	h := &hasher{sha256.New()}
	h.add(what)
	return h
}

func (h *hasher) add(label string, values ...string) {
	fmt.Fprintf(h.h, "%d:%s[%d]", len(label), label, len(values))
	for _, v := range values {
		fmt.Fprintf(h.h, "%d:%s", len(v), v)
	}
}

// options hashes opts sorted by name; the values of a list keep their order.
func (h *hasher) options(label string, opts []Option) {
	sorted := slices.SortedFunc(slices.Values(opts), func(a, b Option) int { return cmp.Compare(a.Name, b.Name) })
	h.add(label, fmt.Sprint(len(sorted)))
	for _, o := range sorted {
		h.add(o.Name, o.Values...)
	}
}

func (h *hasher) sum() string {
	return hex.EncodeToString(h.h.Sum(nil))
}
