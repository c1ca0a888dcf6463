package load

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Plan is a workload's data as the workload declares it: its tables, the rows
// that fill them (copy tasks over Sources), and what follows the copies. Load
// runs it: the journal, the old tables moved aside, COPY over parallel
// connections, the steps after and the loaded mark; alone, or as one share of a
// load spread over several machines, or as the finish of such a load.
type Plan struct {
	// Workload names the load in the journal. Params are the options that shape
	// the data and how its load is cut into steps (a load resumes only under the
	// same ones); SharedParams those every shard of a spread load gives alike (the
	// data's, not how many connections each machine loads over).
	Workload, Params, SharedParams string
	// Init is the command that makes this data, for messages.
	Init string
	// Marked is the table that carries the mark of a load not yet finished
	// (schema.table when it is not in the search path).
	Marked string
	// Schema is the DDL that creates the tables, for the server behind conn.
	Schema func(conn *pgconn.PgConn) []string
	// Unlogged data keeps no journal: a crash empties it.
	Unlogged bool
	// Values are kept in the journal when the load begins, for a resumed load
	// and the other shards to read back (Journal.Value).
	Values map[string]string
	// Clear removes an earlier load's tables (ClearPhase names its phase, ""
	// for moving them aside). Aside says it moves them aside (DropAside): then a
	// resumed load drops what an earlier attempt left aside.
	Clear      func(ctx context.Context, conn *pgconn.PgConn, connect Connector) (*Dropping, error)
	ClearPhase string
	Aside      bool
	// Copies are a whole load's tasks, over workers connections.
	Copies func(ctx context.Context, conn *pgconn.PgConn, j *Journal, workers int) ([]Task, error)
	// Shares cut a spread load: Sources, in batches that never straddle one of
	// Units units (nil j: the rows' contents do not matter, only their batches),
	// each a unit of its own when EachUnit (sysbench's tables), else Units ranges
	// of them, with the sources Whole returns true for copied by shard 0 alone.
	Sources  func(j *Journal) ([]*Source, error)
	Units    int
	EachUnit bool
	Whole    func(*Source) bool
	// After builds what follows the copies, tasks, alike after a single load and
	// at the finish of a spread one: keys, analyze, the loaded mark.
	After func(ctx context.Context, conn *pgconn.PgConn, j *Journal, phases *Phases, tasks []Task) error
}

// Options are how a load runs: over how many connections, resumed or not, and
// whether it is one share of a spread load (Shard of Shards) or its finish.
type Options struct {
	Workers       int
	Resume        bool
	Shard, Shards int
	Finish        bool
}

// Load makes the data p declares, as o says.
func Load(ctx context.Context, connect Connector, p *Plan, o Options, prog *Progress) (Phases, error) {
	switch {
	case o.Finish:
		return p.finish(ctx, connect, o)
	case o.Shards > 0:
		return p.share(ctx, connect, o, prog)
	}
	var phases Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var dropped *Dropping
	j, resumed, err := Begin(ctx, conn, &phases, Start{Workload: p.Workload, Params: p.Params,
		Resume: o.Resume, Unlogged: p.Unlogged, Schema: p.schema(conn), Values: p.Values, ClearPhase: p.ClearPhase,
		Clear: func() (err error) {
			dropped, err = p.Clear(ctx, conn, connect)
			return err
		}})
	if err != nil {
		return phases, err
	}
	if resumed && p.Aside {
		// Only schemas an earlier drop left behind go.
		if dropped, err = DropAside(ctx, conn, connect, nil, ""); err != nil {
			return phases, fmt.Errorf("drop old tables: %w", err)
		}
	}
	defer dropped.Wait(nil)
	tasks, err := p.Copies(ctx, conn, j, o.Workers)
	if err != nil {
		return phases, err
	}
	phases.Begin("copy")
	if err := Run(ctx, connect, tasks, o.Workers, prog, j); err != nil {
		return phases, err
	}
	if err := dropped.Wait(&phases); err != nil {
		return phases, err
	}
	if err := p.After(ctx, conn, j, &phases, tasks); err != nil {
		return phases, err
	}
	phases.End()
	return phases, nil
}

// schema is the DDL that creates the tables and marks the load unfinished.
func (p *Plan) schema(conn *pgconn.PgConn) string {
	return strings.Join(append(p.Schema(conn), MarkLoadingSQL(p.Marked)), ";\n")
}

// shareTasks are share s's copies of srcs.
func (p *Plan) shareTasks(s Share, srcs []*Source) []Task {
	if p.EachUnit {
		return s.Whole(srcs)
	}
	return s.Tasks(srcs, p.Whole)
}

// share copies shard o.Shard's share, creating the tables (and the journal) if
// it is the first shard to come.
func (p *Plan) share(ctx context.Context, connect Connector, o Options, prog *Progress) (Phases, error) {
	var phases Phases
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	phases.Begin("create tables")
	j, err := BeginShare(ctx, conn, p.Workload, ShardParams(p.SharedParams, o.Shards), p.Marked, p.schema(conn), p.Values)
	if err != nil {
		return phases, err
	}
	srcs, err := p.Sources(j)
	if err != nil {
		return phases, err
	}
	tasks := p.shareTasks(Share{Shard: o.Shard, Shards: o.Shards, Units: p.Units}, srcs)
	phases.Begin("copy")
	if err := Run(ctx, connect, tasks, o.Workers, prog, j); err != nil {
		return phases, err
	}
	phases.End()
	return phases, nil
}

// finish ends a spread load: once every share is found copied, it builds what a
// single load builds after its copies, journalled so that a finish run again
// goes on where it stopped.
func (p *Plan) finish(ctx context.Context, connect Connector, o Options) (Phases, error) {
	var phases Phases
	srcs, err := p.Sources(nil)
	if err != nil {
		return nil, err
	}
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var all []Task
	j, err := FinishShare(ctx, conn, p.Workload, p.SharedParams, p.Init, func(s Share) []Task {
		tasks := p.shareTasks(s, srcs)
		all = append(all, tasks...)
		return tasks
	}, p.Units)
	if err != nil {
		return nil, err
	}
	if err := p.After(ctx, conn, j, &phases, all); err != nil {
		return phases, err
	}
	phases.End()
	return phases, nil
}
