package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var tpccKind = kind{
	name:      "tpcc",
	marked:    "warehouse",
	initShort: "Load HammerDB's TPROC-C schema and data (TPC-C clause 4.3), with parallel COPY",
	initExample: `  pgbakeoff init tpcc --warehouses 100 --dsn "$DSN"
  pgbakeoff init tpcc --procedures-only --dsn "$DSN"   # add the server-mode functions to a HammerDB database`,
	runShort: "Run TPC-C's five transactions as HammerDB's TPROC-C does, reporting NOPM and TPM",
	runExample: `  pgbakeoff run tpcc --clients 16 --warmup 2m --duration 5m --dsn "$DSN"
  pgbakeoff run tpcc --mode client-sql --clients 16 --duration 5m --dsn "$DSN"`,
	loadFlags: tpccLoadFlags,
	runFlags:  tpccRunFlags,
}

// tpccLoadFlags are init tpcc's options.
func tpccLoadFlags(fl *pflag.FlagSet) *dataset {
	opt := &tpcc.LoadOptions{}
	var proceduresOnly bool
	fl.IntVarP(&opt.Warehouses, "warehouses", "w", 1, "warehouses (about 100 MB each)")
	fl.IntVarP(&opt.Workers, "jobs", "j", 2, "parallel loading connections")
	fl.BoolVar(&opt.Partition, "partition", false, "partition order_line by warehouse, as HammerDB offers for large counts")
	fl.Uint64Var(&opt.Seed, "seed", 0, "data seed (0: the fixed default, so loads are reproducible)")
	fl.BoolVar(&proceduresOnly, "procedures-only", false, "only (re)create the server-mode functions, keeping the data")
	return &dataset{
		validate: func() error {
			if proceduresOnly {
				return nil
			}
			if err := checkJobs(opt.Workers); err != nil {
				return err
			}
			return opt.Validate()
		},
		describe: func() string { return fmt.Sprintf("TPC-C %d warehouses", opt.Warehouses) },
		bytes:    func() int64 { return int64(opt.Warehouses) * (100 << 20) },
		params: func() string {
			if proceduresOnly {
				return ""
			}
			return opt.Params()
		},
		load: func(ctx context.Context, env *Env, t *target.Target, resume bool) error {
			if proceduresOnly {
				conn, err := t.Connect(ctx)
				if err != nil {
					return err
				}
				defer conn.Close(context.Background())
				if err := tpcc.CreateProcedures(ctx, conn); err != nil {
					return fmt.Errorf("create the TPC-C functions: %w", err)
				}
				fmt.Fprintf(env.Stdout, "created the five TPC-C functions in %s\n", t)
				return nil
			}
			fmt.Fprintf(env.Stderr, "loading TPC-C with %d warehouses into %s\n", opt.Warehouses, t)
			o := *opt
			o.Resume = resume
			return loadDataset(ctx, env, t, "tpcc", func(connect load.Connector, p *load.Progress) (load.Phases, error) {
				return tpcc.Load(ctx, connect, o, p)
			})
		},
	}
}

// tpccFlags are run tpcc's own options.
type tpccFlags struct {
	warehouses int
	opt        tpcc.RunOptions
}

func tpccRunFlags(env *Env, fl *pflag.FlagSet, f *runFlags) func() engine.Workload {
	var tf tpccFlags
	fl.IntVarP(&tf.warehouses, "warehouses", "w", 0, "expected warehouses; checked against the data (default: detected)")
	fl.StringVar(&tf.opt.Mode, "mode", tpcc.ModeServer, "server (PL/pgSQL functions, one round trip each) or client-sql (prepared statements)")
	fl.StringVar(&tf.opt.Mix, "mix", "spec", "transaction mix: spec (45/43/4/4/4) or hammerdb (10/10/1/1/1)")
	fl.BoolVar(&tf.opt.AllWarehouses, "all-warehouses", false, "each client works across its share of all warehouses")
	fl.BoolVar(&tf.opt.KeyingThinking, "keying-thinking", false, "add the specification's keying and thinking times")
	fl.StringVar(&tf.opt.Isolation, "isolation", "", "client-sql isolation level: read-committed, repeatable-read or serializable")
	fl.StringVar(&f.dist, "dist", "nurand", "distribution of customers and items: nurand (the specification's), or uniform, pareto[:h], zipfian[:exp], special, ...")
	// TPC-C's New-Orders and Deliveries deadlock now and then; they are retried.
	addRunFlags(fl, f, 10, nil)
	f.protocol = "prepared"
	return func() engine.Workload { return tpccWorkload(env, *f, tf) }
}

