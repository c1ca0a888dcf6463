package tpcb_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
)

// Three shards, loading at once into hash-partitioned accounts, make the database a
// single load makes: the same rows in every table, with its keys. The finish
// refuses while a shard is missing.
func TestShardedLoad(t *testing.T) {
	pgtest.Long(t)
	whole, sharded := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	opt := tpcb.LoadOptions{Scale: 3, Partitions: 2, PartitionMethod: "hash", Sharding: load.Sharding{Workers: 2}}
	if _, err := tpcb.Load(context.Background(), connector(t, whole), opt, nil); err != nil {
		t.Fatal(err)
	}
	finish := func() error {
		o := opt
		o.Finish = true
		_, err := tpcb.Load(context.Background(), connector(t, sharded), o, nil)
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			o := opt
			o.Shard, o.Shards = i, 3
			_, errs[i] = tpcb.Load(context.Background(), connector(t, sharded), o, nil)
		})
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("shards: %v, %v", errs[0], errs[1])
	}
	if err := finish(); err == nil || !strings.Contains(err.Error(), "shard 2/3 has not finished") {
		t.Fatalf("finish with shard 2 missing: %v", err)
	}
	o := opt
	o.Shard, o.Shards = 2, 3
	if _, err := tpcb.Load(context.Background(), connector(t, sharded), o, nil); err != nil {
		t.Fatal(err)
	}
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"} {
		q := "select count(*) || ' ' || coalesce(sum(hashtext(t::text)::bigint), 0) from " + table + " t"
		if a, b := pgtest.Query(t, whole, q), pgtest.Query(t, sharded, q); a != b {
			t.Errorf("%s differs: whole %s, sharded %s", table, a, b)
		}
	}
	keys := "select string_agg(conname, ',' order by conname) from pg_constraint where contype = 'p' and conrelid::regclass::text like 'pgbench_%'"
	if a, b := pgtest.Query(t, whole, keys), pgtest.Query(t, sharded, keys); a != b {
		t.Errorf("keys: whole %s, sharded %s", a, b)
	}
}
