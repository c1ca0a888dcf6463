package tpcb

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/spf13/pflag"
)

// Workload is pgbench's TPC-B-like benchmark: its four tables and its builtin
// scripts.
type Workload struct{}

func (Workload) Name() string { return "tpcb" }

func (Workload) RunHelp() (short, example string) {
	return "Run pgbench's builtin TPC-B-like scripts (tpcb-like, simple-update, select-only)",
		`  pgbakeoff run tpcb --script select-only --clients 8 --duration 60s --progress 5s --dsn "$DSN"
  pgbakeoff run tpcb --script tpcb-like@9 --script select-only@1 --clients 16 --warmup 30s --duration 5m`
}

func (Workload) LoadHelp() (short, example string) {
	return "Load pgbench's tables (what `pgbench -i` does), with parallel COPY",
		`  pgbakeoff init tpcb --scale 100 --dsn "$DSN"
  pgbakeoff init tpcb --scale 1000 --partitions 8 --dsn "postgres://bench@db.example:5432/bench"`
}

func (Workload) NewRun() engine.Workload { return &Run{Dist: "uniform"} }

func (Workload) NewLoad() load.Dataset {
	return &Dataset{LoadOptions{Scale: 1, FillFactor: 100, PartitionMethod: "range", Sharding: load.Sharding{Workers: 2}}}
}

// Run is a TPC-B run's own options.
type Run struct {
	Scripts  []string // builtin script[@weight]; none is tpcb-like
	Protocol driver.Protocol
	Scale    int    // the scale the data must have; 0 takes what it has
	Dist     string // how accounts are drawn (keydist.Parse)
}

func (r *Run) Name() string { return "tpcb" }

func (r *Run) Flags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&r.Scripts, "script", "b", r.Scripts, "builtin script[@weight]: tpcb-like, simple-update, select-only (repeatable; default tpcb-like)")
	fs.IntVarP(&r.Scale, "scale", "s", r.Scale, "expected scale; checked against the data (default: detected)")
	fs.VarP(&r.Protocol, "protocol", "M", "query protocol: simple, extended or prepared")
	fs.StringVar(&r.Dist, "dist", r.Dist, "distribution of the account: uniform, exponential:p, pgbench-gaussian:p, zipfian[:exp], pareto[:h], special, gaussian")
}

// Check checks the options on a nominal scale; Setup checks them again on the
// data's.
func (r *Run) Check(*engine.Spec) error {
	if r.Scale < 0 {
		return engine.FieldErrorf("scale", "must be positive, got %d", r.Scale)
	}
	_, _, err := r.scripts(max(r.Scale, 1))
	return err
}

// scripts are the scripts for the scale, with the key distribution.
func (r *Run) scripts(scale int) ([]*driver.Script, keydist.Spec, error) {
	spec, err := keydist.Parse(cmp.Or(r.Dist, "uniform"))
	if err != nil {
		return nil, spec, engine.FieldErrorf("dist", ": %w", err)
	}
	scripts, err := ParseScripts(r.Scripts, scale)
	if err != nil {
		return nil, spec, err
	}
	if err := SetDist(scripts, spec); err != nil {
		return nil, spec, engine.FieldErrorf("dist", ": %w", err)
	}
	return scripts, spec, nil
}

func (r *Run) Setup(ctx context.Context, spec *engine.Spec, _ *engine.Env, ctl *pgconn.PgConn) (*engine.Setup, error) {
	scale, err := DetectScale(ctx, ctl)
	if errors.Is(err, ErrNotLoaded) {
		return nil, fmt.Errorf("%s has no pgbench tables: run `pgbakeoff init tpcb --scale N` (or pgbench -i) first", spec.Target)
	}
	if err != nil {
		return nil, err
	}
	if r.Scale != 0 && r.Scale != scale {
		return nil, engine.MismatchErrorf("scale", "%d does not match the data: the database was loaded with scale %d", r.Scale, scale)
	}
	scripts, dist, err := r.scripts(scale)
	if err != nil {
		return nil, err
	}
	size := fmt.Sprintf("scale %d", scale)
	if dist.Kind != keydist.Uniform {
		size += ", " + dist.String() + " accounts"
	}
	return &engine.Setup{Scripts: scripts, Protocol: r.Protocol, Scale: scale, Size: size, Params: map[string]any{"scale": scale, "dist": dist.String()}}, nil
}

// Dataset is `init tpcb`'s options.
type Dataset struct{ LoadOptions }

func (d *Dataset) Flags(fs *pflag.FlagSet) {
	o := &d.LoadOptions
	fs.IntVarP(&o.Scale, "scale", "s", o.Scale, "scale factor: 100,000 accounts each")
	fs.IntVar(&o.FillFactor, "fillfactor", o.FillFactor, "fill factor of the accounts, tellers and branches tables")
	fs.IntVar(&o.Partitions, "partitions", o.Partitions, "partition pgbench_accounts into this many partitions")
	fs.StringVar(&o.PartitionMethod, "partition-method", o.PartitionMethod, "range or hash")
	fs.BoolVar(&o.Unlogged, "unlogged", o.Unlogged, "create unlogged tables")
	fs.BoolVar(&o.ForeignKeys, "foreign-keys", o.ForeignKeys, "add foreign keys between the tables")
	o.BindFlags(fs, "branches", "vacuum and build the keys")
}

func (d *Dataset) Describe() string {
	switch o := d.LoadOptions; {
	case o.Finish:
		return fmt.Sprintf("the keys of a sharded TPC-B load of scale %d", o.Scale)
	case o.Shards > 0:
		return fmt.Sprintf("TPC-B branches %s (shard %d/%d)", load.Share{Shard: o.Shard, Shards: o.Shards, Units: o.Scale}.Describe(), o.Shard, o.Shards)
	}
	return fmt.Sprintf("TPC-B scale %d", d.Scale)
}

// Bytes: pgbench's scale 1 takes about 16 MB with its keys; a fill factor leaves
// room.
func (d *Dataset) Bytes() int64 {
	return int64(d.Scale) * (16 << 20) * 100 / int64(max(10, d.FillFactor))
}

func (d *Dataset) Marked() string { return "pgbench_branches" }

func (d *Dataset) Load(ctx context.Context, connect load.Connector, resume bool, p *load.Progress) (string, error) {
	o := d.LoadOptions
	o.Resume = resume
	phases, err := Load(ctx, connect, o, p)
	return phases.String(), err
}
