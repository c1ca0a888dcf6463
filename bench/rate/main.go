// Command rate measures pgbakeoff's open-loop runs (--rate) against pgbench -R on
// one local server, the tools taking turns in each round: the closed-loop
// select-only peak with 8 clients; a run at 80% of the lower tool's peak, whose client
// CPU per transaction is set against each tool's closed loop; a run at 20%, whose
// schedule lag (the client's own delay before each arrival starts) is compared;
// and the scheduler alone, 256 clients at 50,000 transactions a second of a script
// that sends no SQL. It prints the medians of the rounds.
//
//	go run ./bench/rate                      # 5 rounds of 10 s runs
//	go run ./bench/rate -version 15 -rounds 3
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

// result is one run of one tool.
type result struct {
	tps, cpuUs, lagMs, cores float64
}

// series are one measurement's rounds for both tools.
type series struct{ pgbench, ours []result }

func (s *series) median(ours bool, f func(result) float64) float64 {
	rs := s.pgbench
	if ours {
		rs = s.ours
	}
	var v []float64
	for _, r := range rs {
		v = append(v, f(r))
	}
	return benchkit.Median(v)
}

type bench struct {
	pgbench, bin, dsn, results string
	secs                       int
}

func run() error {
	rounds := flag.Int("rounds", 5, "alternating rounds per measurement")
	duration := flag.Duration("duration", 10*time.Second, "length of each run")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	ctx := context.Background()
	bin, srv, dir, cleanup, err := benchkit.Setup(ctx, *version, []localpg.Setting{{Name: "max_connections", Value: "700"}})
	if err != nil {
		return err
	}
	defer cleanup()
	pgbench, err := benchkit.Pgbench(srv)
	if err != nil {
		return err
	}
	if _, err := benchkit.Timed(pgbench, "-i", "-q", "-s", "10", srv.DSN()); err != nil {
		return err
	}
	meta := filepath.Join(dir, "no-sql.sql")
	if err := os.WriteFile(meta, []byte("\\set x random(1, 1000)\n"), 0o644); err != nil {
		return err
	}
	b := &bench{pgbench: pgbench, bin: bin, dsn: srv.DSN(), results: filepath.Join(dir, "results.db"), secs: int(duration.Seconds())}
	fmt.Printf("PostgreSQL %s, pgbench %s, %d rounds, %s runs, select-only at scale 10, prepared, 8 clients\n\n", srv.Version, pgbench, *rounds, *duration)

	selectOnly := []string{"-b", "select-only"}
	var closed, high, low, sched series
	measure := func(name string, s *series, script []string, clients int, rate float64) error {
		for i := range *rounds {
			err := benchkit.InTurn(i, func() error {
				r, err := b.pgbenchRun(script, clients, rate)
				s.pgbench = append(s.pgbench, r)
				return err
			}, func() error {
				r, err := b.oursRun(script, clients, rate)
				s.ours = append(s.ours, r)
				return err
			})
			if err != nil {
				return err
			}
			p, o := s.pgbench[i], s.ours[i]
			fmt.Printf("%s round %d: pgbench %.0f tps, %.1f us/tx, lag %.3f ms; pgbakeoff %.0f tps, %.1f us/tx, lag %.3f ms\n",
				name, i+1, p.tps, p.cpuUs, p.lagMs, o.tps, o.cpuUs, o.lagMs)
		}
		return nil
	}
	if err := measure("closed loop", &closed, selectOnly, 8, 0); err != nil {
		return err
	}
	// The lower of the two tools' peaks, so that the 80% run is within what the
	// server carries whichever tool measured it.
	peak := min(closed.median(true, func(r result) float64 { return r.tps }), closed.median(false, func(r result) float64 { return r.tps }))
	highRate, lowRate := float64(int(0.8*peak)), float64(int(0.2*peak))
	if err := measure(fmt.Sprintf("rate %.0f", highRate), &high, selectOnly, 8, highRate); err != nil {
		return err
	}
	if err := measure(fmt.Sprintf("rate %.0f", lowRate), &low, selectOnly, 8, lowRate); err != nil {
		return err
	}
	if err := measure("no SQL, 256 clients, rate 50000", &sched, []string{"-f", meta}, 256, 50000); err != nil {
		return err
	}

	tps := func(r result) float64 { return r.tps }
	cpu := func(r result) float64 { return r.cpuUs }
	lag := func(r result) float64 { return r.lagMs }
	cores := func(r result) float64 { return r.cores }
	fmt.Printf("\n%-46s %12s %12s\n", "measurement (median)", "pgbench", "pgbakeoff")
	row := func(label, format string, f func(result) float64, s *series) {
		fmt.Printf("%-46s %12s %12s\n", label, fmt.Sprintf(format, s.median(false, f)), fmt.Sprintf(format, s.median(true, f)))
	}
	row("closed loop: tps", "%.0f", tps, &closed)
	row("closed loop: client cpu/tx (us)", "%.1f", cpu, &closed)
	row(fmt.Sprintf("%.0f tx/s (80%%): tps", highRate), "%.0f", tps, &high)
	row(fmt.Sprintf("%.0f tx/s (80%%): client cpu/tx (us)", highRate), "%.1f", cpu, &high)
	fmt.Printf("%-46s %11.2fx %11.2fx   goal <= 1.10x\n", "  against the tool's own closed loop",
		high.median(false, cpu)/closed.median(false, cpu), high.median(true, cpu)/closed.median(true, cpu))
	row(fmt.Sprintf("%.0f tx/s (80%%): schedule lag avg (ms)", highRate), "%.3f", lag, &high)
	row(fmt.Sprintf("%.0f tx/s (20%%): schedule lag avg (ms)", lowRate), "%.3f", lag, &low)
	row(fmt.Sprintf("%.0f tx/s (20%%): client cpu/tx (us)", lowRate), "%.1f", cpu, &low)
	row("50000 tx/s, 256 clients, no SQL: tx/s", "%.0f", tps, &sched)
	row("50000 tx/s, 256 clients, no SQL: lag avg (ms)", "%.3f", lag, &sched)
	row("50000 tx/s, 256 clients, no SQL: client cores", "%.2f", cores, &sched)
	fmt.Println(`
cpu/tx is each tool's own CPU time (user and system, from rusage) per transaction done;
the schedule lag is how long, on average, a transaction started after its arrival.`)
	return nil
}

