package load

import (
	"errors"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/spf13/pflag"
)

// Sharding is how a load runs, alike for every workload: over how many
// connections (init's -j/--jobs), and whether whole, as one machine's share of a
// load spread over several (--shard i/N), or as the finish of one (--finish). A
// workload's load options embed it, and its Dataset those options, so that every
// init binds, checks and reports these flags the same way.
type Sharding struct {
	Workers int // parallel loading connections
	// Shards, when above 0, loads shard Shard's share of a load spread over that
	// many machines; Finish does what follows the copies (keys, analyze) of one
	// whose shares are all copied.
	Shard, Shards int
	Finish        bool

	shard string // --shard as typed
	flags bool   // bound to init's flags, which Read checks
}

// BindFlags binds init's --jobs, --shard (a share of the data's units, as
// "warehouses") and --finish (which does after, as "build the keys").
func (s *Sharding) BindFlags(fs *pflag.FlagSet, units, after string) {
	s.flags = true
	fs.IntVarP(&s.Workers, "jobs", "j", s.Workers, "parallel loading connections")
	fs.StringVar(&s.shard, "shard", "", "load shard i of N of a load spread over N machines, as 2/4: its share of the "+units+", without keys; then --finish")
	fs.BoolVar(&s.Finish, "finish", false, "once every shard has loaded its share: "+after+", once")
}

// Read checks the flags BindFlags bound, once they are set: --jobs must be at
// least 1 (the loaders take 0 for their default, a user who types it means a
// mistake), and --shard i/N, read into Shard and Shards, goes without --finish.
// Options set in code rather than by flags are left as they are.
func (s *Sharding) Read() error {
	if !s.flags {
		return nil
	}
	if s.Workers < 1 {
		return engine.FieldErrorf("jobs", "must be at least 1, got %d", s.Workers)
	}
	s.Shard, s.Shards = 0, 0
	if s.shard == "" {
		return nil
	}
	if s.Finish {
		return errors.New("--shard loads one share and --finish ends the load: give one or the other")
	}
	sh, err := engine.ParseShard(s.shard)
	s.Shard, s.Shards = sh.Index, sh.Count
	return err
}

// Sharded tells that the load is one shard's share, or the finish of a sharded
// load, rather than a whole load.
func (s Sharding) Sharded() bool { return s.Shards > 0 || s.Finish }

// Options are Load's options for the load, resumed or not.
func (s Sharding) Options(resume bool) Options {
	return Options{Workers: s.Workers, Resume: resume, Shard: s.Shard, Shards: s.Shards, Finish: s.Finish}
}
