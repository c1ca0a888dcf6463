// Command metrics measures what --metrics-listen costs: TPC-B select-only runs of
// pgbakeoff on one local server, each round one run serving its metrics and
// scraped every second and one without, taking turns in which goes first. It
// prints the medians of the rounds' throughput and client CPU per transaction and
// the median of the rounds' ratios; the goal is within 2% on both.
//
//	go run ./bench/metrics                  # 5 rounds of 20 s runs, 8 clients
//	go run ./bench/metrics -rounds 7 -clients 16 -version 17
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// result is one run: its throughput and its client CPU per transaction.
type result struct{ tps, cpuUs float64 }

type bench struct {
	bin, dsn, results string
	clients           int
	duration          time.Duration
}

func run() error {
	rounds := flag.Int("rounds", 5, "alternating rounds")
	duration := flag.Duration("duration", 20*time.Second, "length of each run's window")
	clients := flag.Int("clients", 8, "clients of each run")
	scale := flag.Int("scale", 10, "TPC-B scale loaded")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	ctx := context.Background()
	bin, srv, dir, cleanup, err := benchkit.Setup(ctx, *version, nil)
	if err != nil {
		return err
	}
	defer cleanup()
	b := &bench{bin: bin, dsn: srv.DSN(), results: filepath.Join(dir, "results.db"), clients: *clients, duration: *duration}
	if _, err := benchkit.Timed(bin, "init", "tpcb", "--scale", strconv.Itoa(*scale), "--dsn", b.dsn); err != nil {
		return err
	}
	fmt.Printf("PostgreSQL %s, select-only at scale %d, %d clients, %d rounds of %s runs\n\n", srv.Version, *scale, *clients, *rounds, *duration)

	var without, with []result
	for i := range *rounds {
		err := benchkit.InTurn(i, func() error {
			r, err := b.run(false)
			without = append(without, r)
			return err
		}, func() error {
			r, err := b.run(true)
			with = append(with, r)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Printf("round %d: without %.0f tps, %.2f us/tx; with metrics scraped %.0f tps, %.2f us/tx\n",
			i+1, without[i].tps, without[i].cpuUs, with[i].tps, with[i].cpuUs)
	}
	col := func(rs []result, f func(result) float64) []float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, f(r))
		}
		return v
	}
	tps := func(r result) float64 { return r.tps }
	cpu := func(r result) float64 { return r.cpuUs }
	fmt.Printf("\n%-28s %12s %12s %10s\n", "median", "without", "with", "ratio")
	fmt.Printf("%-28s %12.0f %12.0f %9.3fx   goal >= 0.98x\n", "tps",
		benchkit.Median(col(without, tps)), benchkit.Median(col(with, tps)), benchkit.MedianRatio(col(with, tps), col(without, tps)))
	fmt.Printf("%-28s %12.2f %12.2f %9.3fx   goal <= 1.02x\n", "client cpu/tx (us)",
		benchkit.Median(col(without, cpu)), benchkit.Median(col(with, cpu)), benchkit.MedianRatio(col(with, cpu), col(without, cpu)))
	fmt.Println(`
cpu/tx is pgbakeoff's own CPU time (user and system, from rusage) per transaction of
the window; the ratio is the median of each round's with/without.`)
	return nil
}

// run makes one run, with its metrics served and scraped every second when
// scraped is set.
func (b *bench) run(scraped bool) (result, error) {
	args := []string{"run", "tpcb", "--script", "select-only", "--protocol", "prepared", "--clients", strconv.Itoa(b.clients),
		"--duration", b.duration.String(), "--json", "--results", b.results, "--dsn", b.dsn}
	stop := make(chan struct{})
	scrapes := make(chan int, 1)
	if scraped {
		addr, err := freeAddr()
		if err != nil {
			return result{}, err
		}
		args = append(args, "--metrics-listen", addr)
		go scrape(addr, stop, scrapes)
	}
	out, ru, err := benchkit.Capture(b.bin, args...)
	close(stop)
	if err != nil {
		return result{}, err
	}
	if scraped {
		if n := <-scrapes; n < int(b.duration.Seconds())/2 {
			return result{}, fmt.Errorf("only %d scrapes answered during a %s run", n, b.duration)
		}
	}
	var sum struct {
		TPS          float64 `json:"tps"`
		Transactions float64 `json:"transactions"`
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		return result{}, fmt.Errorf("pgbakeoff --json: %v\n%s", err, out)
	}
	return result{tps: sum.TPS, cpuUs: benchkit.CPUPerTx(ru, sum.Transactions)}, nil
}

// scrape reads addr's metrics once a second, as Prometheus would, until stop,
// and then sends how many scrapes were answered.
func scrape(addr string, stop <-chan struct{}, answered chan<- int) {
	n := 0
	t := time.NewTicker(time.Second)
	defer t.Stop()
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		select {
		case <-stop:
			answered <- n
			return
		case <-t.C:
			resp, err := client.Get("http://" + addr + "/metrics")
			if err != nil {
				continue // not listening yet, or already gone
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				n++
			}
		}
	}
}

// freeAddr is a local port nobody listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
