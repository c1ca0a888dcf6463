package sysbench

import "fmt"

// A load spread over several machines (load.Share): `init sysbench --shard i/N`
// copies shard i's tables, whole, into tables the first shard creates; `init
// sysbench --finish` builds their keys and analyzes once every share is there.

// shardParams are the options every shard and the finish share: the data's, not
// how many connections each machine loads over.
func (o LoadOptions) shardParams() string {
	return fmt.Sprintf("tables=%d table-size=%d seed=%d dist=%s", o.Tables, o.TableSize, o.Seed, o.Dist)
}
