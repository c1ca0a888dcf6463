package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// Two processes with the environment a Kubernetes Indexed Job gives its pods run
// the shards of one run: each runs its half of the clients, numbered as one
// process numbers them, and both begin at the instant given, their intervals on
// the same instants; shard 0 alone reads the server, and neither takes the
// other's sessions or commits for other work in the database.
func TestShardsFromJobEnvironment(t *testing.T) {
	pgtest.Long(t)
	t.Parallel() // waits for its shards' start, on a database of its own
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	pgtest.Query(t, dsn, "create table seen (client int, shard text)")
	script := filepath.Join(dir, "seen.sql")
	clitest.WriteFile(t, script, "insert into seen values (:client_id, :'shard');\n")
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
	cmds, stdouts := startShards(t, dir, start, "run", "pgbench", "-f", script, "--clients", "5", "--warmup", "1s", "--duration", "2s", "--json", "--dsn", dsn,
		"-l", "--log-prefix", filepath.Join(dir, "txlog"))
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, stdouts[i])
		}
		text := stdouts[i].String()
		clitest.FitsSchema(t, "run", []byte(text[strings.Index(text, "{\n"):]))
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

	// merge gathers both stores and makes the whole run: its transactions are the
	// shards', the server's commits agree with all the clients', and its latency
	// histogram is the sum of theirs, so its p99 is that of all transactions.
	all := filepath.Join(dir, "all.db")
	code, text, errOut := run(t, "merge", filepath.Join(dir, "shard0.db"), filepath.Join(dir, "shard1.db"), "-o", all)
	if code != 0 || !strings.Contains(text, "2 runs from 2 stores copied") || !strings.Contains(text, "merged from 2 shards") {
		t.Fatalf("merge: exit %d\n%s%s", code, text, errOut)
	}
	st, err := store.OpenReadOnly(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var whole *store.RunDetail
	sum := hdrFromShards(t, dir)
	var shardTx int64
	for _, id := range []int64{1, 2, 3} {
		d, err := st.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Labels["shards"] == "2" {
			whole = d
			continue
		}
		var s struct{ Transactions int64 }
		_ = json.Unmarshal(d.Summary, &s)
		shardTx += s.Transactions
	}
	if whole == nil {
		t.Fatal("no merged run in the output store")
	}
	var got struct {
		Clients      int `json:"clients"`
		Status       string
		Transactions int64 `json:"transactions"`
		CommitsTotal int64 `json:"commits_total"`
		Server       struct{ Commits int64 }
		LatencyMs    struct{ P99 float64 } `json:"latency_ms"`
		Flags        []struct {
			Name    string
			Invalid bool
			Reason  string
		}
	}
	if err := json.Unmarshal(whole.Summary, &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("merged: %+v", got)
	if got.Clients != 5 || got.Status != store.StatusCompleted || got.Transactions != shardTx || shardTx == 0 {
		t.Errorf("merged run: %d clients, %s, %d transactions; want 5, completed, the shards' %d", got.Clients, got.Status, got.Transactions, shardTx)
	}
	if d := got.Server.Commits - got.CommitsTotal; d > got.CommitsTotal/100 || -d > got.CommitsTotal/100 {
		t.Errorf("server commits %d against the clients' %d: more than 1%% apart", got.Server.Commits, got.CommitsTotal)
	}
	if p99 := float64(sum.ValueAtQuantile(99)) / 1000; got.LatencyMs.P99 != p99 {
		t.Errorf("merged p99 %.3f ms, want %.3f ms, the p99 of all the shards' transactions", got.LatencyMs.P99, p99)
	}
	// And from the shards' raw latencies, as their transaction logs have them (to
	// the microsecond, rounded, where the histogram truncates): one histogram of
	// every transaction of the window. The two p99s may be a bucket apart (a
	// bucket is 2 us wide from 2.048 ms, 4 us from 4.096 ms: at most 0.1% of the
	// value), so they must agree to 0.15% of the value, or 2 us below 1.3 ms.
	raw, n := rawWindowLatencies(t, dir, start.Add(time.Second), start.Add(3*time.Second))
	if p99 := float64(raw.ValueAtQuantile(99)) / 1000; math.Abs(got.LatencyMs.P99-p99) > max(0.002, p99*0.0015)+1e-9 || math.Abs(float64(n-got.Transactions)) > 2 {
		t.Errorf("merged p99 %.3f ms of %d transactions; the logs' p99 %.3f ms of %d", got.LatencyMs.P99, got.Transactions, p99, n)
	}
	for _, f := range got.Flags {
		if f.Invalid {
			t.Errorf("merged run flagged invalid: %s: %s", f.Name, f.Reason)
		}
	}
	// Merging again adds nothing; a store of one shard alone is refused whole.
	if code, text, errOut = run(t, "merge", filepath.Join(dir, "shard0.db"), filepath.Join(dir, "shard1.db"), "-o", all); code != 0 || !strings.Contains(text, "0 runs from 2 stores copied") || !strings.Contains(text, "merged before") {
		t.Errorf("merge again: exit %d\n%s%s", code, text, errOut)
	}
	code, text, errOut = run(t, "merge", filepath.Join(dir, "shard1.db"), "-o", filepath.Join(dir, "part.db"))
	if code == 0 || !strings.Contains(errOut, "lacks shard 0/2") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("merge of one shard: exit %d\n%s%s", code, text, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "part.db")); err == nil {
		t.Errorf("a refused merge wrote its output")
	}
}

