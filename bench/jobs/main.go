// Command jobs compares pgbakeoff's --jobs auto with fixed numbers of event loops on
// one local server: select-only at several client counts and tpcb-like, each
// setting in turn within every round, and prints the median tps of each, the loops
// auto ended on, and auto's ratio to the best fixed setting. With -pin the server's
// processes run on the first core and pgbakeoff on the others (taskset), as a client
// on a machine of its own would; without it they share every core.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "jobs:", err)
		os.Exit(1)
	}
}

type measure struct {
	script  string
	clients string
	tps     map[string][]float64
	loops   []float64 // auto's
}

func run() error {
	rounds := flag.Int("rounds", 5, "rounds, each running every setting once")
	duration := flag.Duration("duration", 10*time.Second, "length of each run")
	scale := flag.Int("scale", 20, "TPC-B scale")
	fixed := flag.String("fixed", "1,2", "fixed --jobs to compare auto with")
	pin := flag.Bool("pin", false, "server on the first core, pgbakeoff on the others (taskset)")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	if *pin && runtime.NumCPU() < 2 {
		return fmt.Errorf("-pin needs two cores at least")
	}
	ctx := context.Background()
	bin, srv, dir, cleanup, err := benchkit.Setup(ctx, *version, []localpg.Setting{{Name: "max_connections", Value: "300"}})
	if err != nil {
		return err
	}
	defer cleanup()
	if _, _, err := benchkit.Capture(bin, "init", "tpcb", "--scale", strconv.Itoa(*scale), "--dsn", srv.DSN()); err != nil {
		return err
	}
	var prefix []string
	if *pin {
		if err := pinServer(srv); err != nil {
			return err
		}
		prefix = []string{"taskset", "-c", "1-" + strconv.Itoa(runtime.NumCPU()-1)}
	}
	settings := append([]string{"auto"}, strings.Split(*fixed, ",")...)
	ms := []*measure{{script: "select-only", clients: "8"}, {script: "select-only", clients: "32"},
		{script: "select-only", clients: "128"}, {script: "tpcb-like", clients: "8"}}
	fmt.Printf("PostgreSQL %s, %d rounds of %s, scale %d, pinned %v\n", srv.Version, *rounds, *duration, *scale, *pin)
	cmd := append(prefix, bin)
	for _, m := range ms {
		if err := m.run(*rounds, settings, cmd, srv.DSN(), filepath.Join(dir, "results.db"), *duration); err != nil {
			return err
		}
	}
	fmt.Printf("\n%-26s", "measurement (median tps)")
	for _, j := range settings {
		fmt.Printf(" %10s", "--jobs "+j)
	}
	fmt.Printf(" %8s %12s\n", "loops", "auto / best")
	for _, m := range ms {
		fmt.Printf("%-26s", m.script+" "+m.clients+" clients")
		best := 0.0
		for _, j := range settings {
			med := benchkit.Median(m.tps[j])
			fmt.Printf(" %10.0f", med)
			if j != "auto" {
				best = max(best, med)
			}
		}
		fmt.Printf(" %8.0f %11.2fx\n", benchkit.Median(m.loops), benchkit.Median(m.tps["auto"])/best)
	}
	return nil
}

// run makes the measure's rounds: each runs every setting once, each round starting
// with another, so that none always runs first. cmd is pgbakeoff, behind taskset
// when pinned.
func (m *measure) run(rounds int, settings, cmd []string, dsn, results string, duration time.Duration) error {
	m.tps = map[string][]float64{}
	for i := range rounds {
		for k := range settings {
			j := settings[(i+k)%len(settings)]
			args := append(append([]string{}, cmd[1:]...), "run", "tpcb", "--script", m.script, "--clients", m.clients,
				"--jobs", j, "--duration", duration.String(), "--json", "--results", results, "--dsn", dsn)
			out, _, err := benchkit.Capture(cmd[0], args...)
			if err != nil {
				return err
			}
			var sum struct {
				TPS       float64 `json:"tps"`
				ClientCPU struct {
					EventLoops int `json:"event_loops"`
				} `json:"client_cpu"`
			}
			if err := json.Unmarshal(out, &sum); err != nil {
				return fmt.Errorf("pgbakeoff --json: %v\n%s", err, out)
			}
			m.tps[j] = append(m.tps[j], sum.TPS)
			if j == "auto" {
				m.loops = append(m.loops, float64(sum.ClientCPU.EventLoops))
			}
		}
		fmt.Printf("%s %s clients round %d:", m.script, m.clients, i+1)
		for _, j := range settings {
			fmt.Printf(" --jobs %s %.0f tps;", j, m.tps[j][i])
		}
		fmt.Printf(" auto ended on %.0f loops\n", m.loops[i])
	}
	return nil
}

// pinServer puts the server's postmaster and every process it has started on the
// first core; the backends it forks later inherit that.
func pinServer(srv *localpg.Server) error {
	pid := strconv.Itoa(srv.PID)
	pids := []string{pid}
	if out, err := exec.Command("pgrep", "-P", pid).Output(); err == nil {
		pids = append(pids, strings.Fields(string(out))...)
	}
	for _, p := range pids {
		if out, err := exec.Command("taskset", "-p", "-c", "0", p).CombinedOutput(); err != nil {
			return fmt.Errorf("taskset %s: %v: %s", p, err, out)
		}
	}
	return nil
}
