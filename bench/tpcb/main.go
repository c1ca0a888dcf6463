// Command tpcb compares pgbakeoff with pgbench on one local server: the load at
// scale 100, then select-only and tpcb-like throughput (prepared) at several client
// counts, over the Unix-domain socket and over TCP. Each round runs both tools, one
// after the other, the first going second in the next round, so drift on the
// machine affects both alike. It prints the medians of the rounds' ratios, each
// tool's client CPU per transaction, the machine's idle CPU during each tool's runs
// (from /proc/stat), and pgbakeoff's peak memory with 1000 clients. Then the same
// for two script files (pgbench -f, pgbakeoff run pgbench -f): select-only written
// as a script, and five \set lines before two statements.
//
//	go run ./bench/tpcb                          # 5 rounds of 20 s runs
//	go run ./bench/tpcb -version 15 -rounds 3 -clients 8 -rw-clients 8 -transports unix
//	go run ./bench/tpcb -clients '' -rw-clients '' -load=false -rss=false   # the script files only
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

// options are the bench's flags.
type options struct {
	rounds, scale, jobs int
	duration            time.Duration
	clients, rwClients  []string
	fileClients         []string
	transports          []string
	load, rss           bool
}

// measure is one script at one client count over one transport, round by round:
// a builtin script, or a script file (path set) run with pgbench -f.
type measure struct {
	transport, script, clients string
	path                       string
	pgbench, ours              sample
}

// scriptFiles are the script files measured: select-only as a file, and a script
// whose \set lines cost more than its statements' parameters.
var scriptFiles = []struct{ name, text string }{
	{"select-only.sql", `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`},
	{"five-sets.sql", `\set aid random(1, 100000 * :scale)
\set bid random(1, :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
\set far random_exponential(1, 100000 * :scale, 2.5)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SELECT bbalance + :delta FROM pgbench_branches WHERE bid = :bid;
`},
}

// sample is one tool's runs of a measure.
type sample struct{ tps, cpuUs, idlePct []float64 }

func (s *sample) add(tps, cpuUs, idle float64) {
	s.tps, s.cpuUs, s.idlePct = append(s.tps, tps), append(s.cpuUs, cpuUs), append(s.idlePct, idle)
}

func run() error {
	var o options
	var clients, rwClients, fileClients, transports string
	flag.IntVar(&o.rounds, "rounds", 5, "alternating rounds per measurement")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "length of each throughput run")
	flag.IntVar(&o.scale, "scale", 100, "scale for the load comparison and the runs")
	flag.IntVar(&o.jobs, "jobs", 1, "client threads of both tools (pgbench -j, pgbakeoff --jobs)")
	flag.StringVar(&clients, "clients", "8,32,128", "client counts for select-only")
	flag.StringVar(&rwClients, "rw-clients", "8,32", "client counts for tpcb-like")
	flag.StringVar(&fileClients, "file-clients", "8", "client counts for the script files")
	flag.StringVar(&transports, "transports", "unix,tcp", "unix, tcp or both")
	flag.BoolVar(&o.load, "load", true, "compare the load times (else pgbench -i loads once)")
	flag.BoolVar(&o.rss, "rss", true, "measure pgbakeoff's peak memory with 1000 clients")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	o.clients, o.rwClients, o.fileClients, o.transports = split(clients), split(rwClients), split(fileClients), split(transports)
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
	fmt.Printf("PostgreSQL %s, pgbench %s, %d rounds, %s runs, -j %d, scale %d\n\n", srv.Version, pgbench, o.rounds, o.duration, o.jobs, o.scale)
	// The server listens on its socket directory and on 127.0.0.1.
	dsns := map[string]string{"unix": srv.DSN(), "tcp": regexp.MustCompile(`host=\S+`).ReplaceAllString(srv.DSN(), "host=127.0.0.1")}

	var loadRef, loadOurs []float64
	if o.load {
		if loadRef, loadOurs, err = compareLoads(pgbench, bin, srv.DSN(), o); err != nil {
			return err
		}
	} else if _, err := benchkit.Timed(pgbench, "-i", "-q", "-s", strconv.Itoa(o.scale), srv.DSN()); err != nil {
		return err
	}
	var ms []*measure
	for _, tr := range o.transports {
		dsn, ok := dsns[tr]
		if !ok {
			return fmt.Errorf("unknown transport %q: use unix or tcp", tr)
		}
		for _, sc := range []struct {
			script  string
			clients []string
		}{{"select-only", o.clients}, {"tpcb-like", o.rwClients}} {
			for _, c := range sc.clients {
				m := &measure{transport: tr, script: sc.script, clients: c}
				if err := m.run(pgbench, bin, dsn, filepath.Join(dir, "results.db"), o); err != nil {
					return err
				}
				ms = append(ms, m)
			}
		}
		for _, f := range scriptFiles {
			path := filepath.Join(dir, f.name)
			if err := os.WriteFile(path, []byte(f.text), 0o644); err != nil {
				return err
			}
			for _, c := range o.fileClients {
				m := &measure{transport: tr, script: f.name, clients: c, path: path}
				if err := m.run(pgbench, bin, dsn, filepath.Join(dir, "results.db"), o); err != nil {
					return err
				}
				ms = append(ms, m)
			}
		}
	}
	peak := 0.0
	if o.rss {
		_, ru, err := benchkit.Capture(bin, "run", "tpcb", "--script", "select-only", "--clients", "1000", "--duration", "10s",
			"--results", filepath.Join(dir, "results.db"), "--dsn", srv.DSN())
		if err != nil {
			return err
		}
		peak = benchkit.PeakMiB(ru)
	}
	printTable(o, loadRef, loadOurs, ms, peak)
	return nil
}

