package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// Two processes with the environment a Kubernetes Indexed Job gives its pods run
// the shards of one run: each runs its half of the clients, numbered as one
// process numbers them, and both begin at the instant given, their intervals on
// the same instants; shard 0 alone reads the server, and neither takes the
// other's sessions or commits for other work in the database.
func TestShardsFromJobEnvironment(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	pgtest.Query(t, dsn, "create table seen (client int, shard text)")
	script := filepath.Join(dir, "seen.sql")
	writeFile(t, script, "insert into seen values (:client_id, :'shard');\n")
	start := time.Now().Add(8 * time.Second).UTC().Truncate(time.Millisecond)
	type out struct {
		RunID   int64 `json:"run_id"`
		Clients int   `json:"clients"`
		Flags   []struct {
			Name    string `json:"name"`
			Invalid bool   `json:"invalid"`
			Reason  string `json:"reason"`
		} `json:"flags"`
	}
	outs := make([]out, 2)
	cmds := make([]*exec.Cmd, 2)
	stdouts := make([]*strings.Builder, 2)
	for i := range 2 {
		args := []string{"run", "pgbench", "-f", script, "-D", fmt.Sprintf("shard=s%d", i), "--clients", "5", "--warmup", "1s", "--duration", "2s",
			"--json", "--results", filepath.Join(dir, fmt.Sprintf("shard%d.db", i)), "--dsn", dsn}
		encoded, _ := json.Marshal(args)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
		cmd.Env = append(os.Environ(), childArgsEnv+"="+string(encoded), "JOB_COMPLETION_INDEX="+fmt.Sprint(i),
			"PGBAKEOFF_SHARDS=2", "PGBAKEOFF_START_AT="+start.Format(time.RFC3339Nano))
		stdouts[i] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = stdouts[i], stdouts[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, stdouts[i])
		}
		text := stdouts[i].String()
		if err := json.Unmarshal([]byte(text[strings.Index(text, "{\n"):]), &outs[i]); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, text)
		}
	}
	// Clients 0-1 are shard 0's and 2-4 shard 1's, as one process of 5 numbers them.
	rows := pgtest.Query(t, dsn, "select string_agg(distinct client::text || shard, ' ' order by client::text || shard) from seen")
	if rows != "0s0 1s0 2s1 3s1 4s1" {
		t.Errorf("clients by shard: %q, want 0s0 1s0 2s1 3s1 4s1", rows)
	}
	for i, o := range outs {
		t.Logf("shard %d: run %d, %d clients, flags %+v", i, o.RunID, o.Clients, o.Flags)
		if o.Clients != []int{2, 3}[i] {
			t.Errorf("shard %d ran %d clients, want %d", i, o.Clients, []int{2, 3}[i])
		}
		var names []string
		for _, f := range o.Flags {
			names = append(names, f.Name)
			if f.Invalid {
				t.Errorf("shard %d flagged invalid: %s: %s\n%s", i, f.Name, f.Reason, stdouts[i])
			}
		}
		if !slices.Contains(names, "shard") {
			t.Errorf("shard %d has no shard note: %v", i, names)
		}
		st, err := store.OpenReadOnly(context.Background(), filepath.Join(dir, fmt.Sprintf("shard%d.db", i)))
		if err != nil {
			t.Fatal(err)
		}
		rd, err := st.Run(context.Background(), o.RunID)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rd.Labels["shard"] != fmt.Sprintf("%d/2", i) || rd.Labels["shard_group"] != "pgbench@"+start.Format(time.RFC3339Nano) {
			t.Errorf("shard %d labels %v", i, rd.Labels)
		}
		// The warm-up began at the instant given, and every interval is a whole
		// second from it.
		if len(rd.Intervals) == 0 || !rd.Intervals[0].Start.Equal(start) {
			t.Errorf("shard %d: first interval %+v, want it to start at %s", i, rd.Intervals, start)
		}
		// Shard 0 read the server's counters around the run; shard 1 left them to it.
		if got, want := len(rd.ServerStats) > 0, i == 0; got != want {
			t.Errorf("shard %d stored %d readings of the server's counters", i, len(rd.ServerStats))
		}
	}
}
