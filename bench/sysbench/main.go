// Command sysbench compares pgbakeoff with sysbench (Debian's package) on one local
// server, alternating the two tools so drift on the machine affects both alike, and
// prints medians and ratios: the load of the sbtest tables against `sysbench
// oltp_read_write prepare` with the same tables, size and threads, then
// oltp_point_select and oltp_read_write throughput at 8 and 64 clients on the same
// tables, over the Unix-domain socket and TCP, both tools with sysbench's default
// special distribution, with each tool's client CPU per transaction and the
// machine's idle CPU.
//
//	go run ./bench/sysbench                   # 4 rounds, 4 tables of 1,000,000 rows, 20 s runs
//	go run ./bench/sysbench -rounds 5 -duration 30s -table-size 100000
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
	"syscall"
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
	rounds := flag.Int("rounds", 4, "alternating rounds per measurement (even: each tool goes first as often)")
	duration := flag.Duration("duration", 20*time.Second, "length of each throughput run")
	tables := flag.Int("tables", 4, "sbtest tables")
	size := flag.Int("table-size", 1000000, "rows per table")
	threads := flag.Int("threads", 2, "loading threads (sysbench --threads, pgbakeoff --jobs)")
	clientList := flag.String("clients", "8,64", "client counts for the throughput runs")
	transportList := flag.String("transports", "unix,tcp", "unix, tcp or both")
	doLoad := flag.Bool("load", true, "compare the load times (else sysbench prepares once)")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	ctx := context.Background()

	sysbench, err := exec.LookPath("sysbench")
	if err != nil {
		return fmt.Errorf("sysbench is not installed: apt-get install sysbench")
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
	clients, transports := strings.Split(*clientList, ","), strings.Split(*transportList, ",")
	// The server listens on its socket directory and on 127.0.0.1.
	hosts := map[string]string{"unix": srv.SocketDir, "tcp": "127.0.0.1"}
	sbHost := func(tr string, db string, args ...string) []string {
		return append([]string{"--db-driver=pgsql", "--pgsql-host=" + hosts[tr], "--pgsql-port=" + strconv.Itoa(srv.Port),
			"--pgsql-user=postgres", "--pgsql-db=" + db, "--tables=" + strconv.Itoa(*tables), "--table-size=" + strconv.Itoa(*size)}, args...)
	}
	sbArgs := func(db string, args ...string) []string { return sbHost("unix", db, args...) }
	fmt.Printf("PostgreSQL %s, %s, %d rounds, %d tables of %d rows, %d loading threads, %s runs at %s clients over %s\n\n",
		srv.Version, sysbenchVersion(sysbench), *rounds, *tables, *size, *threads, *duration, *clientList, *transportList)

	var sbLoad, ourLoad []float64
	loadSysbench := func() error {
		if _, _, err := benchkit.Capture(sysbench, sbArgs("sb", "oltp_read_write", "cleanup")...); err != nil {
			return err
		}
		if err := benchkit.Checkpoint(ctx, srv); err != nil {
			return err
		}
		t, err := benchkit.Timed(sysbench, sbArgs("sb", "oltp_read_write", "--threads="+strconv.Itoa(*threads), "prepare")...)
		sbLoad = append(sbLoad, t)
		return err
	}
	loadOurs := func() error {
		// init drops the old tables itself, in the background: that is part of its time.
		if err := benchkit.Checkpoint(ctx, srv); err != nil {
			return err
		}
		t, err := benchkit.Timed(bin, "init", "sysbench", "--tables", strconv.Itoa(*tables), "--table-size", strconv.Itoa(*size),
			"--jobs", strconv.Itoa(*threads), "--dsn", dsn("pgb"))
		ourLoad = append(ourLoad, t)
		return err
	}
	for i := range *rounds {
		if !*doLoad {
			if err := loadSysbench(); err != nil {
				return err
			}
			break
		}
		// Taking turns, each load starts from a checkpoint: neither writes out the
		// other's dirty pages.
		if err := benchkit.InTurn(i, loadSysbench, loadOurs); err != nil {
			return err
		}
		fmt.Printf("load round %d: sysbench prepare %.2f s, pgbakeoff init sysbench %.2f s\n", i+1, sbLoad[i], ourLoad[i])
	}

	// Both tools run on the tables sysbench prepared, settled once, and each run on
	// a fresh copy of them (see benchkit.Clone): read-write changes the tables for
	// whatever runs next. Four 10 s runs of sysbench's read-write in a row on the
	// same tables, vacuumed between runs, gave 1,134, 1,095, 977 and 951 tps; four
	// on fresh copies gave 974 to 1,244 with no trend. On shared tables the tool
	// that ran later in a round paid for it.
	if err := benchkit.Settle(ctx, dsn("sb")); err != nil {
		return err
	}
	fresh := func(run func() error) func() error {
		return func() error {
			if err := benchkit.Clone(ctx, srv, "sb", "sbrun"); err != nil {
				return err
			}
			return run()
		}
	}
	secs := strconv.Itoa(int(duration.Seconds()))
	tpsRe := regexp.MustCompile(`transactions:\s+\d+\s+\(([0-9.]+) per sec\.\)`)
	var ms []*measure
	for _, tr := range transports {
		if hosts[tr] == "" {
			return fmt.Errorf("unknown transport %q: use unix or tcp", tr)
		}
		runDSN := dsn("sbrun")
		if tr == "tcp" {
			runDSN = regexp.MustCompile(`host=\S+`).ReplaceAllString(runDSN, "host=127.0.0.1")
		}
		for _, script := range []string{"oltp_point_select", "oltp_read_write"} {
			for _, c := range clients {
				m := &measure{transport: tr, script: script, clients: c}
				ms = append(ms, m)
				runSysbench := func() error {
					res, idle := benchkit.Reschedules(), benchkit.MidRunIdle(*duration)
					out, ru, err := benchkit.Capture(sysbench, sbHost(tr, "sbrun", script, "--threads="+c, "--time="+secs, "run")...)
					if err != nil {
						return err
					}
					r := tpsRe.FindSubmatch(out)
					if r == nil {
						return fmt.Errorf("sysbench printed no transactions:\n%s", out)
					}
					tps, _ := strconv.ParseFloat(string(r[1]), 64)
					m.ref.add(tps, ru, tps*duration.Seconds(), res, idle())
					return nil
				}
				runOurs := func() error {
					res, idle := benchkit.Reschedules(), benchkit.MidRunIdle(*duration)
					out, ru, err := benchkit.Capture(bin, "run", "sysbench", "--script", script, "--clients", c,
						"--duration", duration.String(), "--json", "--results", filepath.Join(dir, "results.db"), "--dsn", runDSN)
					if err != nil {
						return err
					}
					var sum struct {
						TPS float64 `json:"tps"`
					}
					if err := json.Unmarshal(out, &sum); err != nil {
						return fmt.Errorf("pgbakeoff --json: %v\n%s", err, out)
					}
					m.ours.add(sum.TPS, ru, sum.TPS*duration.Seconds(), res, idle())
					return nil
				}
				for i := range *rounds {
					// The tools take turns going first, so that drift on the machine within
					// a round does not always fall on the same one.
					if err := benchkit.InTurn(i, fresh(runSysbench), fresh(runOurs)); err != nil {
						return err
					}
					fmt.Printf("%s %s %s clients round %d: sysbench %.0f tps, pgbakeoff %.0f tps (%.2fx); idle %.1f%% and %.1f%%\n",
						tr, script, c, i+1, m.ref.tps[i], m.ours.tps[i], m.ours.tps[i]/m.ref.tps[i], m.ref.idle[i], m.ours.idle[i])
				}
			}
		}
	}
	printTable(sbLoad, ourLoad, *tables, *size, ms)
	return nil
}

