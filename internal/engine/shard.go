package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// Shards: a run spread over several processes, each with its share of the clients
// (Spec.Shard), all beginning at Spec.StartAt. Each stores a run of its own,
// labelled with the whole run's name and its place in it, for merging.

// flagShard notes that a run is one shard's part of a whole run.
const flagShard = "shard"

// maxClockOffset is how far a shard's clock may be from the server's before the
// run notes it: the shards' windows line up only as well as their clocks.
const maxClockOffset = 100 * time.Millisecond

// startMargin is how long after the last shard arrived they all begin: time for
// every waiting shard to see it.
const startMargin = 3 * time.Second

// rendezvous records this shard's arrival in the results store, its clients
// connected, and waits for the rest of its group: all begin startMargin after the
// last arrived, an instant every shard reads alike from the store. Times there are
// on the server's clock (this machine's plus clockOffset), so that machines whose
// clocks differ agree. A shard missing after ShardTimeout fails the run in every
// shard that waits for it, and a group whose shards did not all wait at once (one
// gave up before another came) does not start.
func (r *running) rendezvous(ctx context.Context) (time.Time, error) {
	spec, group := r.spec, r.spec.Group()
	server := func() time.Time { return time.Now().Add(r.clockOffset) }
	arrived := server()
	deadline := arrived.Add(spec.ShardTimeout)
	plan := r.shardPlan()
	if err := r.st.ArriveShard(ctx, group, spec.Shard.Index, spec.Shard.Count, plan, arrived, deadline); err != nil {
		if errors.Is(err, store.ErrShardTaken) {
			return time.Time{}, fmt.Errorf("%w: another process runs it, or the group's name was used before; give the run a new --shard-group", err)
		}
		return time.Time{}, err
	}
	fmt.Fprintf(r.env.Log, "shard %s of %s: waiting for the other shards in the results store\n", spec.Shard, group)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		as, err := r.st.ShardArrivals(ctx, group)
		if err != nil {
			return time.Time{}, err
		}
		var last time.Time
		earliest := deadline
		here := make([]bool, spec.Shard.Count)
		for _, a := range as {
			if a.Shards != spec.Shard.Count || a.Shard >= spec.Shard.Count {
				return time.Time{}, fmt.Errorf("shard %d/%d of %s arrived from %s (pid %d), but this one is of %d shards: give every shard the same count",
					a.Shard, a.Shards, group, a.Host, a.PID, spec.Shard.Count)
			}
			if a.Plan != plan && a.Plan != "" {
				return time.Time{}, fmt.Errorf("shard %d/%d of %s, from %s (pid %d), runs %s, but this one runs %s: give every shard the same options",
					a.Shard, a.Shards, group, a.Host, a.PID, a.Plan, plan)
			}
			here[a.Shard] = true
			if a.Arrived.After(last) {
				last = a.Arrived
			}
			if a.Deadline.Before(earliest) {
				earliest = a.Deadline
			}
		}
		var missing []string
		for i, ok := range here {
			if !ok {
				missing = append(missing, Shard{i, spec.Shard.Count}.String())
			}
		}
		switch {
		case last.After(earliest) || server().After(earliest) && len(as) < spec.Shard.Count && earliest.Before(deadline):
			why := "before every shard had come"
			if len(missing) > 0 {
				why = "before shard " + strings.Join(missing, ", ") + " came"
			}
			return time.Time{}, fmt.Errorf("a shard of %s gave up waiting at %s, %s: give the run a new --shard-group and start its shards again",
				group, earliest.Format(time.RFC3339), why)
		case len(as) == spec.Shard.Count:
			start := last.Add(startMargin).Add(-r.clockOffset) // on this machine's clock
			if p, ok := r.rec.Params["shard"].(map[string]any); ok {
				p["start_at"] = start.UTC().Format(time.RFC3339Nano)
			}
			return start, nil
		case server().After(deadline):
			return time.Time{}, fmt.Errorf("shard %s of %s did not arrive within %s: the run did not start; start every shard, or give a longer --shard-timeout",
				strings.Join(missing, ", "), group, spec.ShardTimeout)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// shardPlan says what this shard runs in words every shard of the group must
// share: the workload and its scripts, all the clients, the rate and the times.
func (r *running) shardPlan() string {
	spec := r.spec
	plan := fmt.Sprintf("%s %s with %d clients in all, warm-up %s, window %s", r.rec.Workload, r.rec.Script, spec.Clients, spec.Warmup, spec.Duration)
	if spec.Transactions > 0 {
		plan = fmt.Sprintf("%s %s with %d clients in all, warm-up %s, %d transactions a client", r.rec.Workload, r.rec.Script, spec.Clients, spec.Warmup, spec.Transactions)
	}
	if spec.Rate > 0 {
		plan += fmt.Sprintf(", at %g tx/s", spec.Rate)
	}
	return plan
}

// groupSeed is a number every shard of a run derives alike from its name: the
// seed of its clients' random streams when none is given, as one process's.
func groupSeed(group string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(group))
	return h.Sum64()
}

// shardParams measures this machine's clock against the server's and records the
// shard with the run: its labels and its clock.
func (r *running) shardParams(ctx context.Context, conn *pgconn.PgConn) error {
	spec := r.spec
	offset, rtt, err := clockOffset(ctx, conn)
	if err != nil {
		return fmt.Errorf("read the server's clock: %w", err)
	}
	r.clockOffset = offset
	first, clients, _ := spec.share()
	labels := maps.Clone(r.rec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels["shard"], labels["shard_group"] = spec.Shard.String(), spec.Group()
	r.rec.Labels = labels
	r.rec.Params["shard"] = map[string]any{"index": spec.Shard.Index, "count": spec.Shard.Count, "group": spec.Group(),
		"first_client": first, "clients": clients, "all_clients": spec.Clients, "rate": spec.Rate, "start_at": spec.StartAt.UTC().Format(time.RFC3339Nano),
		"clock_offset_ms": float64(offset) / 1e6, "clock_rtt_ms": float64(rtt) / 1e6}
	return nil
}

// clockOffset is how far the server's clock is ahead of this machine's, from the
// quickest of a few round trips (the server's reading taken at its middle), and
// that round trip.
func clockOffset(ctx context.Context, conn *pgconn.PgConn) (offset, rtt time.Duration, err error) {
	rtt = -1
	for range 5 {
		t0 := time.Now()
		rows, err := target.Query(ctx, conn, "select (extract(epoch from clock_timestamp()) * 1000000)::bigint")
		t1 := time.Now()
		if err != nil {
			return 0, 0, err
		}
		us, err := strconv.ParseInt(rows[0][0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("the server's clock read %q", rows[0][0])
		}
		if d := t1.Sub(t0); rtt < 0 || d < rtt {
			rtt = d
			offset = time.UnixMicro(us).Sub(t0.Add(d / 2))
		}
	}
	return offset, rtt, nil
}

// judgeShard notes a shard's run as a part of a whole, and a clock too far from
// the server's.
func judgeShard(e evidence) []Flag { // one flag: the store keeps one of each name
	if !e.shard.On() {
		return nil
	}
	reason := fmt.Sprintf("shard %s of %s: its figures are the part of its %s; `pgbakeoff merge` makes the whole run of its shards",
		e.shard, e.shardGroup, Plural(e.clients, "client"))
	if off := e.clockOffset; off > maxClockOffset || off < -maxClockOffset {
		reason += fmt.Sprintf("; this machine's clock is %s off the server's (more than %s): the shards' windows line up only as well as their clocks",
			off.Round(time.Millisecond), maxClockOffset)
	}
	return []Flag{{flagShard, false, reason}}
}
