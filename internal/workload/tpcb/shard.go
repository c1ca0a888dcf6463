package tpcb

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// A load spread over several machines (load.Share): `init tpcb --shard i/N`
// copies shard i's branches, with their tellers and accounts, into tables the first
// shard creates; `init tpcb --finish` then vacuums, analyzes and builds the keys
// once every share is there, as `pgbench -i` does after its copy.

// shardParams are the options every shard and the finish share: the data's, not
// how many connections each machine loads over.
func (o LoadOptions) shardParams() string {
	return fmt.Sprintf("scale=%d fillfactor=%d partitions=%d partition-method=%s foreign-keys=%t",
		o.Scale, o.FillFactor, o.Partitions, o.PartitionMethod, o.ForeignKeys)
}

// shardSources are the tables' sources in batches of whole branches; each is
// copied into its table, partitioned or not, whose partitions take their rows.
func shardSources(scale int) []*load.Source {
	branches, tellers, accounts := Sources(scale)
	branches.BatchRows, tellers.BatchRows = 1, TellersPerScale
	return []*load.Source{branches, tellers, accounts}
}

func loadShard(ctx context.Context, connect load.Connector, opt LoadOptions, p *load.Progress) (load.Phases, error) {
	return load.RunShare(ctx, connect, load.ShareLoad{Workload: JournalName, Params: load.ShardParams(opt.shardParams(), opt.Shards),
		Marked: "pgbench_branches", Schema: strings.Join(append(ddl(opt, 0), load.MarkLoadingSQL("pgbench_branches")), ";\n"), Workers: opt.Workers,
		Tasks: func(*load.Journal) ([]load.Task, error) {
			return load.Share{Shard: opt.Shard, Shards: opt.Shards, Units: opt.Scale}.Tasks(shardSources(opt.Scale), nil), nil
		}}, p)
}

func finishShards(ctx context.Context, connect load.Connector, opt LoadOptions) (load.Phases, error) {
	srcs := shardSources(opt.Scale)
	return load.RunFinish(ctx, connect, JournalName, opt.shardParams(), fmt.Sprintf("init tpcb --scale %d", opt.Scale),
		func(s load.Share) []load.Task { return s.Tasks(srcs, nil) }, opt.Scale,
		func(conn *pgconn.PgConn, j *load.Journal, phases *load.Phases) error {
			return afterCopy(ctx, connect, conn, opt, j, phases)
		})
}
