package sysbench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/spf13/pflag"
)

// defaultDist is sysbench 1.0's default --rand-type, the one Debian ships: runs
// compare like with like unless the user says otherwise.
const defaultDist = "special"

// Workload is sysbench's OLTP scripts on its sbtest tables.
type Workload struct{}

func (Workload) Name() string { return "sysbench" }

func (Workload) RunHelp() (short, example string) {
	return "Run one of sysbench's OLTP scripts (oltp_read_write, oltp_point_select, ...)",
		`  pgbakeoff run sysbench --script oltp_read_write --clients 32 --duration 5m --dist pareto --dsn "$DSN"
  pgbakeoff run sysbench --script oltp_point_select --clients 8 --duration 60s --dist uniform`
}

func (Workload) LoadHelp() (short, example string) {
	return "Load sysbench's sbtest tables (what `sysbench oltp_* prepare` does), with parallel COPY",
		`  pgbakeoff init sysbench --tables 16 --table-size 1000000 --dsn "$DSN"
  pgbakeoff init sysbench --tables 4 --table-size 1000000 --dist uniform --jobs 4`
}

func (Workload) NewRun() engine.Workload {
	return &Run{Script: "oltp_read_write", Dist: defaultDist, Opt: DefaultOptions(0, 0)}
}

func (Workload) NewLoad() load.Dataset {
	return &Dataset{LoadOptions: LoadOptions{Tables: 1, TableSize: 10000, Sharding: load.Sharding{Workers: 2}}, dist: defaultDist}
}

func (Workload) NewFigures() engine.Figures { return &Figures{} }

func (Workload) Measures() engine.Measures {
	return engine.Measures{Headline: "tps", Rates: []string{"QPS"}}
}

// Run is a sysbench run's own options.
type Run struct {
	Script    string
	Tables    int   // the tables to use, sbtest1..Tables; 0: all the database has
	TableSize int64 // the rows the tables must have; 0 takes what they have
	Dist      string
	Opt       Options
}

func (r *Run) Name() string { return "sysbench" }

func (r *Run) Flags(fs *pflag.FlagSet) {
	o := &r.Opt
	fs.StringVar(&r.Script, "script", r.Script, "sysbench script: "+strings.Join(Names, ", "))
	fs.IntVar(&r.Tables, "tables", r.Tables, "tables to use, sbtest1..N (default: all the database has)")
	fs.Int64Var(&r.TableSize, "table-size", r.TableSize, "expected rows per table; checked against the data (default: detected)")
	fs.StringVar(&r.Dist, "dist", r.Dist, "key distribution: uniform, gaussian, special, pareto[:h], zipfian[:exp], exponential:p, pgbench-gaussian:p")
	fs.IntVar(&o.PointSelects, "point-selects", o.PointSelects, "point SELECTs per event")
	fs.IntVar(&o.SimpleRanges, "simple-ranges", o.SimpleRanges, "simple range SELECTs per event")
	fs.IntVar(&o.SumRanges, "sum-ranges", o.SumRanges, "SELECT SUM() ranges per event")
	fs.IntVar(&o.OrderRanges, "order-ranges", o.OrderRanges, "SELECT ORDER BY ranges per event")
	fs.IntVar(&o.DistinctRanges, "distinct-ranges", o.DistinctRanges, "SELECT DISTINCT ranges per event")
	fs.Int64Var(&o.RangeSize, "range-size", o.RangeSize, "rows in a range SELECT")
	fs.IntVar(&o.IndexUpdates, "index-updates", o.IndexUpdates, "UPDATEs of the indexed column k per event")
	fs.IntVar(&o.NonIndexUpdates, "non-index-updates", o.NonIndexUpdates, "UPDATEs of column c per event")
	fs.IntVar(&o.DeleteInserts, "delete-inserts", o.DeleteInserts, "DELETE and INSERT pairs per event")
	fs.BoolVar(&o.RangeSelects, "range-selects", o.RangeSelects, "run the range SELECTs")
	fs.BoolVar(&o.SkipTrx, "skip-trx", o.SkipTrx, "send the statements without BEGIN and COMMIT")
	fs.IntVar(&o.RandomPoints, "random-points", o.RandomPoints, "select_random_points: k values per SELECT")
	fs.IntVar(&o.NumberOfRanges, "number-of-ranges", o.NumberOfRanges, "select_random_ranges: ranges per SELECT")
	fs.Int64Var(&o.Delta, "delta", o.Delta, "select_random_ranges: width of each range of k")
}

// Defaults: sysbench restarts an event after a deadlock, serialization failure or
// unique violation for as long as it takes; so do these runs, up to a bound.
// sysbench's clients are threads over every core; these share a thread a core
// (an event loop each) unless each has its own (ThreadPerClient).
func (r *Run) Defaults(s *engine.Settings) {
	s.MaxTries = 100
	s.Jobs = runtime.NumCPU()
}

// ThreadPerClient: as in sysbench, each client has a thread, unless the script
// writes (or there are many clients: engine.ThreadClients).
func (r *Run) ThreadPerClient() bool { return !Writes(r.Script, r.Opt) }

func (r *Run) dist() (keydist.Spec, error) {
	d, err := keydist.Parse(cmp.Or(r.Dist, defaultDist))
	if err != nil {
		return d, engine.FieldErrorf("dist", ": %w", err)
	}
	return d, nil
}

