package tpcc

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/spf13/pflag"
)

// Workload is TPC-C as HammerDB's TPROC-C runs it.
type Workload struct{}

func (Workload) Name() string { return "tpcc" }

func (Workload) RunHelp() (short, example string) {
	return "Run TPC-C's five transactions as HammerDB's TPROC-C does, reporting NOPM and TPM",
		`  pgbakeoff run tpcc --clients 16 --warmup 2m --duration 5m --dsn "$DSN"
  pgbakeoff run tpcc --mode client-sql --clients 16 --duration 5m --dsn "$DSN"`
}

func (Workload) LoadHelp() (short, example string) {
	return "Load HammerDB's TPROC-C schema and data (TPC-C clause 4.3), with parallel COPY",
		`  pgbakeoff init tpcc --warehouses 100 --dsn "$DSN"
  pgbakeoff init tpcc --procedures-only --dsn "$DSN"   # add the server-mode functions to a HammerDB database`
}

func (Workload) VerifyHelp() (short, example string) {
	return "Check TPC-C's consistency conditions (clause 3.3.2, 1 to 12)", `  pgbakeoff check tpcc --dsn "$DSN"`
}

func (Workload) NewRun() engine.Workload {
	return &Run{Opt: RunOptions{Mode: ModeServer, Mix: "spec"}, Dist: "nurand"}
}

func (Workload) NewLoad() load.Dataset {
	return &Dataset{LoadOptions: LoadOptions{Warehouses: 1, Sharding: load.Sharding{Workers: 2}}}
}

func (Workload) NewFigures() engine.Figures { return &Figures{} }

func (Workload) Measures() engine.Measures {
	return engine.Measures{Headline: "NOPM", Rates: []string{"TPM"}}
}