var (
	tpsRe = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	lagRe = regexp.MustCompile(`rate limit schedule lag: avg ([0-9.]+)`)
)

func (b *bench) pgbenchRun(script []string, clients int, rate float64) (result, error) {
	args := append([]string{"-n"}, script...)
	args = append(args, "-M", "prepared", "-c", strconv.Itoa(clients), "-T", strconv.Itoa(b.secs))
	if rate > 0 {
		args = append(args, "-R", strconv.FormatFloat(rate, 'f', 0, 64))
	}
	out, ru, err := benchkit.Capture(b.pgbench, append(args, b.dsn)...)
	if err != nil {
		return result{}, err
	}
	m := tpsRe.FindSubmatch(out)
	if m == nil {
		return result{}, fmt.Errorf("pgbench printed no tps:\n%s", out)
	}
	var r result
	r.tps, _ = strconv.ParseFloat(string(m[1]), 64)
	if m := lagRe.FindSubmatch(out); m != nil {
		r.lagMs, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	r.fill(ru, float64(b.secs))
	return r, nil
}

func (b *bench) oursRun(script []string, clients int, rate float64) (result, error) {
	args := []string{"run", "tpcb", "--script", "select-only"}
	if script[0] == "-f" {
		args = []string{"run", "pgbench", "-f", script[1]}
	}
	args = append(args, "--protocol", "prepared", "--clients", strconv.Itoa(clients), "--duration", strconv.Itoa(b.secs),
		"--rate", strconv.FormatFloat(rate, 'f', 0, 64), "--json", "--results", b.results, "--dsn", b.dsn)
	out, ru, err := benchkit.Capture(b.bin, args...)
	if err != nil {
		return result{}, err
	}
	var sum struct {
		TPS  float64 `json:"tps"`
		Rate struct {
			LagAvgMs float64 `json:"schedule_lag_avg_ms"`
		} `json:"rate"`
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		return result{}, fmt.Errorf("pgbakeoff --json: %v\n%s", err, out)
	}
	r := result{tps: sum.TPS, lagMs: sum.Rate.LagAvgMs}
	r.fill(ru, float64(b.secs))
	return r, nil
}

// fill adds CPU per transaction and cores busy from the tool's resource usage.
func (r *result) fill(ru *syscall.Rusage, secs float64) {
	r.cpuUs = benchkit.CPUPerTx(ru, r.tps*secs)
	r.cores = benchkit.CPUSeconds(ru) / secs
}
