// Command sysbench-tpcc compares pgbakeoff's sysbench-tpcc with Percona's tpcc.lua
// under sysbench (Debian's package) on one local server, the tools taking turns:
// the load, `tpcc.lua prepare` against `pgbakeoff init sysbench-tpcc` with as many
// connections, then runs of each at each client count on a fresh copy of the same
// table sets, with each tool's tps, qps and ignored errors a second, and its client
// CPU per transaction.
//
//	go run ./bench/sysbench-tpcc                      # 2 rounds, 1 table set of 1 warehouse, 20 s runs at 8 and 32 clients
//	go run ./bench/sysbench-tpcc -load=false -rounds 1 -duration 5s -clients 4
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
	"strings"
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
	rounds := flag.Int("rounds", 2, "alternating rounds per run measurement (even: each tool goes first as often)")
	loadRounds := flag.Int("load-rounds", 1, "alternating rounds of the load comparison (tpcc.lua prepare takes minutes a warehouse)")
	duration := flag.Duration("duration", 20*time.Second, "length of each run")
	tables := flag.Int("tables", 1, "table sets")
	scale := flag.Int("scale", 1, "warehouses per table set")
	threads := flag.Int("threads", 2, "loading connections (sysbench --threads, pgbakeoff --jobs)")
	clientList := flag.String("clients", "8,32", "client counts for the runs")
	doLoad := flag.Bool("load", true, "compare the load times; else pgbakeoff loads the tables both tools run on")
	scripts := flag.String("scripts", "/work/shared/fixtures/sysbench-tpcc", "directory of tpcc.lua and the files it requires")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	ctx := context.Background()

	sysbench, err := exec.LookPath("sysbench")
	if err != nil {
		return fmt.Errorf("sysbench is not installed: apt-get install sysbench")
	}
	if _, err := os.Stat(filepath.Join(*scripts, "tpcc.lua")); err != nil {
		return fmt.Errorf("no tpcc.lua in %s (-scripts): %w", *scripts, err)
	}
	bin, srv, dir, cleanup, err := benchkit.Setup(ctx, *version, []localpg.Setting{{Name: "max_connections", Value: "200"}})
	if err != nil {
		return err
	}
	defer cleanup()
	dsn, err := benchkit.CreateDatabases(ctx, srv, "sb", "pgb")
	if err != nil {
		return err
	}
	sb := func(db string, args ...string) ([]byte, error) {
		all := append([]string{"./tpcc.lua", "--db-driver=pgsql", "--pgsql-host=" + srv.SocketDir, "--pgsql-port=" + strconv.Itoa(srv.Port),
			"--pgsql-user=postgres", "--pgsql-db=" + db, "--tables=" + strconv.Itoa(*tables), "--scale=" + strconv.Itoa(*scale)}, args...)
		out, _, err := benchkit.CaptureIn(*scripts, sysbench, all...)
		return out, err
	}
	initArgs := func(db string) []string {
		return []string{"init", "sysbench-tpcc", "--tables", strconv.Itoa(*tables), "--scale", strconv.Itoa(*scale),
			"--jobs", strconv.Itoa(*threads), "--dsn", dsn(db)}
	}
	fmt.Printf("PostgreSQL %s, %s, table sets: %d, warehouses: %d, loading connections: %d, %d rounds of %s runs at %s clients\n\n",
		srv.Version, sysbenchVersion(sysbench), *tables, *scale, *threads, *rounds, *duration, *clientList)

	// The runs' tables: tpcc.lua's prepare, timed against pgbakeoff's load in turn,
	// or pgbakeoff's alone. tpcc.lua's prepare waits 30 s after creating the
	// tables: that is part of its time.
	var sbLoad, ourLoad []float64
	loadSysbench := func() error {
		if _, err := sb("sb", "cleanup"); err != nil {
			return err
		}
		if err := benchkit.Checkpoint(ctx, srv); err != nil {
			return err
		}
		start := time.Now()
		_, err := sb("sb", "--threads="+strconv.Itoa(*threads), "prepare")
		sbLoad = append(sbLoad, time.Since(start).Seconds())
		return err
	}
	loadOurs := func(db string) func() error {
		return func() error {
			if err := benchkit.Checkpoint(ctx, srv); err != nil {
				return err
			}
			t, err := benchkit.Timed(bin, initArgs(db)...)
			ourLoad = append(ourLoad, t)
			return err
		}
	}
	if *doLoad {
		for i := range *loadRounds {
			if err := benchkit.InTurn(i, loadSysbench, loadOurs("pgb")); err != nil {
				return err
			}
			fmt.Printf("load round %d: tpcc.lua prepare %.1f s, pgbakeoff init sysbench-tpcc %.1f s\n", i+1, sbLoad[i], ourLoad[i])
		}
	} else if err := loadOurs("sb")(); err != nil {
		return err
	}
	if err := benchkit.Settle(ctx, dsn("sb")); err != nil {
		return err
	}

	secs := strconv.Itoa(int(duration.Seconds()))
	rate := func(out []byte, what string) float64 {
		m := regexp.MustCompile(what + `:\s+\d+\s+\(([0-9.]+) per sec\.\)`).FindSubmatch(out)
		if m == nil {
			return -1
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	var ms []*measure
	for _, c := range strings.Split(*clientList, ",") {
		m := &measure{clients: c}
		ms = append(ms, m)
		runSysbench := func() error {
			if err := benchkit.Clone(ctx, srv, "sb", "sbrun"); err != nil {
				return err
			}
			all := []string{"./tpcc.lua", "--db-driver=pgsql", "--pgsql-host=" + srv.SocketDir, "--pgsql-port=" + strconv.Itoa(srv.Port),
				"--pgsql-user=postgres", "--pgsql-db=sbrun", "--tables=" + strconv.Itoa(*tables), "--scale=" + strconv.Itoa(*scale),
				"--threads=" + c, "--time=" + secs, "run"}
			out, ru, err := benchkit.CaptureIn(*scripts, sysbench, all...)
			if err != nil {
				return err
			}
			tps := rate(out, "transactions")
			if tps < 0 {
				return fmt.Errorf("sysbench printed no transactions:\n%s", out)
			}
			m.ref.add(tps, rate(out, "queries"), rate(out, "ignored errors"), benchkit.CPUPerTx(ru, tps*duration.Seconds()))
			return nil
		}
		runOurs := func() error {
			if err := benchkit.Clone(ctx, srv, "sb", "sbrun"); err != nil {
				return err
			}
			out, ru, err := benchkit.Capture(bin, "run", "sysbench-tpcc", "--clients", c, "--warmup", "0s", "--duration", duration.String(),
				"--json", "--results", filepath.Join(dir, "results.db"), "--dsn", dsn("sbrun"))
			if err != nil {
				return err
			}
			var sum struct {
				TPS     float64 `json:"tps"`
				QPS     float64 `json:"qps"`
				Ignored float64 `json:"ignored_errors_per_s"`
			}
			if err := json.Unmarshal(out, &sum); err != nil {
				return fmt.Errorf("pgbakeoff --json: %v\n%s", err, out)
			}
			m.ours.add(sum.TPS, sum.QPS, sum.Ignored, benchkit.CPUPerTx(ru, sum.TPS*duration.Seconds()))
			return nil
		}
		for i := range *rounds {
			if err := benchkit.InTurn(i, runSysbench, runOurs); err != nil {
				return err
			}
			fmt.Printf("%s clients round %d: sysbench %.1f tps, pgbakeoff %.1f tps (%.2fx)\n", c, i+1, m.ref.tps[i], m.ours.tps[i], m.ours.tps[i]/m.ref.tps[i])
		}
	}
	printTable(sbLoad, ourLoad, *tables, *scale, ms)
	return nil
}

// measure is one client count, round by round.
type measure struct {
	clients   string
	ref, ours sample
}

// sample is one tool's runs: tps, qps, ignored errors a second, client CPU per
// transaction.
type sample struct{ tps, qps, ignored, cpuUs []float64 }

func (s *sample) add(tps, qps, ignored, cpuUs float64) {
	s.tps, s.qps, s.ignored, s.cpuUs = append(s.tps, tps), append(s.qps, qps), append(s.ignored, ignored), append(s.cpuUs, cpuUs)
}

func printTable(sbLoad, ourLoad []float64, tables, scale int, ms []*measure) {
	med := benchkit.Median
	fmt.Printf("\n%-32s %10s %10s %7s %9s %9s %9s %9s %9s %9s\n", "measurement (median)", "sysbench", "pgbakeoff", "ratio",
		"qps", "qps", "ignored/s", "ignored/s", "cpu/tx", "cpu/tx")
	if len(sbLoad) > 0 {
		ls, lo := med(sbLoad), med(ourLoad)
		fmt.Printf("%-32s %9.1fs %9.1fs %6.1fx\n", fmt.Sprintf("load, %d x %d warehouses", tables, scale), ls, lo, ls/lo)
	}
	for _, m := range ms {
		fmt.Printf("%-32s %10.1f %10.1f %6.2fx %9.0f %9.0f %9.1f %9.1f %7.0fus %7.0fus\n", "tps, "+m.clients+" clients",
			med(m.ref.tps), med(m.ours.tps), benchkit.MedianRatio(m.ours.tps, m.ref.tps),
			med(m.ref.qps), med(m.ours.qps), med(m.ref.ignored), med(m.ours.ignored), med(m.ref.cpuUs), med(m.ours.cpuUs))
	}
	fmt.Println("\nThe load ratio is tpcc.lua's time over pgbakeoff's; tpcc.lua's includes the 30 s its prepare waits after creating")
	fmt.Println("the tables. The tps ratios are medians of each round's ratio. Each run starts on a fresh copy of the same tables,")
	fmt.Println("at tpcc.lua's defaults (REPEATABLE READ, no purge); cpu/tx is each tool's own CPU time per transaction.")
}

func sysbenchVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "sysbench"
	}
	return strings.TrimSpace(string(out))
}
