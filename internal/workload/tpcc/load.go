package tpcc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// LoadOptions shape the initial database.
type LoadOptions struct {
	Warehouses int
	// Partition hash-partitions order_line by warehouse as HammerDB's partitioned
	// schema does (partitions ol_0, ol_1, ...; see orderLinePartitions).
	Partition bool
	// Seed chooses the data, a pure function of (Seed, warehouse, row); 0 means a
	// fixed default seed.
	Seed uint64
	// Time is C_SINCE, H_DATE, O_ENTRY_D and OL_DELIVERY_D of the initial rows
	// (clause 4.3.3.1 asks for the time of the load); zero means the time Load starts.
	Time time.Time
	// Resume goes on with an unfinished load of the same options instead of
	// starting over (keeping its time); without one to go on with, it starts over.
	Resume bool
	// Sharding: over how many connections COPY, indexes and ANALYZE run
	// (Workers, default 2 if <= 0), and whether as shard Shard's share of the
	// warehouses of a load spread over Shards machines, or (Finish) building the
	// keys of one whose shares are all copied (see shard.go).
	load.Sharding
}

// JournalName names TPC-C's loads in the load journal.
const JournalName = "tpcc"

// Params are the options that shape the data, as the load journal keeps them: a load
// resumes only under the same ones. Each table is one step whatever the workers.
func (o LoadOptions) Params() string {
	return fmt.Sprintf("warehouses=%d partition=%t seed=%d", o.Warehouses, o.Partition, o.Seed)
}

// maxWarehouses keeps warehouse ids within the integer columns that hold them.
const maxWarehouses = 1 << 30