// startShards starts two processes with the environment a Kubernetes Indexed
// Job gives its pods, each running args with its own results store
// (DIR/shardI.db) and the variable shard=sI.
func startShards(t *testing.T, dir string, start time.Time, args ...string) ([]*exec.Cmd, []*strings.Builder) {
	t.Helper()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := range 2 {
		a := append(slices.Clone(args), "-D", fmt.Sprintf("shard=s%d", i), "--results", filepath.Join(dir, fmt.Sprintf("shard%d.db", i)))
		cmd, out := startPod(t, i, 2, a, "PGBAKEOFF_START_AT="+start.Format(time.RFC3339Nano))
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	return cmds, outs
}

// startPod starts pgbakeoff with args in a process with the environment pod i of
// an Indexed Job of n completions has, and env besides.
func startPod(t *testing.T, i, n int, args []string, env ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := clitest.Command(t, args, append([]string{"JOB_COMPLETION_INDEX=" + fmt.Sprint(i), "PGBAKEOFF_SHARDS=" + fmt.Sprint(n)}, env...)...)
	b := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = b, b
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, b
}

// A shard killed in the middle of the window: the other's results are kept, and
// the merged run says it is incomplete and why.
func TestShardKilled(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "select.sql")
	clitest.WriteFile(t, script, "select :'shard';\n")
	start := time.Now().Add(6 * time.Second).UTC().Truncate(time.Millisecond)
	cmds, outs := startShards(t, dir, start, "run", "pgbench", "-f", script, "--clients", "2", "--warmup", "0s", "--duration", "4s", "--dsn", dsn)
	time.Sleep(time.Until(start.Add(2 * time.Second))) // mid-window, as both shards begin at start: the kill's place
	if err := cmds[1].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmds[1].Wait()
	if err := cmds[0].Wait(); err != nil {
		t.Fatalf("shard 0: %v\n%s", err, outs[0])
	}
	all := filepath.Join(dir, "all.db")
	code, text, errOut := run(t, "merge", filepath.Join(dir, "shard0.db"), filepath.Join(dir, "shard1.db"), "-o", all)
	if code != 0 || !strings.Contains(text, "INVALID: shard 1 (run 2) did not finish (interrupted): the transactions of its 1 client are missing") {
		t.Fatalf("merge: exit %d\n%s%s", code, text, errOut)
	}
	code, text, errOut = run(t, "runs", "--results", all)
	if code != 0 || !strings.Contains(text, "incomplete") {
		t.Errorf("runs: exit %d\n%s%s", code, text, errOut)
	}
}