// measure is one script at one client count over one transport, round by round.
type measure struct {
	transport, script, clients string
	ref, ours                  sample
}

// sample is one tool's runs: tps, client CPU per transaction, cross-core
// wake-ups per transaction and the machine's idle CPU.
type sample struct{ tps, cpuUs, res, idle []float64 }

func (s *sample) add(tps float64, ru *syscall.Rusage, tx, res0, idle float64) {
	s.tps = append(s.tps, tps)
	s.cpuUs = append(s.cpuUs, benchkit.CPUPerTx(ru, tx))
	s.res = append(s.res, (benchkit.Reschedules()-res0)/tx)
	s.idle = append(s.idle, idle)
}

func printTable(sbLoad, ourLoad []float64, tables, size int, ms []*measure) {
	fmt.Printf("\n%-40s %10s %10s %7s %-12s %9s %9s %6s %6s %6s %7s %7s\n", "measurement (median)", "sysbench", "pgbakeoff", "ratio", "goal",
		"cpu/tx", "cpu/tx", "ratio", "res/tx", "res/tx", "idle%", "idle%")
	if len(ourLoad) > 0 {
		ls, lo := benchkit.Median(sbLoad), benchkit.Median(ourLoad)
		fmt.Printf("%-40s %9.2fs %9.2fs %6.2fx %-12s\n", fmt.Sprintf("load, %d x %d rows", tables, size), ls, lo, ls/lo, ">= 3x faster")
	}
	for _, m := range ms {
		sc, oc := benchkit.Median(m.ref.cpuUs), benchkit.Median(m.ours.cpuUs)
		fmt.Printf("%-40s %10.0f %10.0f %6.2fx %-12s %7.1fus %7.1fus %5.2fx %6.3f %6.3f %7.1f %7.1f\n",
			fmt.Sprintf("%s, %s clients, %s", m.script, m.clients, m.transport), benchkit.Median(m.ref.tps), benchkit.Median(m.ours.tps),
			benchkit.MedianRatio(m.ours.tps, m.ref.tps), ">= 1.05x", sc, oc, oc/sc, benchkit.Median(m.ref.res), benchkit.Median(m.ours.res),
			benchkit.Median(m.ref.idle), benchkit.Median(m.ours.idle))
	}
	fmt.Println("\nThe load ratio is sysbench's time over pgbakeoff's. The tps ratios are medians of each round's ratio, not ratios of")
	fmt.Println("the medians. Both tools use sysbench's default key distribution (special), each run on a fresh copy of the tables.")
	fmt.Println("cpu/tx is each tool's own CPU time per transaction, its goal <= 0.8x; res/tx the machine's rescheduling interrupts")
	fmt.Println("(/proc/interrupts RES) per transaction, on a virtual machine each a trap to the host; idle% the machine's idle CPU")
	fmt.Println("from 30% to 80% of each run.")
}

func sysbenchVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "sysbench"
	}
	return strings.TrimSpace(string(out))
}