func tpccWorkload(env *Env, f runFlags, tf tpccFlags) engine.Workload {
	check := func() error {
		opt := tf.opt
		opt.Warehouses = max(tf.warehouses, 1)
		if tf.warehouses < 0 {
			return fmt.Errorf("--warehouses must be positive, got %d", tf.warehouses)
		}
		if f.dist != "" && f.dist != "nurand" {
			spec, err := keydist.Parse(f.dist)
			if err != nil {
				return fmt.Errorf("--dist: %w (or nurand, the default)", err)
			}
			opt.Dist = &spec
		}
		_, err := tpcc.Scripts(opt)
		return err
	}
	return engine.Workload{Name: "tpcc", Check: check, Setup: func(ctx context.Context, t *target.Target, ctl *pgconn.PgConn) (*engine.Setup, error) {
		var dist *keydist.Spec
		if f.dist != "" && f.dist != "nurand" {
			spec, err := keydist.Parse(f.dist)
			if err != nil {
				return nil, usageError{fmt.Errorf("--dist: %w (or nurand, the default)", err)}
			}
			dist = &spec
		}
		w, err := detectWarehouses(ctx, t, ctl)
		if err != nil {
			return nil, err
		}
		if tf.warehouses < 0 {
			return nil, usageError{fmt.Errorf("--warehouses must be positive, got %d", tf.warehouses)}
		}
		if tf.warehouses != 0 && tf.warehouses != w {
			return nil, fmt.Errorf("--warehouses %d does not match the data: the database was loaded with %d warehouses", tf.warehouses, w)
		}
		opt := tf.opt
		opt.Warehouses = w
		opt.Dist = dist
		scripts, err := tpcc.Scripts(opt)
		if err != nil {
			return nil, usageError{err}
		}
		if opt.Mode == tpcc.ModeServer || opt.Mode == "" {
			missing, err := tpcc.MissingProcedures(ctx, ctl)
			if err != nil {
				return nil, err
			}
			if len(missing) > 0 {
				return nil, fmt.Errorf("server mode needs the TPC-C functions %s, which %s lacks: create them with `pgbakeoff init tpcc --procedures-only --dsn ...`, or use --mode client-sql",
					strings.Join(missing, ", "), t)
			}
			opt.Mode = tpcc.ModeServer
		}
		if f.clients > 10*w {
			fmt.Fprintf(env.Stderr, "warning: %d clients on %d warehouses is beyond the specification's 10 terminals per warehouse\n", f.clients, w)
		}
		var fig engine.TPCCFigures
		fig.Mode, fig.Mix, fig.Warehouses = opt.Mode, opt.Mix, w
		var orders, cluster, db [2]int64
		window := func(ctx context.Context, ctl *pgconn.PgConn, open bool, own int64) error {
			i := 1
			if open {
				i = 0
			}
			// One statement, so both TPMs come from the same statistics snapshot.
			rows, err := target.Query(ctx, ctl, `select (select sum(d_next_o_id) from district),
				(select sum(xact_commit + xact_rollback) from pg_stat_database),
				(select xact_commit + xact_rollback from pg_stat_database where datname = current_database())`)
			if err == nil && (len(rows) != 1 || len(rows[0]) != 3) {
				err = errors.New("unexpected result")
			}
			if err != nil {
				return fmt.Errorf("read NOPM and cluster TPM: %w", err)
			}
			orders[i], _ = strconv.ParseInt(rows[0][0], 10, 64)
			cluster[i], _ = strconv.ParseInt(rows[0][1], 10, 64)
			db[i], _ = strconv.ParseInt(rows[0][2], 10, 64)
			// The sampler's own queries are not the workload's transactions.
			cluster[i] -= own
			db[i] -= own
			return nil
		}
		finish := func(sum *engine.Summary, res *driver.Result) {
			mins := res.WindowEnd.Sub(res.WindowStart).Minutes()
			if mins <= 0 {
				return
			}
			fig.NOPM = float64(orders[1]-orders[0]) / mins
			fig.TPMCluster = float64(cluster[1]-cluster[0]) / mins
			fig.TPM = float64(db[1]-db[0]) / mins
			for _, s := range res.Scripts {
				if s.Name == tpcc.NewOrder {
					fig.ClientNewOrdersPerMin = float64(s.Committed) / mins
				}
			}
			if fig.ClientNewOrdersPerMin > 0 {
				fig.NOPMDiffPct = 100 * (fig.NOPM - fig.ClientNewOrdersPerMin) / fig.ClientNewOrdersPerMin
				if d := fig.NOPMDiffPct; (d > 2 || d < -2) && fig.NOPM > 100 {
					sum.Warnings = append(sum.Warnings, fmt.Sprintf("NOPM from the database (%.0f) and the clients' committed New-Orders per minute (%.0f) are %.1f%% apart: something else changed the districts", fig.NOPM, fig.ClientNewOrdersPerMin, d))
				}
			}
			if opt.KeyingThinking {
				fig.EfficiencyPct = 100 * fig.NOPM / (12.86 * float64(w))
			}
			for _, s := range sum.Scripts {
				limit := 5000.0
				if s.Name == tpcc.StockLevel {
					limit = 20000
				}
				rt := engine.ResponseTime{Transaction: s.Name, P90Ms: s.LatencyMs.P90, LimitMs: limit, Passed: s.LatencyMs.P90 <= limit}
				fig.ResponseTimes = append(fig.ResponseTimes, rt)
				if !rt.Passed {
					sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s's 90th percentile response time %.0f ms is over TPC-C's limit of %.0f ms", s.Name, rt.P90Ms, limit))
				}
			}
			sum.TPCCFigures = &fig
		}
		return &engine.Setup{Scripts: scripts, Scale: w, Size: fmt.Sprintf("%d warehouses, %s mode", w, opt.Mode), Deck: true,
			Params: map[string]any{"warehouses": w, "mode": opt.Mode, "mix": opt.Mix, "all_warehouses": opt.AllWarehouses, "dist": f.dist,
				"keying_thinking": opt.KeyingThinking, "isolation": opt.Isolation},
			Window: window, Finish: finish}, nil
	}}
}

func newCheckCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check a loaded database's consistency",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSub("tpcc"),
	}
	var dsn string
	tpccCmd := &cobra.Command{
		Use:     "tpcc",
		Short:   "Check TPC-C's consistency conditions (clause 3.3.2, 1 to 12)",
		Args:    cobra.NoArgs,
		Example: `  pgbakeoff check tpcc --dsn "$DSN"`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop, t, conn, err := openTarget(cmd, env, dsn)
			if err != nil {
				return err
			}
			defer stop()
			defer conn.Close(context.Background())
			w, err := detectWarehouses(ctx, t, conn)
			if err != nil {
				return err
			}
			start := time.Now()
			report, err := tpcc.Check(ctx, conn)
			if err != nil {
				return fmt.Errorf("check tpcc: %w", err)
			}
			if note := report.Note(); note != "" {
				fmt.Fprintln(env.Stdout, note)
			}
			results := report.Results
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			failed := 0
			for _, r := range results {
				state := "passed"
				switch {
				case r.Skipped:
					state = "n/a"
				case !r.Passed:
					state = "FAILED"
					failed++
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", strconv.Itoa(r.Number), state, r.Name, r.Detail)
			}
			tw.Flush()
			fmt.Fprintf(env.Stdout, "%d warehouses, %d conditions checked in %s\n", w, len(results), time.Since(start).Round(time.Millisecond))
			if failed > 0 {
				return fmt.Errorf("%d of %d TPC-C consistency conditions failed", failed, len(results))
			}
			return nil
		},
	}
	tpccCmd.Flags().StringVar(&dsn, "dsn", "", "target: libpq URI or key=value DSN (default: PG* environment variables)")
	cmd.AddCommand(tpccCmd)
	return cmd
}

// detectWarehouses reads the warehouse count, with the advice to load first when the
// tables are missing.
func detectWarehouses(ctx context.Context, t *target.Target, conn *pgconn.PgConn) (int, error) {
	w, err := tpcc.DetectWarehouses(ctx, conn)
	if errors.Is(err, tpcc.ErrNotLoaded) {
		return 0, fmt.Errorf("%s has no TPC-C tables: run `pgbakeoff init tpcc --warehouses N` first", t)
	}
	return w, err
}