// Check builds the script on tables of a nominal size, the smallest, whose limits
// are the loosest: the data's own size is known only once connected, and checked
// again then.
func (r *Run) Check(spec *engine.Spec) error {
	d, err := r.dist()
	if err != nil {
		return err
	}
	opt := r.Opt
	opt.Tables, opt.TableSize, opt.Clients, opt.Dist = max(r.Tables, 1), max(r.TableSize, 1), spec.Clients, d
	_, err = Script(r.Script, opt)
	return err
}

func (r *Run) Setup(ctx context.Context, spec *engine.Spec, _ *engine.Env, ctl *pgconn.PgConn) (*engine.Setup, error) {
	d, err := r.dist()
	if err != nil {
		return nil, err
	}
	found, err := Detect(ctx, ctl)
	if errors.Is(err, ErrNotLoaded) {
		return nil, fmt.Errorf("%s has no sysbench tables: run `pgbakeoff init sysbench --tables N --table-size M` (or sysbench ... prepare) first", spec.Target)
	}
	if err != nil {
		return nil, err
	}
	tables, size, err := r.fit(found)
	if err != nil {
		return nil, err
	}
	opt := r.Opt
	opt.Tables, opt.TableSize, opt.Clients, opt.Dist = tables, size, spec.Clients, d
	script, err := Script(r.Script, opt)
	if err != nil {
		return nil, err
	}
	fig := &Figures{Tables: tables, TableSize: size, Dist: d.String()}
	return &engine.Setup{Scripts: []*driver.Script{script}, Scale: tables,
		Size:   fmt.Sprintf("%s of %d rows, %s keys", engine.Plural(tables, "table"), size, d),
		Params: map[string]any{"tables": tables, "table_size": size, "dist": d.String(), "options": opt},
		Finish: fig.finish}, nil
}

// fit checks --tables and --table-size against the tables found and says which
// tables of what size the run uses.
func (r *Run) fit(found Layout) (tables int, size int64, err error) {
	tables, size = found.Tables, found.Size
	if r.Tables < 0 || r.Tables > tables {
		return 0, 0, engine.MismatchErrorf("tables", "%d does not match the data: the database has sbtest1..sbtest%d", r.Tables, tables)
	}
	if r.Tables > 0 {
		tables = r.Tables
	}
	if strings.HasPrefix(r.Script, "select_random_") {
		tables = 1 // as in sysbench, these work on sbtest1 whatever --tables says
	}
	switch {
	case r.TableSize == 0:
	case !found.SizeFromIDs && r.TableSize != size:
		return 0, 0, engine.MismatchErrorf("table_size", "%d does not match the data: the tables were loaded with %d rows", r.TableSize, size)
	case r.TableSize > size:
		return 0, 0, engine.MismatchErrorf("table_size", "%d does not match the data: sbtest1's largest id is %d", r.TableSize, size)
	default:
		// Tables sysbench prepared say their size only by their ids, which its
		// oltp_insert takes past it: the user's word is taken for it.
		size = r.TableSize
	}
	return tables, size, nil
}

// Dataset is `init sysbench`'s options.
type Dataset struct {
	LoadOptions
	dist string // --dist of the k column as typed (sysbench's --rand-type at prepare), read into Dist by Validate
}

func (d *Dataset) Flags(fs *pflag.FlagSet) {
	o := &d.LoadOptions
	fs.IntVar(&o.Tables, "tables", o.Tables, "tables sbtest1..N")
	fs.Int64Var(&o.TableSize, "table-size", o.TableSize, "rows per table")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "data seed (0: the fixed default, so loads are reproducible)")
	fs.StringVar(&d.dist, "dist", d.dist, "distribution of the k column, as sysbench's --rand-type at prepare")
	o.BindFlags(fs, "tables", "build the keys and analyze")
}

func (d *Dataset) Validate() error {
	// The flags of how the load runs first, then --dist, then the rest, as they
	// are named in the errors; Read again in LoadOptions.Validate reads the same.
	if err := d.Read(); err != nil {
		return err
	}
	spec, err := keydist.Parse(d.dist)
	if err != nil {
		return engine.FieldErrorf("dist", ": %w", err)
	}
	d.Dist = spec
	return d.LoadOptions.Validate()
}

func (d *Dataset) Describe() string {
	switch o := d.LoadOptions; {
	case o.Finish:
		return fmt.Sprintf("the keys of a sharded sysbench load of %s", engine.Plural(o.Tables, "table"))
	case o.Shards > 0:
		return fmt.Sprintf("sysbench tables %s of %d rows (shard %d/%d)", load.Share{Shard: o.Shard, Shards: o.Shards, Units: o.Tables}.Describe(), o.TableSize, o.Shard, o.Shards)
	}
	return fmt.Sprintf("sysbench %s of %d rows", engine.Plural(d.Tables, "table"), d.TableSize)
}

// Bytes: a row of 4+4+120+60 bytes of data takes about 220 bytes in the heap and
// 40 more in the two indexes.
func (d *Dataset) Bytes() int64   { return int64(d.Tables) * d.TableSize * 260 }
func (d *Dataset) Marked() string { return "sbtest1" }

func (d *Dataset) Load(ctx context.Context, connect load.Connector, resume bool, p *load.Progress) (string, error) {
	o := d.LoadOptions
	o.Resume = resume
	phases, err := Load(ctx, connect, o, p)
	return phases.String(), err
}
