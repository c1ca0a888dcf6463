package sysbench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// LoadOptions shape the sbtest tables.
type LoadOptions struct {
	Tables    int
	TableSize int64
	// Seed chooses the data, a pure function of (Seed, table, id); 0 is a fixed seed.
	Seed uint64
	// Dist is the distribution of k over [1, TableSize]; sysbench's prepare draws k
	// with its --rand-type, special by default in sysbench 1.0.
	Dist keydist.Spec
	// Resume goes on with an unfinished load of the same options instead of
	// starting over; without one to go on with, the load starts over.
	Resume bool
	// Sharding: over how many connections (Workers, default 2 if <= 0), and
	// whether as shard Shard's share of the tables of a load spread over Shards
	// machines, or (Finish) building the keys of one whose shares are all copied
	// (see shard.go).
	load.Sharding
}

// JournalName names sysbench's loads in the load journal.
const JournalName = "sysbench"

// Params are the options that shape the data and how its load is cut into steps,
// as the load journal keeps them: a load resumes only under the same ones.
func (o LoadOptions) Params() string {
	return fmt.Sprintf("tables=%d table-size=%d seed=%d dist=%s jobs=%d", o.Tables, o.TableSize, o.Seed, o.Dist, o.Workers)
}

// maxTables keeps names within what Detect recognises; sysbench has no limit, but
// nobody benchmarks with a million tables.
const maxTables = 999999

