package sbtpcc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/spf13/pflag"
)

// Workload is sysbench-tpcc.
type Workload struct{}

func (Workload) Name() string { return "sysbench-tpcc" }

func (Workload) RunHelp() (short, example string) {
	return "Run Percona's sysbench-tpcc (tpcc.lua): its five transactions in its mix, with sysbench's figures",
		`  pgbakeoff run sysbench-tpcc --clients 16 --duration 5m --dsn "$DSN"
  pgbakeoff run sysbench-tpcc --trx-level RC --enable-purge --clients 64 --duration 10m`
}

func (Workload) LoadHelp() (short, example string) {
	return "Load sysbench-tpcc's table sets (what `sysbench tpcc.lua prepare` does), with parallel COPY",
		`  pgbakeoff init sysbench-tpcc --tables 10 --scale 100 --dsn "$DSN"
  pgbakeoff init sysbench-tpcc --tables 1 --scale 10 --use-fk=false --jobs 4`
}

func (Workload) VerifyHelp() (short, example string) {
	return "Run tpcc_check.lua's consistency checks on every schema's table sets", `  pgbakeoff check sysbench-tpcc --dsn "$DSN"`
}

func (Workload) NewRun() engine.Workload {
	return &Run{Opt: RunOptions{Schema: "public", TrxLevel: "RR"}, Dist: "nurand"}
}

func (Workload) NewLoad() load.Dataset {
	return &Dataset{LoadOptions{Tables: 1, Scale: 1, UseFK: true, Schema: "public", Sharding: load.Sharding{Workers: 2}}}
}

func (Workload) NewFigures() engine.Figures { return &Figures{} }

func (Workload) Measures() engine.Measures {
	return engine.Measures{Headline: "tps", Rates: []string{"QPS"}}
}

