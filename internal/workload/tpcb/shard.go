package tpcb

import (
	"fmt"

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