// Validate checks the options and fills defaults.
func (o *LoadOptions) Validate() error {
	if err := o.Read(); err != nil {
		return err
	}
	if o.Warehouses < 1 {
		return engine.FieldErrorf("warehouses", "must be at least 1, got %d", o.Warehouses)
	}
	if o.Warehouses > maxWarehouses {
		return engine.FieldErrorf("warehouses", "%d is too large", o.Warehouses)
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	switch {
	case (o.Shards > 0 || o.Finish) && o.Partition:
		return fmt.Errorf("--partition is not supported with --shard: load a partitioned order_line from one machine")
	case o.Shards > o.Warehouses:
		return fmt.Errorf("%d shards for %d warehouses: each shard loads at least one", o.Shards, o.Warehouses)
	}
	return nil
}

// Load drops the TPC-C tables of an earlier load and creates them empty; copies the
// initial database into them over opt.Workers connections, each table (or
// order_line partition) in one frozen stream; then builds the keys and indexes,
// analyzes, and creates the stored procedures. With opt.Resume it goes on with a load
// of the same options that did not finish, doing only the steps its journal lacks.
// Spread over machines (shard.go), each shard copies its warehouses into tables the
// first shard creates, and --finish does the rest once every share is there.
func Load(ctx context.Context, connect load.Connector, opt LoadOptions, p *load.Progress) (load.Phases, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	partitions := 0
	if opt.Partition && !opt.Finish && opt.Shards == 0 {
		partitions = orderLinePartitions(opt.Warehouses)
	}
	if opt.Time.IsZero() {
		opt.Time = time.Now().Truncate(time.Second)
	}
	plan := &load.Plan{Workload: JournalName, Params: opt.Params(), SharedParams: opt.Params(),
		Init: fmt.Sprintf("init tpcc --warehouses %d", opt.Warehouses), Marked: "warehouse",
		Schema: func(*pgconn.PgConn) []string { return createSQL(partitions) },
		Values: map[string]string{"time": strconv.FormatInt(opt.Time.UnixNano(), 10)},
		Clear: func(ctx context.Context, conn *pgconn.PgConn, _ load.Connector) (*load.Dropping, error) {
			return nil, load.ExecSQL(ctx, conn, dropSQL)
		},
		ClearPhase: "drop tables",
		Copies: func(ctx context.Context, conn *pgconn.PgConn, j *load.Journal, _ int) ([]load.Task, error) {
			pop, err := journalPopulation(opt.Seed, j)
			if err != nil {
				return nil, err
			}
			sources, err := pop.partitioned(ctx, conn, opt.Warehouses, partitions)
			return copyTasks(sources), err
		},
		Sources: func(j *load.Journal) ([]*load.Source, error) {
			if j == nil { // the finish: the batches matter, not the rows
				return newPopulation(opt.Seed, time.Unix(0, 0)).shardSources(opt.Warehouses), nil
			}
			pop, err := journalPopulation(opt.Seed, j)
			if err != nil {
				return nil, err
			}
			return pop.shardSources(opt.Warehouses), nil
		},
		Units: opt.Warehouses,
		Whole: isItem,
		After: func(ctx context.Context, conn *pgconn.PgConn, j *load.Journal, phases *load.Phases, tasks []load.Task) error {
			rows := make(map[string]int64, len(tasks))
			for _, t := range tasks {
				rows[t.Table] = t.Source.Rows
			}
			return afterCopy(ctx, connect, conn, rows, partitions, opt.Workers, j, phases)
		}}
	return load.Load(ctx, connect, plan, opt.Options(opt.Resume), p)
}

// journalPopulation is the population of the load whose journal is j: its rows
// carry the time the load first began, kept in the journal.
func journalPopulation(seed uint64, j *load.Journal) (*population, error) {
	ns, err := strconv.ParseInt(j.Value("time"), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("the load journal has no time of the load: %w", err)
	}
	return newPopulation(seed, time.Unix(0, ns)), nil
}

// partitioned are the sources of the tables, order_line as one source a partition
// when it has partitions.
func (pop *population) partitioned(ctx context.Context, conn *pgconn.PgConn, warehouses, partitions int) ([]*load.Source, error) {
	sources := pop.sources(warehouses)
	if partitions == 0 {
		return sources, nil
	}
	byPart, err := partitionWarehouses(ctx, conn, warehouses, partitions)
	if err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	sources = slices.DeleteFunc(sources, func(s *load.Source) bool { return s.Table == "order_line" })
	for r, ws := range byPart {
		if len(ws) > 0 {
			sources = append(sources, pop.orderLines(partitionName(r), ws))
		}
	}
	return sources, nil
}

// afterCopy builds the keys of the tables (or partitions) copied, with their
// rows, vacuums and analyzes them, marks the data whole and creates the
// functions: what a load does once its rows are in, whether one machine copied
// them or several. The vacuum finds frozen pages to skip, and leaves autovacuum
// nothing to do in the first minute of the first run.
func afterCopy(ctx context.Context, connect load.Connector, conn *pgconn.PgConn, rows map[string]int64, partitions, workers int, j *load.Journal, phases *load.Phases) error {
	phases.Begin("keys")
	builds, serial := keySQL(rows, partitions, workers)
	keyConnect := connect
	if serial {
		keyConnect = load.SerialBuilds(connect)
	}
	if err := load.Exec(ctx, keyConnect, builds, workers, j); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if partitions > 0 {
		if err := j.Step(ctx, conn, attachSQL(partitions)); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
	}
	phases.Begin("vacuum analyze")
	var analyze []string
	for _, t := range slices.Sorted(maps.Keys(rows)) {
		analyze = append(analyze, "vacuum analyze "+t)
	}
	for r := range partitions {
		if _, loaded := rows[partitionName(r)]; !loaded {
			analyze = append(analyze, "vacuum analyze "+partitionName(r)) // empty: 0 rows, rather than unknown
		}
	}
	if err := load.Exec(ctx, connect, analyze, workers, j); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	if partitions > 0 {
		if err := analyzeParent(ctx, conn, "order_line", j); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
	}
	// The data is whole now; the functions can be made again with --procedures-only.
	if err := load.MarkLoaded(ctx, conn, "warehouse", "", j); err != nil {
		return err
	}
	phases.Begin("procedures")
	if err := CreateProcedures(ctx, conn); err != nil {
		return fmt.Errorf("procedures: %w", err)
	}
	return nil
}

// copyTasks makes one frozen task per table or partition, largest first so that the
// small ones fill the gaps at the end.
func copyTasks(sources []*load.Source) []load.Task {
	tasks := make([]load.Task, len(sources))
	for i, s := range sources {
		tasks[i] = load.Task{Source: s, Table: s.Table, Last: s.Batches(), Freeze: true}
	}
	cost := func(t load.Task) int64 { return t.Source.Rows * rowBytes(t.Source.Table) }
	slices.SortStableFunc(tasks, func(a, b load.Task) int { return cmp.Compare(cost(b), cost(a)) })
	return tasks
}

// rowBytes is roughly the size of a table's row on disk, to order the work.
func rowBytes(table string) int64 {
	switch table {
	case "customer":
		return 700
	case "stock":
		return 330
	case "item", "district", "warehouse":
		return 100
	case "new_order":
		return 40
	}
	return 70 // history, orders, order_line and its partitions
}

// partitionName names order_line's hash partition for remainder r, as HammerDB does.
func partitionName(r int) string { return "ol_" + strconv.Itoa(r) }

// partitionWarehouses asks the server which warehouses each order_line partition
// holds: which hash partition a value lands in is the server's business.
func partitionWarehouses(ctx context.Context, conn *pgconn.PgConn, warehouses, partitions int) ([][]int, error) {
	res, err := conn.Exec(ctx, fmt.Sprintf(`select r, w from generate_series(1, %d) w, generate_series(0, %d) r
		where satisfies_hash_partition('order_line'::regclass, %d, r, w) order by w`, warehouses, partitions-1, partitions)).ReadAll()
	if err != nil {
		return nil, err
	}
	byPart := make([][]int, partitions)
	for _, row := range res[0].Rows {
		r, _ := strconv.Atoi(string(row[0])) // integers from generate_series
		w, _ := strconv.Atoi(string(row[1]))
		byPart[r] = append(byPart[r], w)
	}
	return byPart, nil
}

// keySQL builds the keys and indexes, those of the largest tables first; rows holds
// each table's (or partition's) rows. With partitions, order_line's primary key is
// built on each partition by its own statement, so that they build in parallel;
// attachSQL then joins them under the partitioned table's key.
//
// serial tells whether workers jobs building them keep the server busy enough that
// its parallel index builds would only crowd them (load.SerialBuilds): there are two
// jobs or more, each has an index to build, and the largest, order_line's key, is at
// most twice a job's share of the rows. With more jobs (4 or more for 10 warehouses
// without partitions) the others run out of work long before it ends, and the
// server's workers can use the cores they leave, as they can those a single job
// leaves.
func keySQL(rows map[string]int64, partitions, workers int) (sql []string, serial bool) {
	type stmt struct {
		sql  string
		rows int64
	}
	var stmts []stmt
	for _, ix := range keys {
		if ix.table == "order_line" && partitions > 0 {
			for r := range partitions {
				part := partitionName(r)
				stmts = append(stmts, stmt{ix.sql(part, part+"_pkey"), rows[part]})
			}
			continue
		}
		stmts = append(stmts, stmt{ix.sql(ix.table, ix.name), rows[ix.table]})
	}
	slices.SortStableFunc(stmts, func(a, b stmt) int { return cmp.Compare(b.rows, a.rows) })
	var total int64
	for _, s := range stmts {
		sql = append(sql, s.sql)
		total += s.rows
	}
	serial = workers > 1 && len(stmts) >= workers && stmts[0].rows*int64(workers) <= 2*total
	return sql, serial
}

// attachSQL adds order_line's primary key to the partitioned table itself, where it
// starts invalid, and attaches the partitions' keys, which makes it valid.
func attachSQL(partitions int) string {
	for _, ix := range keys {
		if ix.table != "order_line" {
			continue
		}
		stmts := []string{"alter table only order_line add constraint " + ix.name + " primary key (" + ix.columns + ")"}
		for r := range partitions {
			stmts = append(stmts, "alter index "+ix.name+" attach partition "+partitionName(r)+"_pkey")
		}
		return strings.Join(stmts, ";\n")
	}
	return ""
}

// analyzeParent gathers a partitioned table's own statistics, sampled from its
// partitions, once these have been analyzed. ANALYZE ONLY (PostgreSQL 18) leaves the
// partitions alone; older servers reject the syntax and analyze them once more.
func analyzeParent(ctx context.Context, conn *pgconn.PgConn, table string, j *load.Journal) error {
	err := j.Step(ctx, conn, "analyze only "+table)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42601" { // syntax_error
		err = j.Step(ctx, conn, "analyze "+table)
	}
	return err
}
