package tpcb

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// Sources describes the data of the three populated tables, row for row what
// `pgbench -i` writes: zero balances, NULL filler for branches and tellers, an empty
// (blank-padded) filler for accounts.
func Sources(scale int) (branches, tellers, accounts *load.Source) {
	branches = &load.Source{
		Table: "pgbench_branches", Rows: int64(scale) * BranchesPerScale, BatchRows: 1000,
		Append: func(buf []byte, first, last int64) []byte {
			for i := first; i < last; i++ {
				buf = strconv.AppendInt(buf, i+1, 10)
				buf = append(buf, "\t0\t\\N\n"...)
			}
			return buf
		},
	}
	tellers = &load.Source{
		Table: "pgbench_tellers", Rows: int64(scale) * TellersPerScale, BatchRows: 1000,
		Append: func(buf []byte, first, last int64) []byte {
			for i := first; i < last; i++ {
				buf = strconv.AppendInt(buf, i+1, 10)
				buf = append(buf, '\t')
				buf = strconv.AppendInt(buf, i/TellersPerScale+1, 10)
				buf = append(buf, "\t0\t\\N\n"...)
			}
			return buf
		},
	}
	accounts = &load.Source{
		Table: "pgbench_accounts", Rows: int64(scale) * AccountsPerScale, BatchRows: 5000,
		Append: appendAccounts, Binary: true,
	}
	if scale >= bigintScale {
		accounts.Append = appendAccounts64
	}
	return branches, tellers, accounts
}

