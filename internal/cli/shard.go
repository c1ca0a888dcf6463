package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/spf13/pflag"
)

// shardFlags are `run`'s flags for one shard of a run spread over several
// processes: --shard i/N, --start-at and --shard-group.
type shardFlags struct {
	shard, startAt, group string
	timeout               time.Duration
}

// The environment a Kubernetes Indexed Job gives each pod: its index, and the
// shard count the manifest passes on (a pod is not told the Job's completions).
const (
	envJobIndex   = "JOB_COMPLETION_INDEX"
	envShardCount = "PGBAKEOFF_SHARDS"
	envShardStart = "PGBAKEOFF_START_AT"
	envShardGroup = "PGBAKEOFF_SHARD_GROUP"
)

func bindShard(fs *pflag.FlagSet) *shardFlags {
	f := &shardFlags{}
	fs.StringVar(&f.shard, "shard", "", "run shard i of N of a run spread over N processes, as 2/4 (default in a Kubernetes Indexed Job: "+envJobIndex+"/"+envShardCount+")")
	fs.StringVar(&f.startAt, "start-at", "", "with --shard: the instant every shard begins its warm-up, the same on each machine, as 2026-01-02T15:04:05Z (or "+envShardStart+"); without it the shards meet in the results store")
	fs.StringVar(&f.group, "shard-group", "", "with --shard: a name for the whole run, the same on each shard (default with --start-at: the workload and that instant; or "+envShardGroup+")")
	durationVar(fs, &f.timeout, "shard-timeout", "", 5*time.Minute, "with --shard and no --start-at: how long to wait in the results store for the other shards before the run fails")
	return f
}

// settle sets spec's shard from the flags or, without --shard, from a Job's
// environment.
func (f *shardFlags) settle(spec *engine.Spec, getenv func(string) string) error {
	shard, startAt, group := f.shard, f.startAt, f.group
	if shard == "" && getenv(envJobIndex) != "" {
		n := getenv(envShardCount)
		if n == "" {
			return fmt.Errorf("%s is set but %s is not: give the pods the Job's completions as %s, or run with --shard i/N", envJobIndex, envShardCount, envShardCount)
		}
		shard = getenv(envJobIndex) + "/" + n
	}
	if startAt == "" {
		startAt = getenv(envShardStart)
	}
	if group == "" {
		group = getenv(envShardGroup)
	}
	if shard == "" {
		if f.startAt != "" || f.group != "" {
			return fmt.Errorf("--start-at and --shard-group go with --shard i/N")
		}
		return nil
	}
	s, err := engine.ParseShard(shard)
	if err != nil {
		return err
	}
	spec.Shard, spec.ShardGroup, spec.ShardTimeout = s, strings.TrimSpace(group), f.timeout
	if startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(startAt))
		if err != nil {
			return fmt.Errorf("--start-at %q: give an instant with its zone, as 2026-01-02T15:04:05Z", startAt)
		}
		spec.StartAt = t
	}
	if len(spec.ShardGroup) > 200 || strings.ContainsAny(spec.ShardGroup, "\n\r") {
		return fmt.Errorf("--shard-group: give a name of one line, at most 200 characters (got %s)", strconv.Quote(spec.ShardGroup))
	}
	return nil
}
