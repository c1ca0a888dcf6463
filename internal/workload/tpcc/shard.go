package tpcc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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
	var phases load.Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	phases.Begin("create tables")
	at := opt.Time
	if at.IsZero() {
		at = time.Now().Truncate(time.Second)
	}
	schema := strings.Join(append(createSQL(0), load.MarkLoadingSQL("warehouse")), ";\n")
	j, err := load.BeginShare(ctx, conn, JournalName, load.ShardParams(opt.Params(), opt.Shards), "warehouse", schema,
		map[string]string{"time": strconv.FormatInt(at.UnixNano(), 10)})
	if err != nil {
		return phases, err
	}
	ns, err := strconv.ParseInt(j.Value("time"), 10, 64)
	if err != nil {
		return phases, fmt.Errorf("the load journal has no time of the load: %w", err)
	}
	pop := newPopulation(opt.Seed, time.Unix(0, ns))
	phases.Begin("copy")
	share := load.Share{Shard: opt.Shard, Shards: opt.Shards, Units: opt.Warehouses}
	if err := load.Run(ctx, connect, share.Tasks(pop.shardSources(opt.Warehouses), isItem), opt.Workers, p, j); err != nil {
		return phases, err
	}
	phases.End()
	return phases, nil
}

// finishShards checks that every shard has copied its share, then builds the
// keys, analyzes and creates the functions, as a single load does after its
// copies.
func finishShards(ctx context.Context, connect load.Connector, opt LoadOptions) (load.Phases, error) {
	var phases load.Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	srcs := newPopulation(opt.Seed, time.Unix(0, 0)).shardSources(opt.Warehouses)
	j, err := load.FinishShare(ctx, conn, JournalName, opt.Params(), fmt.Sprintf("init tpcc --warehouses %d", opt.Warehouses),
		func(s load.Share) []load.Task { return s.Tasks(srcs, isItem) }, opt.Warehouses)
	if err != nil {
		return nil, err
	}
	rows := map[string]int64{}
	for _, s := range srcs {
		rows[s.Table] = s.Rows
	}
	phases.Begin("keys")
	builds, serial := keySQL(rows, 0, opt.Workers)
	keyConnect := connect
	if serial {
		keyConnect = load.SerialBuilds(connect)
	}
	if err := load.Exec(ctx, keyConnect, builds, opt.Workers, j); err != nil {
		return phases, fmt.Errorf("keys: %w", err)
	}
	phases.Begin("analyze")
	var analyze []string
	for _, s := range srcs {
		analyze = append(analyze, "analyze "+s.Table)
	}
	if err := load.Exec(ctx, connect, analyze, opt.Workers, j); err != nil {
		return phases, fmt.Errorf("analyze: %w", err)
	}
	if err := load.MarkLoaded(ctx, conn, "warehouse", "", j); err != nil {
		return phases, err
	}
	phases.Begin("procedures")
	if err := CreateProcedures(ctx, conn); err != nil {
		return phases, fmt.Errorf("procedures: %w", err)
	}
	phases.End()
	return phases, nil
}
