package tpcc

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// A load spread over two shards is the database a single load makes: the same rows
// in every table, and the consistency conditions hold. The finish refuses while a
// shard is missing; a shard run again goes on where it stopped, at the same time as
// another; a finished database refuses more shards.
func TestShardedLoad(t *testing.T) {
	pgtest.Long(t)
	whole, sharded := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	loadInto(t, whole, LoadOptions{Warehouses: 2, Time: loadTime})
	shard := func(i int) error {
		p := load.NewProgress(&strings.Builder{}, false, "tpcc", 0, "rows")
		_, err := Load(context.Background(), connector(sharded), LoadOptions{Warehouses: 2, Time: loadTime, Sharding: load.Sharding{Shard: i, Shards: 2}}, p)
		return err
	}
	finish := func() error {
		_, err := Load(context.Background(), connector(sharded), LoadOptions{Warehouses: 2, Sharding: load.Sharding{Finish: true}}, nil)
		return err
	}
	if err := shard(0); err != nil {
		t.Fatal(err)
	}
	if err := finish(); err == nil || !strings.Contains(err.Error(), "shard 1/2 has not finished") {
		t.Fatalf("finish with shard 1 missing: %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { errs[i] = shard(1 - i) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("shards: %v, %v", errs[0], errs[1])
	}
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	for _, table := range tableNames() {
		q := "select count(*) || ' ' || sum(hashtext(t::text)::bigint) from " + table + " t"
		if a, b := pgtest.Query(t, whole, q), pgtest.Query(t, sharded, q); a != b {
			t.Errorf("%s differs: whole %s, sharded %s", table, a, b)
		}
	}
	report, err := Check(context.Background(), connect(t, sharded))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range report.Results {
		if !r.Passed {
			t.Errorf("condition %d failed: %s", r.Number, r.Detail)
		}
	}
	if got := pgtest.Query(t, sharded, "select count(*) from pg_indexes where tablename = 'order_line'"); got == "0" {
		t.Errorf("order_line has no key after the finish")
	}
	if err := shard(0); err == nil || !strings.Contains(err.Error(), "not a sharded load of these options") {
		t.Errorf("a shard into a finished database: %v", err)
	}
}
