package tpcb

import (
	"context"
	"fmt"
	"strings"

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
	var phases load.Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	phases.Begin("create tables")
	schema := strings.Join(append(ddl(opt), load.MarkLoadingSQL("pgbench_branches")), ";\n")
	j, err := load.BeginShare(ctx, conn, JournalName, load.ShardParams(opt.shardParams(), opt.Shards), "pgbench_branches", schema, nil)
	if err != nil {
		return phases, err
	}
	phases.Begin("copy")
	share := load.Share{Shard: opt.Shard, Shards: opt.Shards, Units: opt.Scale}
	if err := load.Run(ctx, connect, share.Tasks(shardSources(opt.Scale), nil), opt.Workers, p, j); err != nil {
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
	srcs := shardSources(opt.Scale)
	j, err := load.FinishShare(ctx, conn, JournalName, opt.shardParams(), fmt.Sprintf("init tpcb --scale %d", opt.Scale),
		func(s load.Share) []load.Task { return s.Tasks(srcs, nil) }, opt.Scale)
	if err != nil {
		return nil, err
	}
	phases.Begin("vacuum analyze")
	if err := load.Exec(ctx, connect, []string{
		"vacuum analyze pgbench_accounts", "vacuum analyze pgbench_branches",
		"vacuum analyze pgbench_tellers", "vacuum analyze pgbench_history",
	}, opt.Workers, j); err != nil {
		return phases, fmt.Errorf("vacuum: %w", err)
	}
	phases.Begin("primary keys")
	var keys []string
	for _, k := range primaryKeys {
		keys = append(keys, k.sql)
	}
	if err := load.Exec(ctx, connect, keys, opt.Workers, j); err != nil {
		return phases, fmt.Errorf("primary keys: %w", err)
	}
	if opt.ForeignKeys {
		phases.Begin("foreign keys")
		for _, s := range foreignKeys {
			if err := j.Step(ctx, conn, s); err != nil {
				return phases, fmt.Errorf("foreign keys: %w", err)
			}
		}
	}
	if err := load.MarkLoaded(ctx, conn, "pgbench_branches", "", j); err != nil {
		return phases, err
	}
	phases.End()
	return phases, nil
}
