package load_test

import (
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/spf13/pflag"
)

// TestShardingFlags reads init's --jobs, --shard and --finish as every workload
// binds them, and the mistakes in them.
func TestShardingFlags(t *testing.T) {
	for _, tc := range []struct {
		name          string
		args          []string
		err           string
		workers       int
		shard, shards int
		sharded       bool
	}{
		{"defaults", nil, "", 2, 0, 0, false},
		{"jobs=4", []string{"-j", "4"}, "", 4, 0, 0, false},
		{"shard=2/4", []string{"--shard", "2/4", "--jobs", "3"}, "", 3, 2, 4, true},
		{"finish", []string{"--finish"}, "", 2, 0, 0, true},
		{"jobs=0", []string{"--jobs", "0"}, "jobs must be at least 1, got 0", 0, 0, 0, false},
		{"shard=4/4", []string{"--shard", "4/4"}, `--shard "4/4": give this process's index from 0`, 2, 0, 0, false},
		{"shard=1/2/finish", []string{"--shard", "1/2", "--finish"}, "--shard loads one share and --finish ends the load: give one or the other", 2, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := load.Sharding{Workers: 2}
			fs := pflag.NewFlagSet("init", pflag.ContinueOnError)
			s.BindFlags(fs, "warehouses", "build the keys")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := s.Read()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Read() = %v, want an error saying %q", err, tc.err)
			}
			if s.Workers != tc.workers || s.Shard != tc.shard || s.Shards != tc.shards || s.Sharded() != tc.sharded {
				t.Errorf("Read() gives %d workers, shard %d/%d, sharded %t; want %d, %d/%d, %t",
					s.Workers, s.Shard, s.Shards, s.Sharded(), tc.workers, tc.shard, tc.shards, tc.sharded)
			}
		})
	}
}

// TestShardingInCode: options set in code rather than by flags are taken as they
// are; the loaders give 0 connections their default.
func TestShardingInCode(t *testing.T) {
	s := load.Sharding{Shard: 1, Shards: 3}
	if err := s.Read(); err != nil || s.Shard != 1 || s.Shards != 3 || !s.Sharded() {
		t.Errorf("Read() = %v, shard %d/%d, sharded %t; want nil, 1/3, true", err, s.Shard, s.Shards, s.Sharded())
	}
	if o := s.Options(true); o != (load.Options{Resume: true, Shard: 1, Shards: 3}) {
		t.Errorf("Options(true) = %+v", o)
	}
}
