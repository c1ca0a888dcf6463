package sbtpcc

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// LoadOptions shape the table sets, with sysbench-tpcc's options.
type LoadOptions struct {
	Tables int // table sets 1..Tables (--tables)
	Scale  int // warehouses in each (--scale)
	// UseFK adds prepare's foreign keys (--use_fk, on by default); ForcePK gives
	// history a key column (--force_pk).
	UseFK, ForcePK bool
	Schema         string // where the tables go (--pgsql_schema); "public" if ""
	// Seed chooses the data, a pure function of (Seed, table set, table,
	// warehouse, row); 0 is a fixed seed.
	Seed uint64
	// Resume goes on with an unfinished load of the same options.
	Resume bool
	// Sharding: over how many connections (Workers, default 2 if <= 0), and
	// whether as shard Shard's share of the warehouses of a load spread over
	// Shards machines (and shard 0 the items), or (Finish) building the keys of
	// one whose shares are all copied.
	load.Sharding
}

// JournalName names sysbench-tpcc's loads in the load journal.
const JournalName = "sysbench-tpcc"

// Params are the options that shape the data, as the load journal keeps them.
func (o LoadOptions) Params() string {
	return fmt.Sprintf("tables=%d scale=%d use-fk=%t force-pk=%t schema=%s seed=%d", o.Tables, o.Scale, o.UseFK, o.ForcePK, o.schema(), o.Seed)
}

func (o LoadOptions) schema() string { return cmp.Or(o.Schema, "public") }