// compareLoads times pgbench -i and init tpcb, alternating.
func compareLoads(pgbench, bin, dsn string, o options) (ref, ours []float64, err error) {
	for i := 0; i < o.rounds; i++ {
		t, err := benchkit.Timed(pgbench, "-i", "-q", "-s", strconv.Itoa(o.scale), dsn)
		if err != nil {
			return nil, nil, err
		}
		ref = append(ref, t)
		if t, err = benchkit.Timed(bin, "init", "tpcb", "--scale", strconv.Itoa(o.scale), "--dsn", dsn); err != nil {
			return nil, nil, err
		}
		ours = append(ours, t)
		fmt.Printf("load round %d: pgbench %.2f s, pgbakeoff %.2f s\n", i+1, ref[i], ours[i])
	}
	return ref, ours, nil
}

var tpsRe = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// run makes the measure's rounds, the tools taking turns to go first.
func (m *measure) run(pgbench, bin, dsn, results string, o options) error {
	secs := strconv.Itoa(int(o.duration.Seconds()))
	j := strconv.Itoa(o.jobs)
	for i := 0; i < o.rounds; i++ {
		ref := func() error {
			idle := benchkit.MidRunIdle(o.duration)
			script := []string{"-b", m.script}
			if m.path != "" {
				script = []string{"-f", m.path, "-s", strconv.Itoa(o.scale)}
			}
			args := append(append([]string{"-n"}, script...), "-M", "prepared", "-c", m.clients, "-j", j, "-T", secs, dsn)
			out, ru, err := benchkit.Capture(pgbench, args...)
			if err != nil {
				return err
			}
			r := tpsRe.FindSubmatch(out)
			if r == nil {
				return fmt.Errorf("pgbench printed no tps:\n%s", out)
			}
			tps, _ := strconv.ParseFloat(string(r[1]), 64)
			m.pgbench.add(tps, benchkit.CPUPerTx(ru, tps*o.duration.Seconds()), idle())
			return nil
		}
		ours := func() error {
			idle := benchkit.MidRunIdle(o.duration)
			script := []string{"tpcb", "--script", m.script}
			if m.path != "" {
				script = []string{"pgbench", "-f", m.path, "-s", strconv.Itoa(o.scale)}
			}
			args := append(append([]string{"run"}, script...), "--protocol", "prepared", "--clients", m.clients,
				"--jobs", j, "--duration", o.duration.String(), "--json", "--results", results, "--dsn", dsn)
			out, ru, err := benchkit.Capture(bin, args...)
			if err != nil {
				return err
			}
			return m.addOurs(out, ru, idle(), o.duration)
		}
		first, second := ref, ours
		if i%2 == 1 {
			first, second = ours, ref
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}
		fmt.Printf("%s %s %s clients round %d: pgbench %.0f tps, pgbakeoff %.0f tps (%.2fx); idle %.1f%% and %.1f%%\n",
			m.transport, m.script, m.clients, i+1, m.pgbench.tps[i], m.ours.tps[i], m.ours.tps[i]/m.pgbench.tps[i],
			m.pgbench.idlePct[i], m.ours.idlePct[i])
	}
	return nil
}

func (m *measure) addOurs(out []byte, ru *syscall.Rusage, idle float64, window time.Duration) error {
	var sum struct {
		TPS          float64 `json:"tps"`
		CommitsTotal float64 `json:"commits_total"`
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		return fmt.Errorf("pgbakeoff --json: %v\n%s", err, out)
	}
	tx := sum.CommitsTotal // every transaction, warm-up and tail included
	if m.path != "" {
		tx = sum.TPS * window.Seconds() // a file's statements commit one by one
	}
	m.ours.add(sum.TPS, benchkit.CPUPerTx(ru, tx), idle)
	return nil
}

func printTable(o options, loadRef, loadOurs []float64, ms []*measure, peak float64) {
	fmt.Printf("\n%-36s %10s %10s %7s %-8s %9s %9s %6s %7s %7s\n", "measurement (median)", "pgbench", "pgbakeoff", "ratio", "goal",
		"cpu/tx", "cpu/tx", "ratio", "idle%", "idle%")
	if len(loadRef) > 0 {
		fmt.Printf("%-36s %9.2fs %9.2fs %6.2fx %-8s\n", fmt.Sprintf("load time, scale %d", o.scale),
			benchkit.Median(loadRef), benchkit.Median(loadOurs), benchkit.MedianRatio(loadOurs, loadRef), "<= 1.0x")
	}
	for _, m := range ms {
		goal := ">= 1.05x"
		if m.script == "tpcb-like" || m.path != "" {
			goal = ">= 1.0x"
		}
		pc, oc := benchkit.Median(m.pgbench.cpuUs), benchkit.Median(m.ours.cpuUs)
		fmt.Printf("%-36s %10.0f %10.0f %6.2fx %-8s %7.1fus %7.1fus %5.2fx %7.1f %7.1f\n",
			fmt.Sprintf("%s, %s clients, %s", m.script, m.clients, m.transport),
			benchkit.Median(m.pgbench.tps), benchkit.Median(m.ours.tps), benchkit.MedianRatio(m.ours.tps, m.pgbench.tps), goal,
			pc, oc, oc/pc, benchkit.Median(m.pgbench.idlePct), benchkit.Median(m.ours.idlePct))
	}
	if peak > 0 {
		fmt.Printf("%-36s %21.0f MiB\n", "pgbakeoff peak RSS, 1000 clients", peak)
	}
	fmt.Println(`
The tps ratio is the median of the rounds' ratios, not the ratio of the medians; the
goals are a client's that never leaves the server idle. cpu/tx is each tool's own CPU
time (user and system) per transaction, its goal <= 0.8x (for the script files <= 1.0x);
idle% is the machine's idle CPU from 30% to 80% of each tool's runs.`)
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