// hdrFromShards adds up the shards' stored window histograms, read on their own.
func hdrFromShards(t *testing.T, dir string) *hdrhistogram.Histogram {
	t.Helper()
	all := histogram.New()
	for i := range 2 {
		st, err := store.OpenReadOnly(context.Background(), filepath.Join(dir, fmt.Sprintf("shard%d.db", i)))
		if err != nil {
			t.Fatal(err)
		}
		d, err := st.Run(context.Background(), 1)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		h, err := d.WindowLatency()
		if err != nil {
			t.Fatal(err)
		}
		all.Merge(h)
	}
	return all
}

// Shards given no start instant meet in their shared results store, here a
// PostgreSQL one, with the environment deploy/kubernetes's Job gives its pods:
// each records its arrival once its clients are connected, and all begin a moment
// after the last; merge then makes the whole run in place. A shard whose partner
// never comes fails once its timeout has passed, saying which shard is missing.
func TestShardsMeetInStore(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	results := pgtest.NewDatabase(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "select.sql")
	clitest.WriteFile(t, script, "select 1;\n")
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	const shards = 4
	for i := range shards {
		args := []string{"run", "pgbench", "-f", script, "--clients", "6", "--warmup", "0s", "--duration", "2s", "--dsn", dsn}
		cmd, out := startPod(t, i, shards, args, "PGBAKEOFF_SHARD_GROUP=meet", "PGBAKEOFF_RESULTS="+results)
		cmds, outs = append(cmds, cmd), append(outs, out)
		time.Sleep(500 * time.Millisecond) // each arrives later than the one before: the start waits for the last
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, outs[i])
		}
	}
	st, err := store.OpenReadOnly(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	var starts []time.Time
	for _, id := range []int64{1, 2, 3, 4} {
		d, err := st.Run(context.Background(), id)
		if err != nil || len(d.Intervals) == 0 {
			t.Fatalf("run %d: %v", id, err)
		}
		starts = append(starts, d.Intervals[0].Start)
	}
	st.Close()
	// The same instant on the server's clock, which each shard reads to within a
	// fraction of a round trip.
	for _, s := range starts[1:] {
		if d := s.Sub(starts[0]); d > 10*time.Millisecond || d < -10*time.Millisecond {
			t.Errorf("the shards began at %v, want the same instant", starts)
			break
		}
	}
	var shardTx int64
	code, text, errOut := run(t, "merge", "--results", results)
	if code != 0 || !strings.Contains(text, "run 5: meet, merged from 4 shards") {
		t.Fatalf("merge in place: exit %d\n%s%s", code, text, errOut)
	}
	// The whole run's transactions are the shards', and the server's commits agree
	// with all the clients' within 1%.
	var sum, whole struct {
		Transactions int64 `json:"transactions"`
		CommitsTotal int64 `json:"commits_total"`
		Server       struct{ Commits int64 }
		Flags        []struct {
			Name    string
			Invalid bool
		}
	}
	for id := 1; id <= 5; id++ {
		code, text, errOut = run(t, "show", fmt.Sprint(id), "--json", "--results", results)
		if code != 0 {
			t.Fatalf("show %d: exit %d\n%s", id, code, errOut)
		}
		if id == 5 {
			if err := json.Unmarshal([]byte(text), &whole); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := json.Unmarshal([]byte(text), &sum); err != nil {
			t.Fatal(err)
		}
		shardTx += sum.Transactions
	}
	if d := whole.Server.Commits - whole.CommitsTotal; whole.Transactions != shardTx || shardTx == 0 || d > whole.CommitsTotal/100 || -d > whole.CommitsTotal/100 {
		t.Errorf("merged: %d transactions (shards %d), server commits %d against the clients' %d", whole.Transactions, shardTx, whole.Server.Commits, whole.CommitsTotal)
	}
	for _, f := range whole.Flags {
		if f.Invalid {
			t.Errorf("merged run flagged invalid: %s", f.Name)
		}
	}
	if code, text, _ = run(t, "merge", "--results", results); code != 0 || !strings.Contains(text, "meet: merged before") {
		t.Errorf("merge in place again: exit %d\n%s", code, text)
	}

	code, text, errOut = run(t, "run", "pgbench", "-f", script, "--clients", "2", "--duration", "1s", "--dsn", dsn,
		"--results", results, "--shard", "0/2", "--shard-group", "alone", "--shard-timeout", "2s")
	if code == 0 || !strings.Contains(errOut, "shard 1/2 of alone did not arrive within 2s: the run did not start") {
		t.Errorf("a shard alone: exit %d\n%s%s", code, text, errOut)
	}
}

// init tpcc --shard loads a share of the warehouses, and --finish refuses until
// every share is there, then makes the database `check tpcc` passes.
func TestInitShards(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	if code, out, errOut := run(t, "init", "tpcc", "--warehouses", "2", "--shard", "1/2", "--dsn", dsn); code != 0 || !strings.Contains(errOut, "warehouses 2 to 2 of 2 (shard 1/2)") {
		t.Fatalf("shard 1/2: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := run(t, "init", "tpcc", "--warehouses", "2", "--finish", "--dsn", dsn)
	if code == 0 || !strings.Contains(errOut, "shard 0/2 has not finished") || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
		t.Fatalf("finish too early: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = run(t, "init", "tpcc", "--warehouses", "2", "--shard", "0/2", "--dsn", dsn); code != 0 {
		t.Fatalf("shard 0/2: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = run(t, "init", "tpcc", "--warehouses", "2", "--finish", "--dsn", dsn); code != 0 {
		t.Fatalf("finish: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = run(t, "check", "tpcc", "--dsn", dsn); code != 0 {
		t.Errorf("check tpcc: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = run(t, "init", "tpcc", "--warehouses", "2", "--shard", "2/2", "--dsn", dsn); code == 0 || !strings.Contains(errOut, "--shard") {
		t.Errorf("--shard 2/2: exit %d, %s", code, errOut)
	}
}

// rawWindowLatencies reads the shards' transaction logs (DIR/txlog.*, pgbench's
// format) into one histogram of the transactions that ended in [from, to).
func rawWindowLatencies(t *testing.T, dir string, from, to time.Time) (*hdrhistogram.Histogram, int64) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "txlog.*"))
	if len(files) != 2 {
		t.Fatalf("transaction logs %v, want one a shard", files)
	}
	h := histogram.New()
	var n int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			fs := strings.Fields(line)
			us, err1 := strconv.ParseInt(fs[2], 10, 64)
			sec, err2 := strconv.ParseInt(fs[4], 10, 64)
			frac, err3 := strconv.ParseInt(fs[5], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil {
				continue // failed or skipped
			}
			if at := time.UnixMicro(sec*1e6 + frac); !at.Before(from) && at.Before(to) {
				if err := h.RecordValue(max(us, 1)); err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
	}
	return h, n
}

// A shard group that cannot be merged (a shard missing) is named with the reason
// and does not keep the complete groups beside it from being merged; asking for
// it by name fails, and a store holding it alone is refused whole.
func TestMergeSkipsGroupThatCannotBeMerged(t *testing.T) {
	pgtest.Long(t)
	t.Parallel() // waits for its shards' start, on a database of its own
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "select.sql")
	clitest.WriteFile(t, script, "select 1;\n")
	start := time.Now().Add(8 * time.Second).UTC().Truncate(time.Millisecond)
	type shard struct{ group, shard, store string }
	shards := []shard{{"pg-one", "0/2", "a.db"}, {"pg-one", "1/2", "b.db"}, {"pg-two", "0/2", "c.db"}}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for _, s := range shards {
		cmd, out := startPod(t, 0, 1, []string{"run", "pgbench", "-f", script, "--clients", "2", "--warmup", "0s", "--duration", "1s",
			"--shard", s.shard, "--shard-group", s.group, "--start-at", start.Format(time.RFC3339Nano), "--dsn", dsn,
			"--results", filepath.Join(dir, s.store)})
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %v: %v\n%s", shards[i], err, outs[i])
		}
	}
	stores := []string{filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")}

	code, text, errOut := run(t, append([]string{"merge", "-o", filepath.Join(dir, "all.db")}, stores...)...)
	if code != 0 || !strings.Contains(text, "pg-two: not merged: ") || !strings.Contains(text, "lacks shard 1/2") ||
		!regexp.MustCompile(`run \d+: pg-one, merged from 2 shards`).MatchString(text) {
		t.Errorf("merge of a complete and an incomplete group: exit %d, want 0, pg-one merged and pg-two named\n%s%s", code, text, errOut)
	}
	code, text, errOut = run(t, append([]string{"merge", "--group", "pg-two", "-o", filepath.Join(dir, "two.db")}, stores...)...)
	if code == 0 || !strings.Contains(errOut, "--group pg-two cannot be merged") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("merge --group of the incomplete group: exit %d, want an error of one line\n%s%s", code, text, errOut)
	}
	code, text, errOut = run(t, "merge", "--group", "pg-three", "-o", filepath.Join(dir, "three.db"), stores[0])
	if code != 2 || !strings.Contains(errOut, "--group pg-three: no sharded run of that group") {
		t.Errorf("merge --group of an unknown group: exit %d, want 2\n%s%s", code, text, errOut)
	}
	for _, f := range []string{"two.db", "three.db"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("a refused merge wrote %s", f)
		}
	}
	// A store with a run of no shard group beside the incomplete group: the runs
	// are gathered, the group named.
	if code, text, errOut := run(t, "run", "pgbench", "-f", script, "--clients", "1", "--warmup", "0s", "--duration", "1s", "--dsn", dsn, "--results", stores[2]); code != 0 {
		t.Fatalf("a run of no shard group: exit %d\n%s%s", code, text, errOut)
	}
	code, text, errOut = run(t, "merge", "-o", filepath.Join(dir, "plain.db"), stores[2])
	if code != 0 || !strings.Contains(text, "2 runs from 1 stores copied") || !strings.Contains(text, "pg-two: not merged: ") {
		t.Errorf("merge of a plain run and an incomplete group: exit %d, want 0, both runs copied and pg-two named\n%s%s", code, text, errOut)
	}
}

// Shards of one group given different options are refused when they meet, each
// naming the other's, before either runs its window; a shard that never comes is
// named by the shard that gave up and by the one still waiting.
func TestShardsRefusedAtTheMeeting(t *testing.T) {
	pgtest.Long(t)
	t.Parallel() // waits on the shards' meeting, on a database of its own
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "select.sql")
	clitest.WriteFile(t, script, "select 1;\n")
	results := filepath.Join(dir, "meet.db")
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i, clients := range []string{"4", "6"} {
		args := []string{"run", "pgbench", "-f", script, "--clients", clients, "--warmup", "0s", "--duration", "30s", "--dsn", dsn,
			"--shard-timeout", "20s"}
		cmd, out := startPod(t, i, 2, args, "PGBAKEOFF_SHARD_GROUP=differ", "PGBAKEOFF_RESULTS="+results)
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	started := time.Now()
	for i, cmd := range cmds {
		err := cmd.Wait()
		if err == nil || !strings.Contains(outs[i].String(), "give every shard the same options") || !strings.Contains(outs[i].String(), "clients in all") {
			t.Errorf("shard %d of two given different --clients: %v, want it refused at the meeting\n%s", i, err, outs[i])
		}
	}
	if d := time.Since(started); d > 25*time.Second {
		t.Errorf("the shards were refused after %s, not at the meeting", d)
	}

	// Shards 0 and 1 of three wait with different timeouts for shard 2, which
	// never comes: both name it.
	cmds, outs = nil, nil
	for i, timeout := range []string{"2s", "4s"} {
		args := []string{"run", "pgbench", "-f", script, "--clients", "3", "--warmup", "0s", "--duration", "1s", "--dsn", dsn, "--shard-timeout", timeout}
		cmd, out := startPod(t, i, 3, args, "PGBAKEOFF_SHARD_GROUP=missing", "PGBAKEOFF_RESULTS="+results)
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err == nil || !strings.Contains(outs[i].String(), "shard 2/3") {
			t.Errorf("shard %d waiting for shard 2/3, which never came: %v, want it named\n%s", i, err, outs[i])
		}
	}
}
