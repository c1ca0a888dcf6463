package sysbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
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
	var create []string
	for n := 1; n <= opt.Tables; n++ {
		create = append(create, createSQL(n))
	}
	return load.RunShare(ctx, connect, load.ShareLoad{Workload: JournalName, Params: load.ShardParams(opt.shardParams(), opt.Shards),
		Marked: "sbtest1", Schema: strings.Join(append(create, load.MarkLoadingSQL("sbtest1")), ";\n"), Workers: opt.Workers,
		Tasks: func(*load.Journal) ([]load.Task, error) {
			srcs, err := shardSources(opt)
			return load.Share{Shard: opt.Shard, Shards: opt.Shards, Units: opt.Tables}.Whole(srcs), err
		}}, p)
}

func finishShards(ctx context.Context, connect load.Connector, opt LoadOptions) (load.Phases, error) {
	srcs, err := shardSources(opt)
	if err != nil {
		return nil, err
	}
	return load.RunFinish(ctx, connect, JournalName, opt.shardParams(), fmt.Sprintf("init sysbench --tables %d --table-size %d", opt.Tables, opt.TableSize),
		func(s load.Share) []load.Task { return s.Whole(srcs) }, opt.Tables,
		func(conn *pgconn.PgConn, j *load.Journal, phases *load.Phases) error {
			return afterCopy(ctx, connect, conn, opt, j, phases)
		})
}
