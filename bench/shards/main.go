// Command shards measures a run spread over several local processes: -clients
// clients over -shards processes against one local server with max_connections
// raised, the shards meeting in one results store and then merged. It prints the
// merged run's throughput against the shards' and the server's commits, each
// process's peak memory per 1,000 clients, and how long `merge` takes for the
// stores of shards that ran an hour (the measured shards' runs, their intervals
// and samples repeated to 3,600 seconds).
//
//	go run ./bench/shards                         # 10,000 clients over 4 processes
//	go run ./bench/shards -clients 2000 -duration 10s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	clients := flag.Int("clients", 10000, "clients in all")
	shards := flag.Int("shards", 4, "client processes")
	duration := flag.Duration("duration", 20*time.Second, "the measured window")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	rounds := flag.Int("merges", 3, "merges of the hour-long stores to time")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the first merge to this file")
	flag.Parse()
	ctx := context.Background()
	bin, srv, dir, cleanup, err := benchkit.Setup(ctx, *version, []localpg.Setting{
		{Name: "max_connections", Value: strconv.Itoa(*clients + 20)}, {Name: "shared_buffers", Value: "256MB"}})
	if err != nil {
		return err
	}
	defer cleanup()
	if _, _, err := benchkit.Capture(bin, "init", "tpcb", "--scale", "10", "--dsn", srv.DSN()); err != nil {
		return err
	}
	results := filepath.Join(dir, "shared.db")
	fmt.Printf("PostgreSQL %s, %d clients over %d processes, select-only at scale 10, %s window\n\n", srv.Version, *clients, *shards, *duration)

	// The shards, at once, meeting in the shared store.
	cmds := make([]*exec.Cmd, *shards)
	outs := make([]*[]byte, *shards)
	for i := range *shards {
		cmd := exec.Command(bin, "run", "tpcb", "--script", "select-only", "--clients", strconv.Itoa(*clients), "--shard", fmt.Sprintf("%d/%d", i, *shards),
			"--shard-group", "bench", "--warmup", "5s", "--duration", duration.String(), "--json", "--results", results, "--dsn", srv.DSN())
		out := new([]byte)
		w := &sink{b: out}
		cmd.Stdout, cmd.Stderr = w, os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		cmds[i], outs[i] = cmd, out
	}
	var sumTx float64
	var peak []float64
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("shard %d: %v", i, err)
		}
		var s struct {
			Transactions float64 `json:"transactions"`
			Clients      int     `json:"clients"`
		}
		if err := json.Unmarshal(*outs[i], &s); err != nil {
			return fmt.Errorf("shard %d: %v\n%s", i, err, *outs[i])
		}
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		mib := benchkit.PeakMiB(ru)
		peak = append(peak, 1000*mib/float64(s.Clients))
		sumTx += s.Transactions
		fmt.Printf("shard %d: %d clients, %.0f transactions, peak RSS %.1f MiB\n", i, s.Clients, s.Transactions, mib)
	}
	out, _, err := benchkit.Capture(bin, "merge", "--results", results)
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`run (\d+): .*merged from`).FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("merge: %s", out)
	}
	shown, _, err := benchkit.Capture(bin, "show", string(m[1]), "--json", "--results", results)
	if err != nil {
		return err
	}
	var merged struct {
		Transactions float64 `json:"transactions"`
		TPS          float64 `json:"tps"`
		CommitsTotal float64 `json:"commits_total"`
		Server       struct{ Commits float64 }
		LatencyMs    struct{ P99 float64 } `json:"latency_ms"`
		Flags        []struct {
			Name    string
			Invalid bool
		}
	}
	if err := json.Unmarshal(shown, &merged); err != nil {
		return err
	}
	fmt.Printf("\nmerged run %s: %.0f tps, p99 %.3f ms, %.0f transactions (the shards': %.0f), server commits %.0f against the clients' %.0f (%+.2f%%), flags %v\n",
		m[1], merged.TPS, merged.LatencyMs.P99, merged.Transactions, sumTx, merged.Server.Commits, merged.CommitsTotal,
		100*(merged.Server.Commits-merged.CommitsTotal)/merged.CommitsTotal, merged.Flags)
	report := filepath.Join(dir, "report.md")
	if _, _, err := benchkit.Capture(bin, "report", "--run", string(m[1]), "-o", report, "--results", results); err != nil {
		return err
	}
	fmt.Printf("report of the merged run: written\n")
	fmt.Printf("client memory per 1,000 clients: %.1f MiB (the highest of the processes; goal <= 40 MiB)\n", maxOf(peak))

	secs, err := timeMerges(bin, dir, results, *shards, *rounds, *profile)
	if err != nil {
		return err
	}
	fmt.Printf("merge of %d stores of one-hour shard runs: %.2f s (median of %d; goal < 2 s)\n", *shards, benchkit.Median(secs), len(secs))
	return nil
}

// timeMerges writes a store per shard holding its run stretched to an hour (the
// intervals and samples repeated second after second), then times merge of them.
func timeMerges(bin, dir, results string, shards, rounds int, profile string) ([]float64, error) {
	ctx := context.Background()
	src, err := store.OpenReadOnly(ctx, results)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var inputs []string
	for id := int64(1); id <= int64(shards); id++ {
		d, err := src.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		d.Labels["shard_group"] = "hour"
		if len(d.Intervals) > 0 {
			d.Intervals = stretch(d.Intervals, func(iv *store.Interval, k int, at time.Time) { iv.Seq, iv.Start, iv.End = k, at, at.Add(time.Second) }, d.Intervals[0].Start)
		}
		if len(d.Samples) > 0 {
			d.Samples = stretch(d.Samples, func(sm *store.Sample, k int, at time.Time) { sm.Seq, sm.Start, sm.End = k, at, at.Add(time.Second) }, d.Samples[0].Start)
		}
		path := filepath.Join(dir, fmt.Sprintf("hour-%d.db", id))
		st, err := store.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		_, err = st.SaveRun(ctx, d)
		st.Close()
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, path)
	}
	var secs []float64
	for r := range rounds {
		args := append(append([]string{"merge"}, inputs...), "-o", filepath.Join(dir, fmt.Sprintf("merged-%d.db", r)))
		if profile != "" && r == 0 {
			args = append(args, "--cpuprofile", profile)
		}
		s, err := benchkit.Timed(bin, args...)
		if err != nil {
			return nil, err
		}
		secs = append(secs, s)
	}
	return secs, nil
}

const hour = 3600

// stretch repeats a run's per-second rows to an hour, renumbered and retimed by
// set, from the first row's start.
func stretch[T any](rows []T, set func(r *T, seq int, start time.Time), start time.Time) []T {
	var out []T
	for k := 0; len(rows) > 0 && k < hour; k++ {
		r := rows[k%len(rows)]
		set(&r, k, start.Add(time.Duration(k)*time.Second))
		out = append(out, r)
	}
	return out
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// sink collects a process's standard output.
type sink struct{ b *[]byte }

func (s *sink) Write(p []byte) (int, error) { *s.b = append(*s.b, p...); return len(p), nil }
