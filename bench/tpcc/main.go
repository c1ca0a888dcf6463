// Command tpcc measures pgbakeoff's TPC-C on one local server: the load of 10
// warehouses against `pgbench -i -s 100` on the same server as a yardstick of the
// machine's speed (alternating, medians), then NOPM, TPM and client CPU per
// transaction in server mode and client-sql mode.
//
//	go run ./bench/tpcc                       # 3 load rounds, 3-minute windows after 1 minute of warm-up
//	go run ./bench/tpcc -duration 60s -warmup 20s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
)

// Figures the issue quotes for this machine and server, measured one tool at a time.
const (
	hammerdbNOPM     = 105432 // stored procedures, 4 virtual users, 10 warehouses
	hammerdbCPUPerTx = 35.0   // us
	gotpcTpmC        = 68780  // client SQL, 4 threads
	gotpcCPUPerTx    = 210.0  // us
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	rounds := flag.Int("rounds", 3, "alternating load rounds")
	warehouses := flag.Int("warehouses", 10, "warehouses")
	clients := flag.Int("clients", 4, "clients for the runs")
	warmup := flag.Duration("warmup", time.Minute, "warm-up before each measured window")
	duration := flag.Duration("duration", 3*time.Minute, "measured window per mode")
	version := flag.String("version", "", "PostgreSQL version (default: newest installed)")
	flag.Parse()
	ctx := context.Background()

	bin, srv, dir, cleanup, err := benchkit.Setup(ctx, *version, nil)
	if err != nil {
		return err
	}
	defer cleanup()
	pgbench, err := benchkit.Pgbench(srv)
	if err != nil {
		return err
	}
	conn, err := pgconn.Connect(ctx, srv.DSN())
	if err != nil {
		return err
	}
	for _, db := range []string{"pgb", "tpcc"} {
		if err := conn.Exec(ctx, "create database "+db).Close(); err != nil {
			return err
		}
	}
	conn.Close(ctx)
	dsn := func(db string) string { return strings.Replace(srv.DSN(), "dbname=postgres", "dbname="+db, 1) }
	fmt.Printf("PostgreSQL %s, %d warehouses, %d clients, %s warm-up, %s windows\n\n", srv.Version, *warehouses, *clients, *warmup, *duration)

	var pgb, ours []float64
	for i := range *rounds {
		t, err := benchkit.Timed(pgbench, "-i", "-q", "-s", "100", dsn("pgb"))
		if err != nil {
			return err
		}
		pgb = append(pgb, t)
		t, err = benchkit.Timed(bin, "init", "tpcc", "--warehouses", strconv.Itoa(*warehouses), "--dsn", dsn("tpcc"))
		if err != nil {
			return err
		}
		ours = append(ours, t)
		fmt.Printf("load round %d: pgbench -i -s 100 %.2f s, pgbakeoff init tpcc %.2f s\n", i+1, pgb[i], ours[i])
	}

	type figures struct {
		NOPM         float64 `json:"nopm"`
		TPM          float64 `json:"tpm"`
		TPMCluster   float64 `json:"tpm_cluster"`
		CommitsTotal float64 `json:"commits_total"`
		ClientCPU    struct {
			PerTxUs float64 `json:"per_tx_us"`
		} `json:"client_cpu"`
	}
	got := map[string]figures{}
	for _, mode := range []string{"server", "client-sql"} {
		out, _, err := benchkit.Capture(bin, "run", "tpcc", "--mode", mode, "--clients", strconv.Itoa(*clients), "--warmup", warmup.String(),
			"--duration", duration.String(), "--json", "--results", filepath.Join(dir, "results.db"), "--dsn", dsn("tpcc"))
		if err != nil {
			return err
		}
		var f figures
		if err := json.Unmarshal(out, &f); err != nil {
			return fmt.Errorf("run --json: %v\n%s", err, out)
		}
		got[mode] = f
		fmt.Printf("%s mode: NOPM %.0f, TPM %.0f (cluster %.0f), client CPU %.1f us per transaction\n", mode, f.NOPM, f.TPM, f.TPMCluster, f.ClientCPU.PerTxUs)
		if out, _, err := benchkit.Capture(bin, "check", "tpcc", "--dsn", dsn("tpcc")); err != nil {
			return fmt.Errorf("check after %s mode: %v\n%s", mode, err, out)
		}
	}

	lp, lo := benchkit.Median(pgb), benchkit.Median(ours)
	fmt.Printf("\n%-44s %12s %12s %8s %s\n", "measurement (median)", "reference", "pgbakeoff", "ratio", "goal")
	fmt.Printf("%-44s %11.2fs %11.2fs %7.2fx %s\n", fmt.Sprintf("load %d warehouses vs pgbench -i -s 100", *warehouses), lp, lo, lo/lp, "<= 2.1x")
	s, c := got["server"], got["client-sql"]
	fmt.Printf("%-44s %12d %12.0f %7.2fx %s\n", "server mode NOPM vs HammerDB (issue's figure)", hammerdbNOPM, s.NOPM, s.NOPM/hammerdbNOPM, ">= 1.0x")
	fmt.Printf("%-44s %11.0fus %11.1fus %8s %s\n", "  client CPU per transaction", hammerdbCPUPerTx, s.ClientCPU.PerTxUs, "", "less")
	fmt.Printf("%-44s %12d %12.0f %7.2fx %s\n", "client-sql NOPM vs go-tpc tpmC (issue's)", gotpcTpmC, c.NOPM, c.NOPM/gotpcTpmC, "> 1.0x")
	fmt.Printf("%-44s %11.0fus %11.1fus\n", "  client CPU per transaction", gotpcCPUPerTx, c.ClientCPU.PerTxUs)
	fmt.Println("\nThe HammerDB and go-tpc figures are the issue's, measured on this kind of machine one tool at a time; absolute figures drift by 30% between runs here.")
	return nil
}