// Validate checks the options and fills defaults.
func (o *LoadOptions) Validate() error {
	if err := o.Read(); err != nil {
		return err
	}
	if o.Tables < 1 || o.Tables > MaxTables {
		return engine.FieldErrorf("tables", "must be between 1 and %d, got %d", MaxTables, o.Tables)
	}
	if o.Scale < 1 || o.Scale > MaxScale {
		return engine.FieldErrorf("scale", "must be between 1 and %d (warehouse ids are smallint), got %d", MaxScale, o.Scale)
	}
	if err := checkSchema(o.schema()); err != nil {
		return err
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Shards > o.Scale {
		return fmt.Errorf("%d shards for %d warehouses: each shard loads at least one", o.Shards, o.Scale)
	}
	return nil
}

// Load drops the table sets of an earlier load of the schema and creates them
// empty, copies the rows over opt.Workers connections (each table in one frozen
// stream, the largest first), then builds the keys and indexes, the foreign keys
// with UseFK, and analyzes. With opt.Resume it goes on with an unfinished load of
// the same options. Spread over machines, each shard copies its warehouses of
// every table set, shard 0 the items too, and Finish does the rest.
func Load(ctx context.Context, connect load.Connector, opt LoadOptions, p *load.Progress) (load.Phases, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	s := names(opt.schema())
	now, err := serverTime(ctx, connect, opt.schema())
	if err != nil {
		return nil, err
	}
	sources := func(j *load.Journal) ([]*load.Source, error) {
		t := time.Unix(0, 0)
		if j != nil {
			ns, err := strconv.ParseInt(j.Value("time"), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("the load journal has no time of the load: %w", err)
			}
			t = time.Unix(0, ns).UTC()
		}
		pop := newPopulation(opt.Seed, opt.Scale, t)
		var srcs []*load.Source
		for n := 1; n <= opt.Tables; n++ {
			srcs = append(srcs, pop.sources(s, n)...)
		}
		return srcs, nil
	}
	plan := &load.Plan{Workload: JournalName, Params: opt.Params(), SharedParams: opt.Params(),
		Init:   fmt.Sprintf("init sysbench-tpcc --tables %d --scale %d", opt.Tables, opt.Scale),
		Marked: s.t("warehouse", 1),
		Schema: func(*pgconn.PgConn) []string {
			var create []string
			for n := 1; n <= opt.Tables; n++ {
				create = append(create, createSQL(s, n, opt.ForcePK)...)
			}
			return create
		},
		Values: map[string]string{"time": strconv.FormatInt(now.UnixNano(), 10)},
		Clear: func(ctx context.Context, conn *pgconn.PgConn, connect load.Connector) (*load.Dropping, error) {
			old, err := existingTables(ctx, conn, opt.schema())
			if err != nil || len(old) == 0 {
				return nil, err
			}
			return load.DropAside(ctx, conn, connect, old, "drop table if exists "+strings.Join(old, ", ")+" cascade")
		},
		Aside: true,
		Copies: func(_ context.Context, _ *pgconn.PgConn, j *load.Journal, _ int) ([]load.Task, error) {
			srcs, err := sources(j)
			return copyTasks(srcs), err
		},
		Sources: sources,
		Units:   opt.Scale,
		Whole:   func(src *load.Source) bool { return strings.HasPrefix(src.Table, string(s)+".item") },
		After: func(ctx context.Context, conn *pgconn.PgConn, j *load.Journal, phases *load.Phases, _ []load.Task) error {
			return afterCopy(ctx, connect, conn, opt, j, phases)
		}}
	return load.Load(ctx, connect, plan, opt.Options(opt.Resume), p)
}

// serverTime creates the schema if it is missing and reads the server's
// localtimestamp, the NOW() prepare writes into its timestamp columns.
func serverTime(ctx context.Context, connect load.Connector, schema string) (time.Time, error) {
	conn, err := connect(ctx)
	if err != nil {
		return time.Time{}, err
	}
	defer conn.Close(context.Background())
	res, err := conn.Exec(ctx, "create schema if not exists "+schema+"; select to_char(localtimestamp, 'YYYY-MM-DD HH24:MI:SS.US')").ReadAll()
	if err != nil {
		return time.Time{}, fmt.Errorf("create schema %s: %w", schema, err)
	}
	return time.Parse("2006-01-02 15:04:05.000000", string(res[1].Rows[0][0]))
}

// afterCopy builds the indexes, makes the primary keys and adds the foreign keys
// (UseFK) unchecked, then vacuums and analyzes every table and only then checks
// the foreign keys, and marks the data whole: alike after a single load and at a
// sharded one's finish. A foreign key added valid would check the rows as it is
// added, under a lock on both its tables that keeps every other key of them
// waiting: one connection would check a set's keys while the others had nothing
// to do. A check planned before both its tables have statistics may merge-join
// a district's orders against all its customers (7 s instead of 0.1 s at one
// warehouse). The vacuum finds frozen pages to skip, and leaves autovacuum
// nothing to do during the first run; the analyze skips the unread columns.
func afterCopy(ctx context.Context, connect load.Connector, conn *pgconn.PgConn, opt LoadOptions, j *load.Journal, phases *load.Phases) error {
	s := names(opt.schema())
	var builds, keys, vacuums, checks, restats []string
	for k := range keySQL(s, 1, opt.ForcePK) { // every set's costliest index first
		for n := 1; n <= opt.Tables; n++ {
			builds = append(builds, keySQL(s, n, opt.ForcePK)[k])
		}
	}
	for n := 1; n <= opt.Tables; n++ {
		sql := append(pkSQL(s, n, opt.ForcePK), statsSQL(s, n, 0)...)
		if opt.UseFK {
			sql = append(sql, fkSQL(s, n)...)
		}
		keys = append(keys, strings.Join(sql, ";\n"))
		restats = append(restats, strings.Join(statsSQL(s, n, -1), ";\n"))
	}
	for _, base := range checkOrder {
		for n := 1; n <= opt.Tables; n++ {
			vacuums = append(vacuums, "vacuum analyze "+s.t(base, n))
			if c := checkSQL(s, n, base); opt.UseFK && c != "" {
				checks = append(checks, c)
			}
		}
	}
	phases.Begin("keys")
	// order_line's secondary index is about half of a set's build: up to two
	// connections a set, each has work enough to the end and builds one index
	// at a time without the server's workers, which would only crowd it; more
	// connections leave cores idle for the workers of the last builds.
	buildConnect := connect
	if opt.Workers > 1 && opt.Workers <= 2*opt.Tables {
		buildConnect = load.SerialBuilds(connect)
	}
	if err := load.Exec(ctx, buildConnect, builds, opt.Workers, j); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if err := load.Exec(ctx, connect, keys, opt.Workers, j); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	phases.Begin("vacuum analyze")
	if err := load.Exec(ctx, connect, vacuums, opt.Workers, j); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	if len(checks) > 0 {
		phases.Begin("foreign keys")
		if err := load.Exec(ctx, connect, checks, opt.Workers, j); err != nil {
			return fmt.Errorf("foreign keys: %w", err)
		}
	}
	// After the checks, whose validations would wait on these ALTERs' locks.
	if err := load.Exec(ctx, connect, restats, opt.Workers, j); err != nil {
		return fmt.Errorf("statistics targets: %w", err)
	}
	return load.MarkLoaded(ctx, conn, s.t("warehouse", 1), "", j)
}

// copyTasks makes one frozen task per table, the largest first, so that the
// small ones fill the gaps at the end.
func copyTasks(srcs []*load.Source) []load.Task {
	tasks := make([]load.Task, len(srcs))
	for i, src := range srcs {
		tasks[i] = load.Task{Source: src, Table: src.Table, Last: src.Batches(), Freeze: true}
	}
	cost := func(t load.Task) int64 { return t.Source.Rows * rowBytes(t.Source.Table) }
	slices.SortStableFunc(tasks, func(a, b load.Task) int { return cmp.Compare(cost(b), cost(a)) })
	return tasks
}

// rowBytes is roughly a table's row on disk, to order the work.
func rowBytes(table string) int64 {
	base := strings.TrimRight(table[strings.LastIndexByte(table, '.')+1:], "0123456789")
	switch base {
	case "customer":
		return 500
	case "stock":
		return 320
	case "item", "district", "warehouse":
		return 100
	case "new_orders":
		return 40
	}
	return 70 // history, orders, order_line
}

// existingTables lists the table sets' tables in schema.
func existingTables(ctx context.Context, conn *pgconn.PgConn, schema string) ([]string, error) {
	res, err := conn.Exec(ctx, `select quote_ident(n.nspname) || '.' || quote_ident(c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
		where n.nspname = '`+schema+`' and c.relkind in ('r', 'p')
			and c.relname ~ '^(warehouse|district|customer|history|orders|new_orders|order_line|stock|item)[0-9]+$'
		order by 1`).ReadAll()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, row := range res[0].Rows {
		out = append(out, string(row[0]))
	}
	return out, nil
}
