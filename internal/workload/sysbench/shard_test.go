package sysbench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/sysbench"
)

// Three tables over two shards make the database a single load makes: the same
// rows, keys and table size mark; the finish refuses while a shard is missing.
func TestShardedLoad(t *testing.T) {
	pgtest.Long(t)
	whole, sharded := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	opt := sysbench.LoadOptions{Tables: 3, TableSize: 3000}
	if _, err := sysbench.Load(context.Background(), connector(whole), opt, nil); err != nil {
		t.Fatal(err)
	}
	step := func(shard int, finish bool) error {
		o := opt
		o.Shard, o.Shards, o.Finish = shard, 2, finish
		if finish {
			o.Shards = 0
		}
		_, err := sysbench.Load(context.Background(), connector(sharded), o, nil)
		return err
	}
	if err := step(1, false); err != nil {
		t.Fatal(err)
	}
	if err := step(0, true); err == nil || !strings.Contains(err.Error(), "shard 0/2 has not finished") {
		t.Fatalf("finish with shard 0 missing: %v", err)
	}
	if err := step(0, false); err != nil {
		t.Fatal(err)
	}
	if err := step(0, true); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"select count(*) || ' ' || sum(hashtext(t::text)::bigint) from sbtest1 t",
		"select count(*) || ' ' || sum(hashtext(t::text)::bigint) from sbtest3 t",
		"select string_agg(indexname, ',' order by indexname) from pg_indexes where tablename like 'sbtest%'",
		"select obj_description('sbtest1'::regclass)",
	} {
		if a, b := pgtest.Query(t, whole, q), pgtest.Query(t, sharded, q); a != b {
			t.Errorf("%s: whole %q, sharded %q", q, a, b)
		}
	}
}
