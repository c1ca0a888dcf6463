package sysbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// A load spread over several machines (load.Share): `init sysbench --shard i/N`
// copies shard i's tables, whole, into tables the first shard creates; `init
// sysbench --finish` builds their keys and analyzes once every share is there.

// shardParams are the options every shard and the finish share: the data's, not
// how many connections each machine loads over.
func (o LoadOptions) shardParams() string {
	return fmt.Sprintf("tables=%d table-size=%d seed=%d dist=%s", o.Tables, o.TableSize, o.Seed, o.Dist)
}

func shardSources(opt LoadOptions) ([]*load.Source, error) {
	keys, err := keydist.New(opt.Dist, 1, opt.TableSize)
	if err != nil {
		return nil, err
	}
	var srcs []*load.Source
	for n := 1; n <= opt.Tables; n++ {
		srcs = append(srcs, rowSource(opt.Seed, n, opt.TableSize, keys))
	}
	return srcs, nil
}

func loadShard(ctx context.Context, connect load.Connector, opt LoadOptions, p *load.Progress) (load.Phases, error) {
	var phases load.Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	phases.Begin("create tables")
	var create []string
	for n := 1; n <= opt.Tables; n++ {
		create = append(create, createSQL(n))
	}
	schema := strings.Join(append(create, load.MarkLoadingSQL("sbtest1")), ";\n")
	j, err := load.BeginShare(ctx, conn, JournalName, load.ShardParams(opt.shardParams(), opt.Shards), "sbtest1", schema, nil)
	if err != nil {
		return phases, err
	}
	srcs, err := shardSources(opt)
	if err != nil {
		return phases, err
	}
	phases.Begin("copy")
	share := load.Share{Shard: opt.Shard, Shards: opt.Shards, Units: opt.Tables}
	if err := load.Run(ctx, connect, share.Whole(srcs), opt.Workers, p, j); err != nil {
		return phases, err
	}
	phases.End()
	return phases, nil
}

func finishShards(ctx context.Context, connect load.Connector, opt LoadOptions) (load.Phases, error) {
	var phases load.Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	srcs, err := shardSources(opt)
	if err != nil {
		return nil, err
	}
	j, err := load.FinishShare(ctx, conn, JournalName, opt.shardParams(), fmt.Sprintf("init sysbench --tables %d --table-size %d", opt.Tables, opt.TableSize),
		func(s load.Share) []load.Task { return s.Whole(srcs) }, opt.Tables)
	if err != nil {
		return nil, err
	}
	phases.Begin("keys")
	var index, analyze []string
	for n := 1; n <= opt.Tables; n++ {
		index = append(index, strings.Join(keySQL(n, opt.TableSize), ";\n"))
		analyze = append(analyze, "analyze "+tableName(n))
	}
	keyConnect := connect
	if opt.Workers > 1 && opt.Tables >= opt.Workers {
		keyConnect = load.SerialBuilds(connect)
	}
	if err := load.Exec(ctx, keyConnect, index, opt.Workers, j); err != nil {
		return phases, fmt.Errorf("keys: %w", err)
	}
	phases.Begin("analyze")
	if err := load.Exec(ctx, connect, analyze, opt.Workers, j); err != nil {
		return phases, fmt.Errorf("analyze: %w", err)
	}
	if err := load.MarkLoaded(ctx, conn, "sbtest1", fmt.Sprintf("%s%d", sizeComment, opt.TableSize), j); err != nil {
		return phases, err
	}
	phases.End()
	return phases, nil
}
