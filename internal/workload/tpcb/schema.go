package tpcb

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// Per unit of scale, as in TPC-B clause 4.2 and pgbench: one branch, ten tellers,
// 100,000 accounts.
const (
	BranchesPerScale = 1
	TellersPerScale  = 10
	AccountsPerScale = 100_000

	// From this scale on, aid no longer fits an int and pgbench declares it bigint.
	bigintScale = 20_000
)

// Tables in the order pgbench creates them.
var Tables = []string{"pgbench_history", "pgbench_tellers", "pgbench_accounts", "pgbench_branches"}

// LoadOptions are pgbench -i's options that shape the schema and data.
type LoadOptions struct {
	Scale           int
	FillFactor      int    // 10..100, default 100
	Partitions      int    // pgbench_accounts partitions, 0 for none
	PartitionMethod string // "range" (default when Partitions > 0) or "hash"
	Unlogged        bool
	ForeignKeys     bool
	// Resume goes on with an unfinished load of the same options instead of
	// starting over; without one to go on with, the load starts over.
	Resume bool
	// Sharding: over how many connections (Workers, at least 1), and whether
	// as shard Shard's share of the branches of a load spread over Shards
	// machines, or (Finish) vacuuming and building the keys of one whose shares
	// are all copied (see shard.go).
	load.Sharding
}

// JournalName names TPC-B's loads in the load journal.
const JournalName = "tpcb"

// Params are the options that shape the data and how its load is cut into steps,
// as the load journal keeps them: a load resumes only under the same ones.
func (o LoadOptions) Params() string {
	return fmt.Sprintf("scale=%d fillfactor=%d partitions=%d partition-method=%s unlogged=%t foreign-keys=%t jobs=%d",
		o.Scale, o.FillFactor, o.Partitions, o.PartitionMethod, o.Unlogged, o.ForeignKeys, o.Workers)
}

// Validate checks the options and fills defaults.
func (o *LoadOptions) Validate() error {
	if err := o.Read(); err != nil {
		return err
	}
	if o.Scale < 1 {
		return engine.FieldErrorf("scale", "must be at least 1, got %d", o.Scale)
	}
	if int64(o.Scale)*AccountsPerScale > 1<<62 {
		return engine.FieldErrorf("scale", "%d is too large", o.Scale)
	}
	if o.FillFactor == 0 {
		o.FillFactor = 100
	}
	if o.FillFactor < 10 || o.FillFactor > 100 {
		return engine.FieldErrorf("fillfactor", "must be between 10 and 100, got %d", o.FillFactor)
	}
	if o.Partitions < 0 {
		return engine.FieldErrorf("partitions", "must be 0 or more, got %d", o.Partitions)
	}
	switch o.PartitionMethod {
	case "":
		o.PartitionMethod = "range"
	case "range", "hash":
	default:
		return engine.FieldErrorf("partition_method", "must be range or hash, got %q", o.PartitionMethod)
	}
	if o.Workers < 1 {
		o.Workers = 1
	}
	switch {
	case (o.Shards > 0 || o.Finish) && o.Unlogged:
		return engine.FieldErrorf("unlogged", "is not for a load spread over machines: a crash would empty tables whose shares the journal counts as copied")
	case o.Shards > o.Scale:
		return fmt.Errorf("%d shards for scale %d: each shard loads at least one branch", o.Shards, o.Scale)
	}
	return nil
}

// ddl returns the statements that create the tables, as pgbench declares them, for
// a server of major version major. PostgreSQL 18 refuses an unlogged partitioned
// table, whose persistence never reached its partitions anyway: there the parent
// is logged and each partition unlogged, as pgbench makes them.
func ddl(o LoadOptions, major int) []string {
	aid := "int"
	if o.Scale >= bigintScale {
		aid = "bigint"
	}
	create := "create table "
	if o.Unlogged {
		create = "create unlogged table "
	}
	ff := " with (fillfactor=" + strconv.Itoa(o.FillFactor) + ")"
	stmts := []string{
		create + "pgbench_history(tid int,bid int,aid " + aid + ",delta int,mtime timestamp,filler char(22))",
		create + "pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84))" + ff,
	}
	parent := create
	if o.Partitions > 0 && major >= 18 {
		parent = "create table "
	}
	accounts := parent + "pgbench_accounts(aid " + aid + " not null,bid int,abalance int,filler char(84))"
	if o.Partitions > 0 {
		accounts += " partition by " + o.PartitionMethod + " (aid)"
	} else {
		accounts += ff
	}
	stmts = append(stmts, accounts,
		create+"pgbench_branches(bid int not null,bbalance int,filler char(88))"+ff)
	naccounts := int64(o.Scale) * AccountsPerScale
	for p := 1; p <= o.Partitions; p++ {
		part := fmt.Sprintf("%spgbench_accounts_%d partition of pgbench_accounts ", create, p)
		if o.PartitionMethod == "range" {
			// pgbench's bounds: equal ranges, open at both ends.
			size := (naccounts + int64(o.Partitions) - 1) / int64(o.Partitions)
			lo, hi := "minvalue", "maxvalue"
			if p > 1 {
				lo = strconv.FormatInt(int64(p-1)*size+1, 10)
			}
			if p < o.Partitions {
				hi = strconv.FormatInt(int64(p)*size+1, 10)
			}
			part += "for values from (" + lo + ") to (" + hi + ")"
		} else {
			part += fmt.Sprintf("for values with (modulus %d, remainder %d)", o.Partitions, p-1)
		}
		stmts = append(stmts, part+ff)
	}
	return stmts
}

const dropTables = "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"

var primaryKeys = []struct{ table, sql string }{
	{"pgbench_branches", "alter table pgbench_branches add primary key (bid)"},
	{"pgbench_tellers", "alter table pgbench_tellers add primary key (tid)"},
	{"pgbench_accounts", "alter table pgbench_accounts add primary key (aid)"},
}

var foreignKeys = []string{
	"alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
	"alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
	"alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
	"alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
	"alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
}

// ErrNotLoaded means the pgbench tables are missing.
var ErrNotLoaded = errors.New("the pgbench tables are missing")

// DetectScale reads the scale of a loaded database the way pgbench does: the number
// of branches. It also checks that the other tables agree, so a half-finished load is
// not mistaken for a good one.
func DetectScale(ctx context.Context, conn *pgconn.PgConn) (int, error) {
	if unfinished, err := load.Unfinished(ctx, conn, "pgbench_branches"); err != nil {
		return 0, err
	} else if unfinished {
		return 0, fmt.Errorf("%w: the pgbench tables were being loaded when the load stopped; run init again", load.ErrUnfinished)
	}
	res, err := conn.Exec(ctx, `select (select count(*) from pgbench_branches),
		(select count(*) from pgbench_tellers),
		exists (select 1 from pgbench_accounts where aid = (select count(*) from pgbench_branches) * 100000)`).ReadAll()
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return 0, ErrNotLoaded
		}
		return 0, fmt.Errorf("detect scale: %w", err)
	}
	row := res[0].Rows[0]
	branches, _ := strconv.Atoi(string(row[0]))
	tellers, _ := strconv.Atoi(string(row[1]))
	if branches == 0 {
		return 0, fmt.Errorf("pgbench_branches is empty: the load did not finish; run init again")
	}
	if tellers != branches*TellersPerScale || string(row[2]) != "t" {
		return 0, fmt.Errorf("the pgbench tables are incomplete (%d branches, %d tellers): the load did not finish; run init again", branches, tellers)
	}
	return branches, nil
}
