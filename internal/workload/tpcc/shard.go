package tpcc

import "github.com/pgbakeoff/pgbakeoff/internal/load"

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
