package tpcc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// A load spread over several machines: `init tpcc --shard i/N` copies shard i's
// share of the warehouses (and shard 0 the items) into tables the first shard to
// come creates, all recording their copies in one journal; `init tpcc --finish`
// then checks that every share is there and builds the keys, analyzes and creates
// the functions once. The data is row for row a single load's: every row is a
// function of the seed, its warehouse and its number.

// shardSources are the tables' sources with batches that never straddle two
// warehouses, so that a share of warehouses is a range of whole batches.
func (p *population) shardSources(w int) []*load.Source {
	srcs := p.sources(w)
	for _, s := range srcs {
		switch s.Table {
		case "district":
			s.BatchRows = DistrictsPerWarehouse
		case "warehouse":
			s.BatchRows = 1
		}
	}
	return srcs
}

func isItem(s *load.Source) bool { return s.Table == "item" }

// loadShard copies this shard's share, creating the tables (and the journal) if
// it is the first to come.
func loadShard(ctx context.Context, connect load.Connector, opt LoadOptions, p *load.Progress) (load.Phases, error) {
	at := opt.Time
	if at.IsZero() {
		at = time.Now().Truncate(time.Second)
	}
	return load.RunShare(ctx, connect, load.ShareLoad{Workload: JournalName, Params: load.ShardParams(opt.Params(), opt.Shards), Marked: "warehouse",
		Schema: strings.Join(append(createSQL(0), load.MarkLoadingSQL("warehouse")), ";\n"),
		Values: map[string]string{"time": strconv.FormatInt(at.UnixNano(), 10)}, Workers: opt.Workers,
		Tasks: func(j *load.Journal) ([]load.Task, error) {
			// Every shard's rows carry the first shard's time.
			ns, err := strconv.ParseInt(j.Value("time"), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("the load journal has no time of the load: %w", err)
			}
			pop := newPopulation(opt.Seed, time.Unix(0, ns))
			return load.Share{Shard: opt.Shard, Shards: opt.Shards, Units: opt.Warehouses}.Tasks(pop.shardSources(opt.Warehouses), isItem), nil
		}}, p)
}

// finishShards checks that every shard has copied its share, then does what a
// single load does after its copies.
func finishShards(ctx context.Context, connect load.Connector, opt LoadOptions) (load.Phases, error) {
	srcs := newPopulation(opt.Seed, time.Unix(0, 0)).shardSources(opt.Warehouses)
	rows := map[string]int64{}
	for _, s := range srcs {
		rows[s.Table] = s.Rows
	}
	return load.RunFinish(ctx, connect, JournalName, opt.Params(), fmt.Sprintf("init tpcc --warehouses %d", opt.Warehouses),
		func(s load.Share) []load.Task { return s.Tasks(srcs, isItem) }, opt.Warehouses,
		func(conn *pgconn.PgConn, j *load.Journal, phases *load.Phases) error {
			return afterCopy(ctx, connect, conn, rows, 0, opt.Workers, j, phases)
		})
}
