// Command tpcb compares pgbakeoff with pgbench on one local server, alternating the two
// tools so drift on the machine affects both alike, and prints medians and ratios:
// select-only and tpcb-like throughput (prepared, 8 clients), load time at scale 100,
// and pgbakeoff's peak memory with 1000 clients.
//
//	go run ./bench/tpcb                  # 3 rounds of 20 s runs
//	go run ./bench/tpcb -rounds 5 -duration 30s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	rounds := flag.Int("rounds", 3, "alternating rounds per measurement")
	duration := flag.Duration("duration", 20*time.Second, "length of each throughput run")
	scale := flag.Int("scale", 100, "scale for the load comparison and the runs")
	clients := flag.Int("clients", 8, "clients for the throughput runs")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	ctx := context.Background()

	bin, srv, dir, cleanup, err := benchkit.Setup(ctx, *version, []localpg.Setting{{Name: "max_connections", Value: "1100"}})
	if err != nil {
		return err
	}
	defer cleanup()
	pgbench, err := benchkit.Pgbench(srv)
	if err != nil {
		return err
	}
	dsn := srv.DSN()
	fmt.Printf("PostgreSQL %s, pgbench %s, %d rounds, %s runs, %d clients, scale %d\n\n", srv.Version, pgbench, *rounds, *duration, *clients, *scale)

	loads := map[string][]float64{}
	for i := 0; i < *rounds; i++ {
		t, err := benchkit.Timed(pgbench, "-i", "-q", "-s", strconv.Itoa(*scale), dsn)
		if err != nil {
			return err
		}
		loads["pgbench"] = append(loads["pgbench"], t)
		t, err = benchkit.Timed(bin, "init", "tpcb", "--scale", strconv.Itoa(*scale), "--dsn", dsn)
		if err != nil {
			return err
		}
		loads["pgbakeoff"] = append(loads["pgbakeoff"], t)
		fmt.Printf("load round %d: pgbench %.2f s, pgbakeoff %.2f s\n", i+1, loads["pgbench"][i], loads["pgbakeoff"][i])
	}

	secs := strconv.Itoa(int(duration.Seconds()))
	c := strconv.Itoa(*clients)
	tpsRe := regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	type result struct{ pgbench, ours, oursCPU, pgbenchCPU []float64 }
	results := map[string]*result{}
	for _, script := range []string{"select-only", "tpcb-like"} {
		r := &result{}
		results[script] = r
		for i := 0; i < *rounds; i++ {
			out, ru, err := benchkit.Capture(pgbench, "-n", "-b", script, "-M", "prepared", "-c", c, "-j", "1", "-T", secs, dsn)
			if err != nil {
				return err
			}
			m := tpsRe.FindSubmatch(out)
			if m == nil {
				return fmt.Errorf("pgbench printed no tps:\n%s", out)
			}
			tps, _ := strconv.ParseFloat(string(m[1]), 64)
			r.pgbench = append(r.pgbench, tps)
			r.pgbenchCPU = append(r.pgbenchCPU, benchkit.CPUPerTx(ru, tps*duration.Seconds()))
			out, ru, err = benchkit.Capture(bin, "run", "tpcb", "--script", script, "--protocol", "prepared", "--clients", c,
				"--duration", duration.String(), "--json", "--results", filepath.Join(dir, "results.db"), "--dsn", dsn)
			if err != nil {
				return err
			}
			var sum struct {
				TPS          float64 `json:"tps"`
				CommitsTotal float64 `json:"commits_total"`
			}
			if err := json.Unmarshal(out, &sum); err != nil {
				return fmt.Errorf("pgbakeoff --json: %v\n%s", err, out)
			}
			r.ours = append(r.ours, sum.TPS)
			r.oursCPU = append(r.oursCPU, benchkit.CPUPerTx(ru, sum.CommitsTotal))
			fmt.Printf("%s round %d: pgbench %.0f tps, pgbakeoff %.0f tps\n", script, i+1, tps, sum.TPS)
		}
	}

	_, ru, err := benchkit.Capture(bin, "run", "tpcb", "--script", "select-only", "--clients", "1000", "--duration", "10s",
		"--results", filepath.Join(dir, "results.db"), "--dsn", dsn)
	if err != nil {
		return err
	}
	peakMiB := benchkit.PeakMiB(ru)

	fmt.Printf("\n%-28s %12s %12s %8s %s\n", "measurement (median)", "pgbench", "pgbakeoff", "ratio", "goal")
	lp, lo := benchkit.Median(loads["pgbench"]), benchkit.Median(loads["pgbakeoff"])
	fmt.Printf("%-28s %11.2fs %11.2fs %7.2fx %s\n", fmt.Sprintf("load time, scale %d", *scale), lp, lo, lo/lp, "<= 1.0x")
	for _, script := range []string{"select-only", "tpcb-like"} {
		r := results[script]
		p, o := benchkit.Median(r.pgbench), benchkit.Median(r.ours)
		goal := ">= 0.9x, then 1.0x"
		if script == "tpcb-like" {
			goal = ">= 0.97x"
		}
		fmt.Printf("%-28s %12.0f %12.0f %7.2fx %s\n", script+" tps, "+c+" clients", p, o, o/p, goal)
		fmt.Printf("%-28s %11.1fus %11.1fus\n", "  client CPU per transaction", benchkit.Median(r.pgbenchCPU), benchkit.Median(r.oursCPU))
	}
	fmt.Printf("%-28s %25.0f MiB\n", "pgbakeoff peak RSS, 1000 clients", peakMiB)
	return nil
}