// Verify checks the consistency conditions and prints each one's outcome.
func (Workload) Verify(ctx context.Context, t *target.Target, conn *pgconn.PgConn, w io.Writer) error {
	wh, err := detectWarehouses(ctx, t, conn)
	if err != nil {
		return err
	}
	start := time.Now()
	report, err := Check(ctx, conn)
	if err != nil {
		return fmt.Errorf("check tpcc: %w", err)
	}
	if note := report.Note(); note != "" {
		fmt.Fprintln(w, note)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	failed := 0
	for _, r := range report.Results {
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
	fmt.Fprintf(w, "%d warehouses, %d conditions checked in %s\n", wh, len(report.Results), time.Since(start).Round(time.Millisecond))
	if failed > 0 {
		return fmt.Errorf("%d of %d TPC-C consistency conditions failed", failed, len(report.Results))
	}
	return nil
}

// detectWarehouses reads the warehouse count, with the advice to load first when
// the tables are missing.
func detectWarehouses(ctx context.Context, t fmt.Stringer, conn *pgconn.PgConn) (int, error) {
	w, err := DetectWarehouses(ctx, conn)
	if errors.Is(err, ErrNotLoaded) {
		return 0, fmt.Errorf("%s has no TPC-C tables: run `pgbakeoff init tpcc --warehouses N` first", t)
	}
	return w, err
}

// Run is a TPC-C run's own options.
type Run struct {
	Warehouses int // the warehouses the data must have; 0 takes what it has
	Opt        RunOptions
	Dist       string // nurand, or a keydist.Parse distribution of customers and items
}

func (r *Run) Name() string { return "tpcc" }

func (r *Run) Flags(fs *pflag.FlagSet) {
	o := &r.Opt
	fs.IntVarP(&r.Warehouses, "warehouses", "w", r.Warehouses, "expected warehouses; checked against the data (default: detected)")
	fs.StringVar(&o.Mode, "mode", o.Mode, "server (PL/pgSQL functions, one round trip each) or client-sql (prepared statements)")
	fs.StringVar(&o.Mix, "mix", o.Mix, "transaction mix: spec (45/43/4/4/4) or hammerdb (10/10/1/1/1)")
	fs.BoolVar(&o.AllWarehouses, "all-warehouses", o.AllWarehouses, "each client works across its share of all warehouses")
	fs.BoolVar(&o.KeyingThinking, "keying-thinking", o.KeyingThinking, "add the specification's keying and thinking times")
	fs.StringVar(&o.Isolation, "isolation", o.Isolation, "client-sql isolation level: read-committed, repeatable-read or serializable")
	fs.StringVar(&r.Dist, "dist", r.Dist, "distribution of customers and items: nurand (the specification's), or uniform, pareto[:h], zipfian[:exp], special, ...")
}

// Defaults: TPC-C's New-Orders and Deliveries deadlock now and then; they are
// retried.
func (r *Run) Defaults(s *engine.Settings) { s.MaxTries = 10 }

// options are the run options for w warehouses, with the key distribution.
func (r *Run) options(w int) (RunOptions, error) {
	opt := r.Opt
	opt.Warehouses = w
	if r.Dist != "" && r.Dist != "nurand" {
		d, err := keydist.Parse(r.Dist)
		if err != nil {
			return opt, engine.FieldErrorf("dist", ": %w (or nurand, the default)", err)
		}
		opt.Dist = &d
	}
	return opt, nil
}

func (r *Run) Check(spec *engine.Spec) error {
	if r.Warehouses < 0 {
		return engine.FieldErrorf("warehouses", "must be positive, got %d", r.Warehouses)
	}
	if r.Opt.KeyingThinking && spec.Rate > 0 {
		return engine.FieldErrorf("keying_thinking", "paces each terminal itself and a rate paces the arrivals: give one or the other")
	}
	opt, err := r.options(max(r.Warehouses, 1))
	if err != nil {
		return err
	}
	_, err = Scripts(opt)
	return err
}

func (r *Run) Setup(ctx context.Context, spec *engine.Spec, env *engine.Env, ctl *pgconn.PgConn) (*engine.Setup, error) {
	w, err := detectWarehouses(ctx, spec.Target, ctl)
	if err != nil {
		return nil, err
	}
	if r.Warehouses != 0 && r.Warehouses != w {
		return nil, engine.MismatchErrorf("warehouses", "%d does not match the data: the database was loaded with %d warehouses", r.Warehouses, w)
	}
	opt, err := r.options(w)
	if err != nil {
		return nil, err
	}
	scripts, err := Scripts(opt)
	if err != nil {
		return nil, err
	}
	if opt.Mode == ModeServer || opt.Mode == "" {
		missing, err := MissingProcedures(ctx, ctl)
		if err != nil {
			return nil, err
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("server mode needs the TPC-C functions %s, which %s lacks: create them with `pgbakeoff init tpcc --procedures-only --dsn ...`, or use --mode client-sql",
				strings.Join(missing, ", "), spec.Target)
		}
		opt.Mode = ModeServer
	}
	if spec.Clients > 10*w && env.Log != nil {
		fmt.Fprintf(env.Log, "warning: %d clients on %d warehouses is beyond the specification's 10 terminals per warehouse\n", spec.Clients, w)
	}
	m := &meter{fig: Figures{Mode: opt.Mode, Mix: opt.Mix, Warehouses: w}, keyingThinking: opt.KeyingThinking, shard: spec.Shard.On()}
	return &engine.Setup{Scripts: scripts, Scale: w, Size: fmt.Sprintf("%d warehouses, %s mode", w, opt.Mode), Deck: true,
		Params: map[string]any{"warehouses": w, "mode": opt.Mode, "mix": opt.Mix, "all_warehouses": opt.AllWarehouses, "dist": r.Dist,
			"keying_thinking": opt.KeyingThinking, "isolation": opt.Isolation},
		Window: m.window, Finish: m.finish}, nil
}

// meter reads NOPM and TPM from the database at the window's edges.
type meter struct {
	fig                 Figures
	keyingThinking      bool
	shard               bool // the database's New-Orders are every shard's, the clients' this one's
	orders, cluster, db [2]int64
}

func (m *meter) window(ctx context.Context, ctl *pgconn.PgConn, open bool, own int64) error {
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
	m.orders[i], _ = strconv.ParseInt(rows[0][0], 10, 64)
	m.cluster[i], _ = strconv.ParseInt(rows[0][1], 10, 64)
	m.db[i], _ = strconv.ParseInt(rows[0][2], 10, 64)
	// The sampler's own queries are not the workload's transactions.
	m.cluster[i] -= own
	m.db[i] -= own
	return nil
}

func (m *meter) finish(sum *engine.Summary, res *driver.Result) {
	mins := res.WindowEnd.Sub(res.WindowStart).Minutes()
	if mins <= 0 {
		return
	}
	fig := &m.fig
	fig.NOPM = float64(m.orders[1]-m.orders[0]) / mins
	fig.TPMCluster = float64(m.cluster[1]-m.cluster[0]) / mins
	fig.TPM = float64(m.db[1]-m.db[0]) / mins
	for _, s := range res.Scripts {
		if s.Name == NewOrder {
			fig.ClientNewOrdersPerMin = float64(s.Committed) / mins
		}
	}
	if fig.ClientNewOrdersPerMin > 0 {
		fig.NOPMDiffPct = 100 * (fig.NOPM - fig.ClientNewOrdersPerMin) / fig.ClientNewOrdersPerMin
		if d := fig.NOPMDiffPct; (d > 2 || d < -2) && fig.NOPM > 100 && !m.shard {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("NOPM from the database (%.0f) and the clients' committed New-Orders per minute (%.0f) are %.1f%% apart: something else changed the districts", fig.NOPM, fig.ClientNewOrdersPerMin, d))
		}
	}
	if m.keyingThinking {
		fig.EfficiencyPct = 100 * fig.NOPM / (12.86 * float64(fig.Warehouses))
	}
	for _, s := range sum.Scripts {
		limit := 5000.0
		if s.Name == StockLevel {
			limit = 20000
		}
		rt := ResponseTime{Transaction: s.Name, P90Ms: s.LatencyMs.P90, LimitMs: limit, Passed: s.LatencyMs.P90 <= limit}
		fig.ResponseTimes = append(fig.ResponseTimes, rt)
		if !rt.Passed {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s's 90th percentile response time %.0f ms is over TPC-C's limit of %.0f ms", s.Name, rt.P90Ms, limit))
		}
	}
	sum.Figures = fig
}

// MergeShards is the whole run's figures: the database's NOPM and TPM, which
// every shard read alike over the same window, and the New-Orders and response
// times of all the shards' clients.
func (f *Figures) MergeShards(shards []engine.Figures, merged *engine.Summary) engine.Figures {
	out := *f
	out.ClientNewOrdersPerMin, out.NOPMDiffPct, out.ResponseTimes = 0, 0, nil
	for _, s := range shards {
		if g, ok := s.(*Figures); ok {
			out.ClientNewOrdersPerMin += g.ClientNewOrdersPerMin
		}
	}
	if out.ClientNewOrdersPerMin > 0 {
		out.NOPMDiffPct = 100 * (out.NOPM - out.ClientNewOrdersPerMin) / out.ClientNewOrdersPerMin
	}
	for _, s := range merged.Scripts {
		limit := 5000.0
		if s.Name == StockLevel {
			limit = 20000
		}
		out.ResponseTimes = append(out.ResponseTimes, ResponseTime{Transaction: s.Name, P90Ms: s.LatencyMs.P90, LimitMs: limit, Passed: s.LatencyMs.P90 <= limit})
	}
	return &out
}

// Dataset is `init tpcc`'s options.
type Dataset struct {
	LoadOptions
	// ProceduresOnly (re)creates the server-mode functions and loads nothing.
	ProceduresOnly bool
}

func (d *Dataset) Flags(fs *pflag.FlagSet) {
	o := &d.LoadOptions
	fs.IntVarP(&o.Warehouses, "warehouses", "w", o.Warehouses, "warehouses (about 100 MB each)")
	fs.BoolVar(&o.Partition, "partition", o.Partition, "partition order_line by warehouse, as HammerDB offers for large counts")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "data seed (0: the fixed default, so loads are reproducible)")
	fs.BoolVar(&d.ProceduresOnly, "procedures-only", d.ProceduresOnly, "only (re)create the server-mode functions, keeping the data")
	o.BindFlags(fs, "warehouses", "build the keys, analyze and create the functions")
}