// Validate checks the options and fills defaults.
func (o *LoadOptions) Validate() error {
	if err := o.Read(); err != nil {
		return err
	}
	if o.Tables < 1 || o.Tables > maxTables {
		return engine.FieldErrorf("tables", "must be between 1 and %d, got %d", maxTables, o.Tables)
	}
	// id is an integer column, as sysbench makes it.
	if o.TableSize < 1 || o.TableSize > 1<<31-1 {
		return engine.FieldErrorf("table_size", "must be between 1 and 2147483647, got %d", o.TableSize)
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Shards > o.Tables {
		return fmt.Errorf("%d shards for %s: each shard loads at least one table", o.Shards, engine.Plural(o.Tables, "table"))
	}
	_, err := keydist.New(o.Dist, 1, o.TableSize)
	return err
}

// batchRows is how many rows a COPY batch holds: about 1 MB.
const batchRows = 5000

// rowSource is one table's rows. Each row's k, c and pad come from a generator seeded
// by (seed, table, id), so any worker can produce any batch.
func rowSource(seed uint64, table int, size int64, keys *keydist.Dist) *load.Source {
	return &load.Source{Table: tableName(table), Columns: "(id, k, c, pad)", Rows: size, BatchRows: batchRows, Binary: true,
		Append: func(buf []byte, first, last int64) []byte {
			var r rand.PCG // one a batch: as a rand.Source it lives on the heap
			for i := first; i < last; i++ {
				r.Seed(load.Mix(seed^uint64(table)<<40), load.Mix(uint64(i)))
				buf = append(buf, 0, 4, 0, 0, 0, 4)
				buf = binary.BigEndian.AppendUint32(buf, uint32(i+1))
				buf = append(buf, 0, 0, 0, 4)
				buf = binary.BigEndian.AppendUint32(buf, uint32(keys.Draw(&r)))
				buf = binary.BigEndian.AppendUint32(buf, cGroups*(groupLen+1)-1)
				buf = appendGroups(buf, &r, cGroups)
				buf = binary.BigEndian.AppendUint32(buf, padGroups*(groupLen+1)-1)
				buf = appendGroups(buf, &r, padGroups)
			}
			return buf
		}}
}

// Load moves the sbtest tables of an earlier load (all of them, also beyond
// opt.Tables) aside, to be dropped in the background, and creates opt.Tables new
// ones; copies their rows, each table in one frozen stream when there are at least
// as many tables as workers, else each table in several unfrozen ones so that every
// worker has work; then adds the keys and secondary indexes and analyzes, spread
// over the workers. With opt.Resume it goes on with a load of the same options that
// did not finish, doing only the steps its journal lacks. Spread over machines
// (load.Share), each shard copies its tables whole, into tables the first shard
// creates, and --finish builds their keys and analyzes once every share is there.
func Load(ctx context.Context, connect load.Connector, opt LoadOptions, p *load.Progress) (load.Phases, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	keys, err := keydist.New(opt.Dist, 1, opt.TableSize)
	if err != nil {
		return nil, err
	}
	var sources []*load.Source
	for n := 1; n <= opt.Tables; n++ {
		sources = append(sources, rowSource(opt.Seed, n, opt.TableSize, keys))
	}
	plan := &load.Plan{Workload: JournalName, Params: opt.Params(), SharedParams: opt.shardParams(),
		Init: fmt.Sprintf("init sysbench --tables %d --table-size %d", opt.Tables, opt.TableSize), Marked: "sbtest1",
		Schema: func(*pgconn.PgConn) []string {
			var create []string
			for n := 1; n <= opt.Tables; n++ {
				create = append(create, createSQL(n))
			}
			return create
		},
		Clear: func(ctx context.Context, conn *pgconn.PgConn, connect load.Connector) (*load.Dropping, error) {
			old, err := existingTables(ctx, conn)
			if err != nil {
				return nil, err
			}
			return load.DropAside(ctx, conn, connect, old, "drop table if exists "+strings.Join(old, ", ")+" cascade")
		},
		Aside: true,
		Copies: func(context.Context, *pgconn.PgConn, *load.Journal, int) ([]load.Task, error) {
			return copyTasks(opt, sources), nil
		},
		Sources:  func(*load.Journal) ([]*load.Source, error) { return sources, nil },
		Units:    opt.Tables,
		EachUnit: true,
		After: func(ctx context.Context, conn *pgconn.PgConn, j *load.Journal, phases *load.Phases, _ []load.Task) error {
			return afterCopy(ctx, connect, conn, opt, j, phases)
		}}
	return load.Load(ctx, connect, plan, opt.Options(opt.Resume), p)
}

// afterCopy builds the tables' keys and secondary indexes, analyzes them and
// marks the data whole with its table size: the same whether one machine copied
// the rows or several.
func afterCopy(ctx context.Context, connect load.Connector, conn *pgconn.PgConn, opt LoadOptions, j *load.Journal, phases *load.Phases) error {
	phases.Begin("keys")
	var index, analyze []string
	for n := 1; n <= opt.Tables; n++ {
		index = append(index, strings.Join(keySQL(n, opt.TableSize), ";\n"))
		analyze = append(analyze, "analyze "+tableName(n))
	}
	keyConnect := connect
	if opt.Workers > 1 && opt.Tables >= opt.Workers {
		keyConnect = load.SerialBuilds(connect) // each job builds one table's keys at a time
	}
	if err := load.Exec(ctx, keyConnect, index, opt.Workers, j); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	phases.Begin("analyze")
	if err := load.Exec(ctx, connect, analyze, opt.Workers, j); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	// The table size goes where the loading mark was.
	return load.MarkLoaded(ctx, conn, "sbtest1", fmt.Sprintf("%s%d", sizeComment, opt.TableSize), j)
}

// copyTasks gives each table one frozen task while every worker has a whole table of
// its own; the tables left for the last round, fewer than the workers, are split so
// that all the workers copy to the end. Frozen rows need no later VACUUM to set
// their hint bits, but only one stream may fill a table frozen.
func copyTasks(opt LoadOptions, sources []*load.Source) []load.Task {
	whole := opt.Tables - opt.Tables%opt.Workers
	var tasks []load.Task
	for i, src := range sources {
		if n := i + 1; n <= whole {
			tasks = append(tasks, load.Task{Source: src, Table: src.Table, Last: src.Batches(), Freeze: true})
			continue
		}
		rest := opt.Tables - whole
		tasks = append(tasks, load.Split(src, (opt.Workers+rest-1)/rest)...)
	}
	return tasks
}

// existingTables lists the sbtest tables in the search path, numbered ones only.
func existingTables(ctx context.Context, conn *pgconn.PgConn) ([]string, error) {
	res, err := conn.Exec(ctx, `select quote_ident(n.nspname) || '.' || quote_ident(c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
		where c.relname ~ '^sbtest[0-9]+$' and c.relkind in ('r', 'p') and n.nspname = any (current_schemas(false))
		order by substr(c.relname, 7)::numeric`).ReadAll()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, row := range res[0].Rows {
		names = append(names, string(row[0]))
	}
	return slices.Clip(names), nil
}