// appendAccounts writes accounts rows in binary COPY format: four fields, aid and bid
// as int4, abalance 0, and an empty filler that the server pads as it does for text.
func appendAccounts(buf []byte, first, last int64) []byte {
	for i := first; i < last; i++ {
		buf = append(buf, 0, 4, 0, 0, 0, 4)
		buf = binary.BigEndian.AppendUint32(buf, uint32(i+1))
		buf = append(buf, 0, 0, 0, 4)
		buf = binary.BigEndian.AppendUint32(buf, uint32(i/AccountsPerScale+1))
		buf = append(buf, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	return buf
}

// appendAccounts64 is appendAccounts with aid as int8, for scales of 20,000 and up.
func appendAccounts64(buf []byte, first, last int64) []byte {
	for i := first; i < last; i++ {
		buf = append(buf, 0, 4, 0, 0, 0, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(i+1))
		buf = append(buf, 0, 0, 0, 4)
		buf = binary.BigEndian.AppendUint32(buf, uint32(i/AccountsPerScale+1))
		buf = append(buf, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	return buf
}

// Load drops and recreates the pgbench tables, fills them over opt.Workers parallel
// COPY connections, then vacuums, analyzes and adds keys as `pgbench -i` does. With
// opt.Resume it goes on with a load of the same options that did not finish, doing
// only the steps its journal lacks. Spread over machines (load.Share), each shard
// copies its branches, with their tellers and accounts, into tables the first
// shard creates, and --finish vacuums and builds the keys once every share is there.
func Load(ctx context.Context, connect load.Connector, opt LoadOptions, p *load.Progress) (load.Phases, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	plan := &load.Plan{Workload: JournalName, Params: opt.Params(), SharedParams: opt.shardParams(),
		Init: fmt.Sprintf("init tpcb --scale %d", opt.Scale), Marked: "pgbench_branches", Unlogged: opt.Unlogged,
		Schema: func(conn *pgconn.PgConn) []string { return ddl(opt, serverMajor(conn)) },
		Clear: func(ctx context.Context, conn *pgconn.PgConn, connect load.Connector) (*load.Dropping, error) {
			return load.DropAside(ctx, conn, connect, []string{"pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"}, dropTables)
		},
		Aside: true,
		Copies: func(_ context.Context, conn *pgconn.PgConn, _ *load.Journal, _ int) ([]load.Task, error) {
			freeze := serverMajor(conn) >= 14 // COPY FREEZE after TRUNCATE in the same transaction
			branches, tellers, accounts := Sources(opt.Scale)
			tasks := []load.Task{
				{Source: branches, Table: branches.Table, Last: branches.Batches(), Freeze: freeze},
				{Source: tellers, Table: tellers.Table, Last: tellers.Batches(), Freeze: freeze},
			}
			return append(tasks, accountTasks(accounts, opt, freeze)...), nil
		},
		Sources: func(*load.Journal) ([]*load.Source, error) { return shardSources(opt.Scale), nil },
		Units:   opt.Scale,
		// Vacuum before keys, as pgbench does, each table on its own connection.
		After: func(ctx context.Context, conn *pgconn.PgConn, j *load.Journal, phases *load.Phases, _ []load.Task) error {
			return afterCopy(ctx, connect, conn, opt, j, phases)
		}}
	return load.Load(ctx, connect, plan, opt.Options(opt.Resume), p)
}

// afterCopy vacuums and analyzes, then adds the keys, as `pgbench -i` does once
// its rows are in, and marks the data whole: the same whether one machine copied
// them or several.
func afterCopy(ctx context.Context, connect load.Connector, conn *pgconn.PgConn, opt LoadOptions, j *load.Journal, phases *load.Phases) error {
	phases.Begin("vacuum analyze")
	if err := load.Exec(ctx, connect, []string{
		"vacuum analyze pgbench_accounts", "vacuum analyze pgbench_branches",
		"vacuum analyze pgbench_tellers", "vacuum analyze pgbench_history",
	}, opt.Workers, j); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	phases.Begin("primary keys")
	var keys []string
	for _, k := range primaryKeys {
		keys = append(keys, k.sql)
	}
	if err := load.Exec(ctx, connect, keys, opt.Workers, j); err != nil {
		return fmt.Errorf("primary keys: %w", err)
	}
	if opt.ForeignKeys {
		phases.Begin("foreign keys")
		for _, s := range foreignKeys {
			if err := j.Step(ctx, conn, s); err != nil {
				return fmt.Errorf("foreign keys: %w", err)
			}
		}
	}
	return load.MarkLoaded(ctx, conn, "pgbench_branches", "", j)
}

// accountTasks splits pgbench_accounts across workers. A range-partitioned table loads
// one partition per task, each frozen. An unpartitioned table loads in one frozen
// stream where the server can freeze: parallel streams cannot freeze (only the
// transaction that created the table may), and the VACUUM that must then visit every
// page cost more than the parallel COPY saved (scale 100 on 2 cores: copy 3.4 s and
// vacuum 3.2 s in two streams, against 5.1 s and 0.2 s in one).
func accountTasks(s *load.Source, opt LoadOptions, freeze bool) []load.Task {
	if opt.Partitions > 0 && opt.PartitionMethod == "range" {
		size := (s.Rows + int64(opt.Partitions) - 1) / int64(opt.Partitions)
		var tasks []load.Task
		for p := int64(0); p < int64(opt.Partitions); p++ {
			first, last := p*size, min((p+1)*size, s.Rows)
			if first >= last {
				continue
			}
			part := *s
			part.Rows = last - first
			base := first
			gen := s.Append
			part.Append = func(buf []byte, f, l int64) []byte { return gen(buf, base+f, base+l) }
			tasks = append(tasks, load.Task{Source: &part, Table: fmt.Sprintf("pgbench_accounts_%d", p+1), Last: part.Batches(), Freeze: freeze})
		}
		return tasks
	}
	if opt.Partitions == 0 && (freeze || opt.Workers <= 1) {
		return []load.Task{{Source: s, Table: s.Table, Last: s.Batches(), Freeze: freeze}}
	}
	return load.Split(s, opt.Workers*2)
}

func serverMajor(conn *pgconn.PgConn) int {
	v, _ := strconv.Atoi(conn.ParameterStatus("server_version_num"))
	if v == 0 {
		// server_version_num is reported from PostgreSQL 16 on; older ones report server_version.
		s := conn.ParameterStatus("server_version")
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	return v / 10000
}