func (d *Dataset) Validate() error {
	if d.ProceduresOnly {
		return nil
	}
	return d.LoadOptions.Validate()
}

func (d *Dataset) Describe() string {
	if d.ProceduresOnly {
		return "the five TPC-C functions"
	}
	switch o := d.LoadOptions; {
	case o.Finish:
		return fmt.Sprintf("the keys of a sharded TPC-C load of %d warehouses", o.Warehouses)
	case o.Shards > 0:
		return fmt.Sprintf("TPC-C warehouses %s (shard %d/%d)", load.Share{Shard: o.Shard, Shards: o.Shards, Units: o.Warehouses}.Describe(), o.Shard, o.Shards)
	}
	return fmt.Sprintf("TPC-C %d warehouses", d.Warehouses)
}

func (d *Dataset) Bytes() int64 {
	if d.ProceduresOnly {
		return 0
	}
	return int64(d.Warehouses) * (100 << 20)
}

func (d *Dataset) Params() string {
	if d.ProceduresOnly {
		return ""
	}
	return d.LoadOptions.Params()
}

func (d *Dataset) Marked() string { return "warehouse" }

func (d *Dataset) Load(ctx context.Context, connect load.Connector, resume bool, p *load.Progress) (string, error) {
	if d.ProceduresOnly {
		conn, err := connect(ctx)
		if err != nil {
			return "", err
		}
		defer conn.Close(context.Background())
		if err := CreateProcedures(ctx, conn); err != nil {
			return "", fmt.Errorf("create the TPC-C functions: %w", err)
		}
		return "created the five TPC-C functions", nil
	}
	o := d.LoadOptions
	o.Resume = resume
	phases, err := Load(ctx, connect, o, p)
	return phases.String(), err
}
