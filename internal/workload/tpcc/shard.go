package tpcc

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// A load spread over several machines: `init tpcc --shard i/N` copies shard i's
// share of the warehouses (and shard 0 the items) into tables the first shard to
// come creates, all recording their copies in one journal; `init tpcc --finish`
// then checks that every share is there and builds the keys, analyzes and creates
// the functions once. The data is row for row a single load's: every row is a
// function of the seed, its warehouse and its number.

// shardParams are the options a sharded load's journal is kept under: every shard
// and the finish must give the same.
func (o LoadOptions) shardParams() string {
	return fmt.Sprintf("%s shards=%d", o.Params(), o.Shards)
}

// shardLock is the advisory lock the shards take while one creates the tables.
func shardLock() int64 {
	h := fnv.New64a()
	h.Write([]byte("pgbakeoff tpcc sharded load"))
	return int64(h.Sum64() >> 1)
}

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

// shardTasks are shard's copies: its warehouses' rows of every table, and the
// items on shard 0.
func shardTasks(srcs []*load.Source, warehouses, shard, shards int) []load.Task {
	lo, hi := int64(shard*warehouses/shards), int64((shard+1)*warehouses/shards)
	var tasks []load.Task
	for _, s := range srcs {
		if s.Table == "item" {
			if shard == 0 {
				tasks = append(tasks, load.Task{Source: s, Table: s.Table, Last: s.Batches()})
			}
			continue
		}
		per := s.Rows / int64(warehouses) / s.BatchRows // batches per warehouse
		tasks = append(tasks, load.Task{Source: s, Table: s.Table, First: lo * per, Last: hi * per})
	}
	return tasks
}

// loadShard copies this shard's share, creating the tables (and the journal) if
// it is the first to come.
func loadShard(ctx context.Context, connect load.Connector, opt LoadOptions, p *load.Progress) (load.Phases, error) {
	var phases load.Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	phases.Begin("create tables")
	if err := load.ExecSQL(ctx, conn, fmt.Sprintf("select pg_advisory_lock(%d)", shardLock())); err != nil {
		return nil, err
	}
	j, err := load.ResumeJournal(ctx, conn, JournalName, opt.shardParams())
	if err == nil && j == nil {
		j, err = startShards(ctx, conn, opt)
	}
	if uerr := load.ExecSQL(context.Background(), conn, fmt.Sprintf("select pg_advisory_unlock(%d)", shardLock())); err == nil {
		err = uerr
	}
	if err != nil {
		return phases, err
	}
	ns, err := strconv.ParseInt(j.Value("time"), 10, 64)
	if err != nil {
		return phases, fmt.Errorf("the load journal has no time of the load: %w", err)
	}
	pop := newPopulation(opt.Seed, time.Unix(0, ns))
	phases.Begin("copy")
	tasks := shardTasks(pop.shardSources(opt.Warehouses), opt.Warehouses, opt.Shard, opt.Shards)
	if err := load.Run(ctx, connect, tasks, opt.Workers, p, j); err != nil {
		return phases, err
	}
	phases.End()
	return phases, nil
}

// startShards creates the tables of a sharded load and its journal, refusing
// tables it did not make: those of a whole load, or of a sharded one of other
// options.
func startShards(ctx context.Context, conn *pgconn.PgConn, opt LoadOptions) (*load.Journal, error) {
	res, err := conn.Exec(ctx, "select to_regclass('warehouse') is not null").ReadAll()
	if err != nil {
		return nil, err
	}
	if string(res[0].Rows[0][0]) == "t" {
		return nil, fmt.Errorf("the database holds TPC-C tables that are not a sharded load of these options (%s): drop them, or give every shard the options of the load under way",
			opt.shardParams())
	}
	j, err := load.StartJournal(ctx, conn, JournalName, opt.shardParams())
	if err != nil {
		return nil, err
	}
	at := opt.Time
	if at.IsZero() {
		at = time.Now().Truncate(time.Second)
	}
	if err := j.Keep(ctx, conn, "time", strconv.FormatInt(at.UnixNano(), 10)); err != nil {
		return nil, err
	}
	schema := strings.Join(append(createSQL(0), load.MarkLoadingSQL("warehouse")), ";\n")
	if err := j.Step(ctx, conn, schema); err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	return j, nil
}

// finishShards checks that every shard has copied its share, then builds the
// keys, analyzes and creates the functions, as a single load does after its
// copies.
func finishShards(ctx context.Context, connect load.Connector, opt LoadOptions) (load.Phases, error) {
	var phases load.Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	// The shard count is the journal's: the shards wrote it.
	st, err := load.ReadJournal(ctx, conn, JournalName)
	if err != nil {
		return nil, err
	}
	var shards string
	if st != nil {
		var ok bool
		_, shards, ok = strings.Cut(st.Params, " shards=")
		if opt.Shards, err = strconv.Atoi(shards); !ok || err != nil || opt.shardParams() != st.Params {
			return nil, fmt.Errorf("the load under way here has other options (%s) than these (%s): give --finish the shards' options", st.Params, opt.Params())
		}
	}
	j, err := load.ResumeJournal(ctx, conn, JournalName, opt.shardParams())
	if err != nil {
		return nil, err
	}
	if j == nil || opt.Shards == 0 {
		return nil, fmt.Errorf("no sharded TPC-C load to finish here: load each share with `init tpcc --warehouses %d --shard i/N` first", opt.Warehouses)
	}
	srcs := newPopulation(opt.Seed, time.Unix(0, 0)).shardSources(opt.Warehouses)
	var missing []string
	rows := map[string]int64{}
	for s := range opt.Shards {
		for _, t := range shardTasks(srcs, opt.Warehouses, s, opt.Shards) {
			rows[t.Table] = t.Source.Rows
			if !j.Done(load.TaskStep(t)) {
				missing = append(missing, fmt.Sprintf("%d/%d", s, opt.Shards))
				break
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shard %s has not finished copying its warehouses: run `init tpcc --shard i/%d` for it (it goes on where it stopped), then --finish",
			strings.Join(missing, ", "), opt.Shards)
	}
	phases.Begin("keys")
	builds, serial := keySQL(rows, 0, opt.Workers)
	keyConnect := connect
	if serial {
		keyConnect = load.SerialBuilds(connect)
	}
	if err := load.Exec(ctx, keyConnect, builds, opt.Workers, j); err != nil {
		return phases, fmt.Errorf("keys: %w", err)
	}
	phases.Begin("analyze")
	var analyze []string
	for table := range rows {
		analyze = append(analyze, "analyze "+table)
	}
	if err := load.Exec(ctx, connect, analyze, opt.Workers, j); err != nil {
		return phases, fmt.Errorf("analyze: %w", err)
	}
	if err := load.MarkLoaded(ctx, conn, "warehouse", "", j); err != nil {
		return phases, err
	}
	phases.Begin("procedures")
	if err := CreateProcedures(ctx, conn); err != nil {
		return phases, fmt.Errorf("procedures: %w", err)
	}
	phases.End()
	return phases, nil
}
