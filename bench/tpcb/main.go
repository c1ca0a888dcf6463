// Command tpcb compares pgbakeoff with pgbench on one local server, alternating the two
// tools so drift on the machine affects both alike, and prints medians and ratios:
// select-only and tpcb-like throughput (prepared, 8 clients), load time at scale 100,
// and pgbakeoff's peak memory with 1000 clients.
//
//	go run ./bench/tpcb                  # 3 rounds of 20 s runs
//	go run ./bench/tpcb -rounds 5 -duration 30s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"syscall"
	"time"

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

	dir, err := os.MkdirTemp("", "pgbakeoff-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "pgbakeoff")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/pgbakeoff").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	srv, err := localpg.Start(ctx, localpg.Options{Name: "bench", Version: *version, BaseDir: filepath.Join(dir, "servers"),
		Settings: []localpg.Setting{{Name: "max_connections", Value: "1100"}}, Log: os.Stderr})
	if err != nil {
		return err
	}
	defer srv.Stop(context.Background())
	pgbench, err := findPgbench(srv)
	if err != nil {
		return err
	}
	dsn := srv.DSN()
	fmt.Printf("PostgreSQL %s, pgbench %s, %d rounds, %s runs, %d clients, scale %d\n\n", srv.Version, pgbench, *rounds, *duration, *clients, *scale)

	loads := map[string][]float64{}
	for i := 0; i < *rounds; i++ {
		t, err := timed(pgbench, "-i", "-q", "-s", strconv.Itoa(*scale), dsn)
		if err != nil {
			return err
		}
		loads["pgbench"] = append(loads["pgbench"], t)
		t, err = timed(bin, "init", "tpcb", "--scale", strconv.Itoa(*scale), "--dsn", dsn)
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
			out, ru, err := capture(pgbench, "-n", "-b", script, "-M", "prepared", "-c", c, "-j", "1", "-T", secs, dsn)
			if err != nil {
				return err
			}
			m := tpsRe.FindSubmatch(out)
			if m == nil {
				return fmt.Errorf("pgbench printed no tps:\n%s", out)
			}
			tps, _ := strconv.ParseFloat(string(m[1]), 64)
			r.pgbench = append(r.pgbench, tps)
			r.pgbenchCPU = append(r.pgbenchCPU, cpuUs(ru, tps*duration.Seconds()))
			out, ru, err = capture(bin, "run", "tpcb", "--script", script, "--protocol", "prepared", "--clients", c,
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
			r.oursCPU = append(r.oursCPU, cpuUs(ru, sum.CommitsTotal))
			fmt.Printf("%s round %d: pgbench %.0f tps, pgbakeoff %.0f tps\n", script, i+1, tps, sum.TPS)
		}
	}

	_, ru, err := capture(bin, "run", "tpcb", "--script", "select-only", "--clients", "1000", "--duration", "10s",
		"--results", filepath.Join(dir, "results.db"), "--dsn", dsn)
	if err != nil {
		return err
	}
	peakMiB := float64(ru.Maxrss) / 1024

	fmt.Printf("\n%-28s %12s %12s %8s %s\n", "measurement (median)", "pgbench", "pgbakeoff", "ratio", "goal")
	lp, lo := median(loads["pgbench"]), median(loads["pgbakeoff"])
	fmt.Printf("%-28s %11.2fs %11.2fs %7.2fx %s\n", fmt.Sprintf("load time, scale %d", *scale), lp, lo, lo/lp, "<= 1.0x")
	for _, script := range []string{"select-only", "tpcb-like"} {
		r := results[script]
		p, o := median(r.pgbench), median(r.ours)
		goal := ">= 0.9x, then 1.0x"
		if script == "tpcb-like" {
			goal = ">= 0.97x"
		}
		fmt.Printf("%-28s %12.0f %12.0f %7.2fx %s\n", script+" tps, "+c+" clients", p, o, o/p, goal)
		fmt.Printf("%-28s %11.1fus %11.1fus\n", "  client CPU per transaction", median(r.pgbenchCPU), median(r.oursCPU))
	}
	fmt.Printf("%-28s %25.0f MiB\n", "pgbakeoff peak RSS, 1000 clients", peakMiB)
	return nil
}

func findPgbench(srv *localpg.Server) (string, error) {
	for _, p := range []string{filepath.Join(srv.BinDir, "pgbench"), fmt.Sprintf("/usr/lib/postgresql/%d/bin/pgbench", srv.Major)} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return exec.LookPath("pgbench")
}

func timed(name string, args ...string) (float64, error) {
	start := time.Now()
	_, _, err := capture(name, args...)
	return time.Since(start).Seconds(), err
}

func capture(name string, args ...string) ([]byte, *syscall.Rusage, error) {
	cmd := exec.Command(name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s %v: %v\n%s%s", filepath.Base(name), args[:2], err, out.String(), errOut.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		ru = &syscall.Rusage{}
	}
	return out.Bytes(), ru, nil
}

func cpuUs(ru *syscall.Rusage, tx float64) float64 {
	if tx <= 0 {
		return 0
	}
	s := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	return 1e6 * s / tx
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