// Verify runs the checks on the table sets of every schema that has them.
func (Workload) Verify(ctx context.Context, t *target.Target, conn *pgconn.PgConn, w io.Writer) error {
	schemas, err := schemasWithTables(ctx, conn)
	if err != nil {
		return err
	}
	if len(schemas) == 0 {
		return fmt.Errorf("%s has no sysbench-tpcc tables: run `pgbakeoff init sysbench-tpcc --tables N --scale W` (or tpcc.lua prepare) first", t)
	}
	failed, checked := 0, 0
	for _, schema := range schemas {
		start := time.Now()
		found, err := Detect(ctx, conn, schema)
		if err != nil {
			return fmt.Errorf("schema %s: %w", schema, err)
		}
		results, err := Check(ctx, conn, schema, found.Tables)
		if err != nil {
			return fmt.Errorf("check sysbench-tpcc: %w", err)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, r := range results {
			state := "passed"
			if !r.Passed {
				state = "FAILED"
				failed++
			}
			fmt.Fprintf(tw, "%d\t%s\t%s", r.Number, state, r.Name)
			if r.Detail != "" {
				fmt.Fprintf(tw, "\t%s", r.Detail)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		checked += len(results)
		fmt.Fprintf(w, "schema %s: %s of %s, %d checks in %s\n", schema, engine.Plural(found.Tables, "table set"), engine.Plural(found.Scale, "warehouse"),
			len(results), time.Since(start).Round(time.Millisecond))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d sysbench-tpcc checks failed", failed, checked)
	}
	return nil
}

// schemasWithTables lists the schemas holding a warehouse1 table, but those of
// old tables being dropped.
func schemasWithTables(ctx context.Context, conn *pgconn.PgConn) ([]string, error) {
	res, err := conn.Exec(ctx, `select n.nspname from pg_class c join pg_namespace n on n.oid = c.relnamespace
		where c.relname = 'warehouse1' and c.relkind in ('r', 'p') and n.nspname !~ '^(pg_|information_schema|`+load.TrashPrefix+`)'
		order by n.nspname = 'public' desc, n.nspname`).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("look for the sysbench-tpcc tables: %w", err)
	}
	var out []string
	for _, row := range res[0].Rows {
		if s := string(row[0]); schemaRe.MatchString(s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Run is a sysbench-tpcc run's own options.
type Run struct {
	// Tables and Scale are what the data must have; 0 takes what it has.
	Tables, Scale int
	Opt           RunOptions
	Dist          string // nurand, or a keydist.Parse distribution of customers and items
}

func (r *Run) Name() string { return "sysbench-tpcc" }

func (r *Run) Flags(fs *pflag.FlagSet) {
	o := &r.Opt
	fs.IntVar(&r.Tables, "tables", r.Tables, "table sets to use, 1..N (default: all the schema has)")
	fs.IntVar(&r.Scale, "scale", r.Scale, "expected warehouses per table set; checked against the data (default: detected)")
	fs.StringVar(&o.Schema, "schema", o.Schema, "schema of the tables (tpcc.lua's --pgsql_schema)")
	fs.StringVar(&o.TrxLevel, "trx-level", o.TrxLevel, "isolation level: RR, RC or SER")
	fs.BoolVar(&o.Purge, "enable-purge", o.Purge, "add the purge transaction to the mix (1 in 24)")
	fs.BoolVar(&o.Splittable, "splittable", o.Splittable, "start transactions READ WRITE or READ ONLY, for a splitting proxy")
	fs.StringVar(&r.Dist, "dist", r.Dist, "customers and items: nurand (tpcc.lua's NURand), or a sysbench distribution: uniform, gaussian, special, pareto[:h], zipfian[:exp], ...")
}

// Defaults: sysbench restarts an event after a deadlock, serialization failure
// or unique violation for as long as it takes; so do these runs, up to a bound.
// sysbench's clients are threads over every core.
func (r *Run) Defaults(s *engine.Settings) {
	s.MaxTries = 100
	s.Jobs = runtime.NumCPU()
}

// options are the run options for the data's table sets and warehouses.
func (r *Run) options(tables, scale int) (RunOptions, error) {
	o := r.Opt
	o.Tables, o.Scale = tables, scale
	if r.Dist != "" && r.Dist != "nurand" {
		d, err := keydist.Parse(r.Dist)
		if err != nil {
			return o, engine.FieldErrorf("dist", ": %w (or nurand, the default)", err)
		}
		o.Dist = &d
	}
	return o, nil
}

func (r *Run) Check(*engine.Spec) error {
	if r.Tables < 0 {
		return engine.FieldErrorf("tables", "must not be negative, got %d", r.Tables)
	}
	if r.Scale < 0 {
		return engine.FieldErrorf("scale", "must not be negative, got %d", r.Scale)
	}
	o, err := r.options(max(r.Tables, 1), max(r.Scale, 1))
	if err != nil {
		return err
	}
	_, err = Scripts(o)
	return err
}

func (r *Run) Setup(ctx context.Context, spec *engine.Spec, _ *engine.Env, ctl *pgconn.PgConn) (*engine.Setup, error) {
	schema := r.Opt.schema()
	found, err := Detect(ctx, ctl, schema)
	if errors.Is(err, ErrNotLoaded) {
		return nil, fmt.Errorf("%s has no sysbench-tpcc tables in schema %s: run `pgbakeoff init sysbench-tpcc --tables N --scale W` (or tpcc.lua prepare) first", spec.Target, schema)
	}
	if err != nil {
		return nil, err
	}
	tables := found.Tables
	switch {
	case r.Tables > found.Tables:
		return nil, engine.MismatchErrorf("tables", "%d does not match the data: schema %s has table sets 1..%d", r.Tables, schema, found.Tables)
	case r.Tables > 0:
		tables = r.Tables
	}
	if r.Scale != 0 && r.Scale != found.Scale {
		return nil, engine.MismatchErrorf("scale", "%d does not match the data: the table sets have %d warehouses", r.Scale, found.Scale)
	}
	o, err := r.options(tables, found.Scale)
	if err != nil {
		return nil, err
	}
	scripts, err := Scripts(o)
	if err != nil {
		return nil, err
	}
	fig := &Figures{Tables: tables, Scale: found.Scale, TrxLevel: o.TrxLevel, Dist: r.distName()}
	return &engine.Setup{Scripts: scripts, Scale: found.Scale,
		Size: engine.Plural(tables, "table set") + " of " + engine.Plural(found.Scale, "warehouse"),
		Params: map[string]any{"tables": tables, "scale": found.Scale, "schema": schema, "trx_level": o.TrxLevel,
			"enable_purge": o.Purge, "splittable": o.Splittable, "dist": r.distName()},
		Finish: fig.finish}, nil
}

func (r *Run) distName() string {
	if r.Dist == "" || r.Dist == "nurand" {
		return "nurand"
	}
	d, _ := keydist.Parse(r.Dist)
	return d.String()
}

// Dataset is `init sysbench-tpcc`'s options.
type Dataset struct{ LoadOptions }

func (d *Dataset) Flags(fs *pflag.FlagSet) {
	o := &d.LoadOptions
	fs.IntVar(&o.Tables, "tables", o.Tables, "table sets warehouse1..N to item1..N")
	fs.IntVar(&o.Scale, "scale", o.Scale, "warehouses in each table set (about 80 MB each)")
	fs.BoolVar(&o.UseFK, "use-fk", o.UseFK, "add tpcc.lua's foreign keys")
	fs.BoolVar(&o.ForcePK, "force-pk", o.ForcePK, "give history a primary key column, id")
	fs.StringVar(&o.Schema, "schema", o.Schema, "schema of the tables, created if missing (tpcc.lua's --pgsql_schema)")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "data seed (0: the fixed default, so loads are reproducible)")
	o.BindFlags(fs, "warehouses", "build the keys and analyze")
}

func (d *Dataset) Describe() string {
	o := d.LoadOptions
	sets := engine.Plural(o.Tables, "table set")
	switch {
	case o.Finish:
		return "the keys of a sharded sysbench-tpcc load of " + sets
	case o.Shards > 0:
		return fmt.Sprintf("sysbench-tpcc %s, warehouses %s (shard %d/%d)", sets, load.Share{Shard: o.Shard, Shards: o.Shards, Units: o.Scale}.Describe(), o.Shard, o.Shards)
	}
	return fmt.Sprintf("sysbench-tpcc %s of %s", sets, engine.Plural(o.Scale, "warehouse"))
}

// Bytes: a warehouse takes about 80 MB with its indexes, a table set's items 10.
func (d *Dataset) Bytes() int64 {
	return int64(d.Tables) * (int64(d.Scale)*(80<<20) + 10<<20)
}

func (d *Dataset) Marked() string { return names(d.schema()).t("warehouse", 1) }

func (d *Dataset) Load(ctx context.Context, connect load.Connector, resume bool, p *load.Progress) (string, error) {
	o := d.LoadOptions
	o.Resume = resume
	phases, err := Load(ctx, connect, o, p)
	return phases.String(), err
}
