package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// ShardArrival is a shard of a run that has connected its clients and waits for
// the others, so that all begin together; its times are on the server's clock.
type ShardArrival struct {
	Shard, Shards     int
	Plan              string // what the shard runs, alike for every shard of a group
	Host              string
	PID               int
	Arrived, Deadline time.Time
}

// ErrShardTaken is wrapped by ArriveShard when the shard of that group arrived
// before: another process runs it, or the group's name is used again.
var ErrShardTaken = errors.New("shard arrived before")

// ArriveShard records that this process's shard of group, running plan, has
// arrived at at, and waits for the others until deadline.
func (s *Store) ArriveShard(ctx context.Context, group string, shard, shards int, plan string, at, deadline time.Time) error {
	host, _ := os.Hostname()
	res, err := s.db.ExecContext(ctx, `INSERT INTO shard_arrivals (grp, shard, shards, plan, host, pid, arrived, deadline) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (grp, shard) DO NOTHING`, group, shard, shards, plan, host, os.Getpid(), formatTime(at), formatTime(deadline))
	if err != nil {
		return fmt.Errorf("record shard %d/%d of %s: %w", shard, shards, group, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w: shard %d/%d of %s", ErrShardTaken, shard, shards, group)
	}
	return nil
}

// ShardArrivals are the shards of group that have arrived, by shard.
func (s *Store) ShardArrivals(ctx context.Context, group string) ([]ShardArrival, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT shard, shards, plan, host, pid, arrived, deadline FROM shard_arrivals WHERE grp = ? ORDER BY shard`, group)
	if err != nil {
		return nil, fmt.Errorf("read the shards of %s: %w", group, err)
	}
	defer rows.Close()
	var out []ShardArrival
	for rows.Next() {
		var a ShardArrival
		var at, until string
		if err := rows.Scan(&a.Shard, &a.Shards, &a.Plan, &a.Host, &a.PID, &at, &until); err != nil {
			return nil, fmt.Errorf("read the shards of %s: %w", group, err)
		}
		if a.Arrived, err = parseTime(at); err == nil {
			a.Deadline, err = parseTime(until)
		}
		if err != nil {
			return nil, fmt.Errorf("read the shards of %s: %w", group, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
