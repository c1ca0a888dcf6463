package load

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Share is one machine's part of a load spread over several (init --shard i/N):
// shard Shard of Shards copies its range of the data's Units (TPC-C's warehouses,
// TPC-B's branches) into tables the first shard to come creates, every shard
// recording its copies in one journal; the finish then checks that every share is
// there before it builds the keys once. Every row is a function of its number, so
// the shares together are row for row a single load.
type Share struct {
	Shard, Shards int
	Units         int
}

// ShardParams are the options a sharded load's journal is kept under: every
// shard and the finish give the same.
func ShardParams(params string, shards int) string {
	return fmt.Sprintf("%s shards=%d", params, shards)
}

// Tasks are the share's copies of srcs, whose batches must never straddle two
// units; whole sources (whole returns true: TPC-C's items) are shard 0's alone.
func (s Share) Tasks(srcs []*Source, whole func(*Source) bool) []Task {
	lo, hi := int64(s.Shard*s.Units/s.Shards), int64((s.Shard+1)*s.Units/s.Shards)
	var tasks []Task
	for _, src := range srcs {
		if whole != nil && whole(src) {
			if s.Shard == 0 {
				tasks = append(tasks, Task{Source: src, Table: src.Table, Last: src.Batches()})
			}
			continue
		}
		per := src.Rows / int64(s.Units) / src.BatchRows // batches per unit
		tasks = append(tasks, Task{Source: src, Table: src.Table, First: lo * per, Last: hi * per})
	}
	return tasks
}

// Whole are the share's copies when each source is a unit of its own (sysbench's
// tables): the share's sources, each a task.
func (s Share) Whole(srcs []*Source) []Task {
	lo, hi := s.Shard*len(srcs)/s.Shards, (s.Shard+1)*len(srcs)/s.Shards
	var tasks []Task
	for _, src := range srcs[lo:hi] {
		tasks = append(tasks, Task{Source: src, Table: src.Table, Last: src.Batches()})
	}
	return tasks
}

// Describe names the share for people: "2 to 3 of 4".
func (s Share) Describe() string {
	return fmt.Sprintf("%d to %d of %d", s.Shard*s.Units/s.Shards+1, (s.Shard+1)*s.Units/s.Shards, s.Units)
}

func shareLock(workload string) string {
	h := fnv.New64a()
	h.Write([]byte("pgbakeoff sharded load " + workload))
	return strconv.FormatInt(int64(h.Sum64()>>1), 10)
}

// BeginShare returns the journal of the sharded load of workload with params
// (ShardParams), creating it and the tables (schema, which marks marked as
// loading) if this shard is the first to come, with values kept for the others
// (the load's time). Tables that are not such a load's are refused, untouched.
func BeginShare(ctx context.Context, conn *pgconn.PgConn, workload, params, marked, schema string, values map[string]string) (j *Journal, err error) {
	if err := ExecSQL(ctx, conn, "select pg_advisory_lock("+shareLock(workload)+")"); err != nil {
		return nil, err
	}
	defer func() {
		if uerr := ExecSQL(context.Background(), conn, "select pg_advisory_unlock("+shareLock(workload)+")"); err == nil {
			err = uerr
		}
	}()
	if j, err = ResumeJournal(ctx, conn, workload, params); err != nil {
		return nil, err
	}
	if j != nil {
		// Joined; but the first shard may have died between starting the journal
		// and making the tables: what it did not finish is done now.
		return j, keepAndCreate(ctx, conn, j, schema, values)
	}
	res, err := conn.Exec(ctx, "select to_regclass("+quoteLiteral(qualified(marked))+") is not null").ReadAll()
	if err != nil {
		return nil, err
	}
	if string(res[0].Rows[0][0]) == "t" {
		return nil, fmt.Errorf("the database holds %s tables that are not a sharded load of these options (%s): drop them, or give every shard the options of the load under way",
			workload, params)
	}
	if j, err = StartJournal(ctx, conn, workload, params); err != nil {
		return nil, err
	}
	return j, keepAndCreate(ctx, conn, j, schema, values)
}

// keepAndCreate keeps the values the journal lacks and makes the tables unless it
// made them before.
func keepAndCreate(ctx context.Context, conn *pgconn.PgConn, j *Journal, schema string, values map[string]string) error {
	for k, v := range values {
		if j.Value(k) == "" {
			if err := j.Keep(ctx, conn, k, v); err != nil {
				return err
			}
		}
	}
	if err := j.Step(ctx, conn, schema); err != nil {
		return fmt.Errorf("create tables: %w", err)
	}
	return nil
}

// FinishShare returns the journal of the sharded load of workload whose options
// are params (without the shard count, which the journal holds) once every share's
// copies are done; tasks gives a share's copies. It names the shards missing.
func FinishShare(ctx context.Context, conn *pgconn.PgConn, workload, params, init string, tasks func(Share) []Task, units int) (*Journal, error) {
	st, err := ReadJournal(ctx, conn, workload)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("no sharded %s load to finish here: load each share with `%s --shard i/N` first", workload, init)
	}
	prefix, n, ok := strings.Cut(st.Params, " shards=")
	shards, err := strconv.Atoi(n)
	if !ok || err != nil || prefix != params {
		return nil, fmt.Errorf("the load under way here has other options (%s) than these (%s): give --finish the shards' options", st.Params, params)
	}
	j, err := ResumeJournal(ctx, conn, workload, st.Params)
	if err != nil || j == nil {
		return nil, fmt.Errorf("no sharded %s load to finish here: %v", workload, err)
	}
	var missing []string
	for s := range shards {
		for _, t := range tasks(Share{Shard: s, Shards: shards, Units: units}) {
			if !j.Done(taskStep(t)) {
				missing = append(missing, fmt.Sprintf("%d/%d", s, shards))
				break
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shard %s has not finished copying its share: run `%s --shard i/%d` for it (it goes on where it stopped), then --finish",
			strings.Join(missing, ", "), init, shards)
	}
	return j, nil
}
