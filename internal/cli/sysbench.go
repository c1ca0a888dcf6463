package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sysbench"
	"github.com/spf13/pflag"
)

// sysbenchDefaultDist is sysbench 1.0's default --rand-type, the one Debian ships:
// runs compare like with like unless the user says otherwise.
const sysbenchDefaultDist = "special"

var sysbenchKind = kind{
	name:      "sysbench",
	marked:    "sbtest1",
	initShort: "Load sysbench's sbtest tables (what `sysbench oltp_* prepare` does), with parallel COPY",
	initExample: `  pgbakeoff init sysbench --tables 16 --table-size 1000000 --dsn "$DSN"
  pgbakeoff init sysbench --tables 4 --table-size 1000000 --dist uniform --jobs 4`,
	runShort: "Run one of sysbench's OLTP scripts (oltp_read_write, oltp_point_select, ...)",
	runExample: `  pgbakeoff run sysbench --script oltp_read_write --clients 32 --duration 5m --dist pareto --dsn "$DSN"
  pgbakeoff run sysbench --script oltp_point_select --clients 8 --duration 60s --dist uniform`,
	loadFlags: sysbenchLoadFlags,
	runFlags:  sysbenchRunFlags,
}

// sysbenchLoadFlags are init sysbench's options.
func sysbenchLoadFlags(fl *pflag.FlagSet) *dataset {
	opt := &sysbench.LoadOptions{}
	var dist string
	fl.IntVar(&opt.Tables, "tables", 1, "tables sbtest1..N")
	fl.Int64Var(&opt.TableSize, "table-size", 10000, "rows per table")
	fl.IntVarP(&opt.Workers, "jobs", "j", 2, "parallel loading connections")
	fl.Uint64Var(&opt.Seed, "seed", 0, "data seed (0: the fixed default, so loads are reproducible)")
	fl.StringVar(&dist, "dist", sysbenchDefaultDist, "distribution of the k column, as sysbench's --rand-type at prepare")
	return &dataset{
		validate: func() error {
			if err := checkJobs(opt.Workers); err != nil {
				return err
			}
			spec, err := keydist.Parse(dist)
			if err != nil {
				return fmt.Errorf("--dist: %w", err)
			}
			opt.Dist = spec
			return opt.Validate()
		},
		describe: func() string {
			return fmt.Sprintf("sysbench %s of %d rows", plural(opt.Tables, "table"), opt.TableSize)
		},
		// A row of 4+4+120+60 bytes of data takes about 220 bytes in the heap and 40
		// more in the two indexes.
		bytes:  func() int64 { return int64(opt.Tables) * opt.TableSize * 260 },
		params: func() string { return opt.Params() },
		load: func(ctx context.Context, env *Env, t *target.Target, resume bool) error {
			fmt.Fprintf(env.Stderr, "loading %s of %d rows into %s\n", plural(opt.Tables, "sysbench table"), opt.TableSize, t)
			o := *opt
			o.Resume = resume
			return loadDataset(ctx, env, t, "sysbench", func(connect load.Connector, p *load.Progress) (load.Phases, error) {
				return sysbench.Load(ctx, connect, o, p)
			})
		},
	}
}

// sysbenchFlags are run sysbench's own options.
type sysbenchFlags struct {
	script    string
	tables    int
	tableSize int64
	opt       sysbench.Options
}

func sysbenchRunFlags(env *Env, fl *pflag.FlagSet, f *runFlags) func() engine.Workload {
	sf := &sysbenchFlags{opt: sysbench.DefaultOptions(0, 0)}
	o := &sf.opt
	fl.StringVar(&sf.script, "script", "oltp_read_write", "sysbench script: "+strings.Join(sysbench.Names, ", "))
	fl.IntVar(&sf.tables, "tables", 0, "tables to use, sbtest1..N (default: all the database has)")
	fl.Int64Var(&sf.tableSize, "table-size", 0, "expected rows per table; checked against the data (default: detected)")
	fl.StringVar(&f.dist, "dist", sysbenchDefaultDist, "key distribution: uniform, gaussian, special, pareto[:h], zipfian[:exp], exponential:p, pgbench-gaussian:p")
	fl.IntVar(&o.PointSelects, "point-selects", o.PointSelects, "point SELECTs per event")
	fl.IntVar(&o.SimpleRanges, "simple-ranges", o.SimpleRanges, "simple range SELECTs per event")
	fl.IntVar(&o.SumRanges, "sum-ranges", o.SumRanges, "SELECT SUM() ranges per event")
	fl.IntVar(&o.OrderRanges, "order-ranges", o.OrderRanges, "SELECT ORDER BY ranges per event")
	fl.IntVar(&o.DistinctRanges, "distinct-ranges", o.DistinctRanges, "SELECT DISTINCT ranges per event")
	fl.Int64Var(&o.RangeSize, "range-size", o.RangeSize, "rows in a range SELECT")
	fl.IntVar(&o.IndexUpdates, "index-updates", o.IndexUpdates, "UPDATEs of the indexed column k per event")
	fl.IntVar(&o.NonIndexUpdates, "non-index-updates", o.NonIndexUpdates, "UPDATEs of column c per event")
	fl.IntVar(&o.DeleteInserts, "delete-inserts", o.DeleteInserts, "DELETE and INSERT pairs per event")
	fl.BoolVar(&o.RangeSelects, "range-selects", o.RangeSelects, "run the range SELECTs")
	fl.BoolVar(&o.SkipTrx, "skip-trx", o.SkipTrx, "send the statements without BEGIN and COMMIT")
	fl.IntVar(&o.RandomPoints, "random-points", o.RandomPoints, "select_random_points: k values per SELECT")
	fl.IntVar(&o.NumberOfRanges, "number-of-ranges", o.NumberOfRanges, "select_random_ranges: ranges per SELECT")
	fl.Int64Var(&o.Delta, "delta", o.Delta, "select_random_ranges: width of each range of k")
	// sysbench restarts an event after a deadlock, serialization failure or unique
	// violation for as long as it takes; so do these runs, up to a bound. Each client
	// has a thread, as in sysbench, unless the script writes.
	addRunFlags(fl, f, 100, func() bool { return !sysbench.Writes(sf.script, sf.opt) })
	return func() engine.Workload { return sysbenchWorkload(*f, *sf) }
}

