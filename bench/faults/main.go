// Command faults injects the faults real deployments suffer into runs against a
// local server and prints, per scenario, whether the run completed, how many
// intervals were stored, the outage pgbakeoff measured against the one injected, and
// whether any result was lost.
//
//	go run ./bench/faults [-duration 20s] [-clients 4]
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	_ "github.com/pgbakeoff/pgbakeoff/internal/store" // the sqlite driver
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
}

// scenario injects one fault into a run in progress and returns how long the server
// was unavailable, as the injector saw it (negative: it does not come back).
type scenario struct {
	name   string
	args   []string
	inject func(ctx context.Context, f *fixture) (time.Duration, error)
}

type fixture struct {
	srv  *localpg.Server
	opts localpg.Options
	dsn  string
}

// restart starts the server again on its port and says when it accepts connections.
func (f *fixture) restart(ctx context.Context) error {
	f.opts.Port = f.srv.Port
	srv, err := localpg.Start(ctx, f.opts)
	if err != nil {
		return err
	}
	f.srv = srv
	return nil
}

func run() error {
	duration := flag.Duration("duration", 20*time.Second, "length of each run")
	clients := flag.Int("clients", 4, "clients")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	ctx := context.Background()
	bin, srv, dir, cleanup, err := benchkit.Setup(ctx, *version, []localpg.Setting{{Name: "fsync", Value: "off"}})
	if err != nil {
		return err
	}
	defer func() { cleanup() }()
	f := &fixture{srv: srv, dsn: srv.TCPDSN(), opts: localpg.Options{Name: "bench", Install: &localpg.Install{BinDir: srv.BinDir, Version: srv.Version, Major: srv.Major},
		BaseDir: filepath.Join(dir, "servers"), Settings: []localpg.Setting{{Name: "fsync", Value: "off"}}}}
	if out, err := exec.Command(bin, "init", "tpcb", "--scale", "10", "--dsn", f.dsn).CombinedOutput(); err != nil {
		return fmt.Errorf("init: %v\n%s", err, out)
	}

	scenarios := []scenario{
		{"backends terminated", nil, func(ctx context.Context, f *fixture) (time.Duration, error) {
			out, err := exec.Command("psql", f.dsn, "-qAtc", "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name like 'pgbakeoff-run-%'").CombinedOutput()
			if err != nil {
				return 0, fmt.Errorf("terminate: %v: %s", err, out)
			}
			return 0, nil
		}},
		{"server SIGKILLed, restarted after 3 s", nil, func(ctx context.Context, f *fixture) (time.Duration, error) {
			start := time.Now()
			if err := f.srv.Signal(syscall.SIGKILL); err != nil {
				return 0, err
			}
			time.Sleep(3 * time.Second)
			err := f.restart(ctx)
			return time.Since(start), err
		}},
		{"server stopped for good (--outage-timeout 5s)", []string{"--outage-timeout", "5s"}, func(ctx context.Context, f *fixture) (time.Duration, error) {
			return -1, f.srv.Stop(ctx) // it does not come back
		}},
	}
	fmt.Printf("%-46s %-10s %9s %10s %12s %12s %s\n", "scenario", "status", "intervals", "reconnects", "measured s", "injected s", "results lost")
	results := filepath.Join(dir, "results.db")
	for _, sc := range scenarios {
		if !f.srv.Running() {
			if err := f.restart(ctx); err != nil {
				return err
			}
		}
		args := append([]string{"run", "tpcb", "--clients", fmt.Sprint(*clients), "--duration", duration.String(), "--json",
			"--results", results, "--dsn", f.dsn}, sc.args...)
		cmd := exec.Command(bin, args...)
		var out []byte
		done := make(chan error, 1)
		go func() {
			var err error
			out, err = cmd.Output()
			done <- err
		}()
		time.Sleep(*duration / 3)
		injected, err := sc.inject(ctx, f)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		<-done // a non-zero exit is an outcome here, not a failure of the benchmark
		var sum struct {
			RunID      int64  `json:"run_id"`
			Status     string `json:"status"`
			Reconnects int    `json:"reconnects"`
			Outages    []struct {
				Seconds float64 `json:"seconds"`
			} `json:"outages"`
		}
		if err := json.Unmarshal(out, &sum); err != nil {
			return fmt.Errorf("%s: no summary: %v\n%s", sc.name, err, out)
		}
		longest := 0.0
		for _, o := range sum.Outages {
			longest = max(longest, o.Seconds)
		}
		stored, lost, err := check(results, sum.RunID, *duration)
		if err != nil {
			return err
		}
		away := fmt.Sprintf("%.1f", injected.Seconds())
		if injected < 0 {
			away = "not back"
		}
		fmt.Printf("%-46s %-10s %9d %10d %12.1f %12s %s\n", sc.name, sum.Status, stored, sum.Reconnects, longest, away, lost)
	}
	fmt.Println("\nmeasured s is the longest outage a client saw; injected s how long the server was away as the injector saw it.")
	return nil
}

// check reads what the store kept of a run: its intervals, and whether any second
// of the run before its end is missing.
func check(results string, runID int64, duration time.Duration) (int, string, error) {
	db, err := sql.Open("sqlite", results)
	if err != nil {
		return 0, "", err
	}
	defer db.Close()
	var n, maxSeq int
	var status string
	if err := db.QueryRow("select count(*), coalesce(max(seq), 0) from intervals where run_id = ?", runID).Scan(&n, &maxSeq); err != nil {
		return 0, "", err
	}
	if err := db.QueryRow("select status from runs where id = ?", runID).Scan(&status); err != nil {
		return 0, "", err
	}
	lost := "none"
	if n != maxSeq+1 && n != maxSeq {
		lost = fmt.Sprintf("%d intervals missing", maxSeq+1-n)
	}
	if status == "running" {
		lost += "; the run was never finished"
	}
	return n, lost, nil
}