func sysbenchWorkload(f runFlags, sf sysbenchFlags) engine.Workload {
	check := func() error {
		spec, err := keydist.Parse(cmp.Or(f.dist, sysbenchDefaultDist))
		if err != nil {
			return fmt.Errorf("--dist: %w", err)
		}
		// Tables of a nominal size, the smallest, whose limits are the loosest: the
		// data's own size is known only once connected, and checked again then.
		opt := sf.opt
		opt.Tables, opt.TableSize, opt.Clients, opt.Dist = max(sf.tables, 1), max(sf.tableSize, 1), f.clients, spec
		_, err = sysbench.Script(sf.script, opt)
		return err
	}
	return engine.Workload{Name: "sysbench", Check: check, Setup: func(ctx context.Context, t *target.Target, ctl *pgconn.PgConn) (*engine.Setup, error) {
		spec, err := keydist.Parse(cmp.Or(f.dist, sysbenchDefaultDist))
		if err != nil {
			return nil, usageError{fmt.Errorf("--dist: %w", err)}
		}
		found, err := sysbench.Detect(ctx, ctl)
		tables, size := found.Tables, found.Size
		if errors.Is(err, sysbench.ErrNotLoaded) {
			return nil, fmt.Errorf("%s has no sysbench tables: run `pgbakeoff init sysbench --tables N --table-size M` (or sysbench ... prepare) first", t)
		}
		if err != nil {
			return nil, err
		}
		if sf.tables < 0 || sf.tables > tables {
			return nil, fmt.Errorf("--tables %d does not match the data: the database has sbtest1..sbtest%d", sf.tables, tables)
		}
		if sf.tables > 0 {
			tables = sf.tables
		}
		if strings.HasPrefix(sf.script, "select_random_") {
			tables = 1 // as in sysbench, these work on sbtest1 whatever --tables says
		}
		switch {
		case sf.tableSize == 0:
		case !found.SizeFromIDs && sf.tableSize != size:
			return nil, fmt.Errorf("--table-size %d does not match the data: the tables were loaded with %d rows", sf.tableSize, size)
		case sf.tableSize > size:
			return nil, fmt.Errorf("--table-size %d does not match the data: sbtest1's largest id is %d", sf.tableSize, size)
		default:
			// Tables sysbench prepared say their size only by their ids, which its
			// oltp_insert takes past it: the user's word is taken for it.
			size = sf.tableSize
		}
		opt := sf.opt
		opt.Tables, opt.TableSize, opt.Clients, opt.Dist = tables, size, f.clients, spec
		script, err := sysbench.Script(sf.script, opt)
		if err != nil {
			return nil, usageError{err}
		}
		fig := engine.SysbenchFigures{Tables: tables, TableSize: size, Dist: spec.String()}
		finish := func(sum *engine.Summary, res *driver.Result) {
			var n driver.Queries
			for _, s := range res.Scripts {
				n.Add(s.Queries)
			}
			fig.ReadQueries, fig.WriteQueries, fig.OtherQueries, fig.Queries = n.Read, n.Write, n.Other, n.Total()
			if secs := res.WindowEnd.Sub(res.WindowStart).Seconds(); secs > 0 {
				fig.QPS = float64(fig.Queries) / secs
			}
			fig.IgnoredErrors = sum.Retries
			sum.SysbenchFigures = &fig
		}
		return &engine.Setup{Scripts: []*driver.Script{script}, Scale: tables,
			Size:   fmt.Sprintf("%s of %d rows, %s keys", plural(tables, "table"), size, spec),
			Params: map[string]any{"tables": tables, "table_size": size, "dist": spec.String(), "options": opt},
			Finish: finish}, nil
	}}
}
