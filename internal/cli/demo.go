package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
	"github.com/spf13/cobra"
)

// demoServer is one side of the demo's comparison.
type demoServer struct {
	label    string
	settings []localpg.Setting
	srv      *localpg.Server
	t        *target.Target
}

func newDemoCmd(env *Env) *cobra.Command {
	var version, dir string
	var scale int
	var ports localpg.PortRange
	var duration, warmup time.Duration
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Compare two local PostgreSQL servers, default against tuned settings, end to end (about three minutes)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if scale < 1 || duration <= 0 || warmup < 0 {
				return usageError{fmt.Errorf("--scale and --duration must be positive, --warmup not negative")}
			}
			results, _ := cmd.Flags().GetString("results")
			ctx, stop := env.Interrupt(cmd.Context())
			defer stop()
			return runDemo(ctx, env, demoOptions{version, dir, ports, scale, warmup, duration}, results)
		},
	}
	f := cmd.Flags()
	f.StringVar(&version, "version", "", "PostgreSQL version for both servers (default: the newest installed, else 16 downloaded)")
	f.IntVar(&scale, "scale", 20, "TPC-B scale to load into each server")
	durationVar(f, &warmup, "warmup", "", 5*time.Second, "warm-up before each measured run")
	durationVar(f, &duration, "duration", "", 15*time.Second, "measured window of each run")
	f.StringVar(&dir, "servers-dir", "", "directory for the two servers, removed at the end (default: pgbakeoff's servers directory)")
	portRangeFlag(f, &ports)
	return cmd
}

// demoOptions are the demo's flags.
type demoOptions struct {
	version, dir     string
	ports            localpg.PortRange
	scale            int
	warmup, duration time.Duration
}

func runDemo(ctx context.Context, env *Env, o demoOptions, results string) error {
	out := env.Stdout
	servers := []*demoServer{
		{label: "default"},
		{label: "tuned", settings: []localpg.Setting{
			{Name: "shared_buffers", Value: "1GB"}, {Name: "max_wal_size", Value: "4GB"},
			{Name: "checkpoint_timeout", Value: "15min"}, {Name: "wal_buffers", Value: "16MB"},
		}},
	}
	clients := []int{4, 16}
	scripts := []string{"select-only", "tpcb-like"}
	fmt.Fprintf(out, `pgbakeoff demo: does tuning PostgreSQL's memory and checkpoint settings pay off?
  1. start two local servers of the same version: one with initdb's defaults, one with
     shared_buffers=1GB, max_wal_size=4GB, checkpoint_timeout=15min, wal_buffers=16MB
  2. load pgbench's TPC-B tables at scale %d into each
  3. run select-only and tpcb-like at %d and %d clients, %s warm-up and %s measured each,
     alternating the servers so drift on this machine affects both alike
  4. print throughput and p99 latency side by side; every run is kept in %s
`, o.scale, clients[0], clients[1], o.warmup, o.duration, target.Redact(results))

	base, err := demoBaseDir(o.dir)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range servers {
			if s.srv != nil {
				_ = s.srv.Stop(context.Background())
				_ = s.srv.Remove()
			}
		}
	}()
	if err := startDemoServers(ctx, env, servers, o, base); err != nil {
		return err
	}

	got, err := demoRuns(ctx, env, servers, scripts, clients, o, results)
	if err != nil {
		return err
	}
	if err := demoTable(out, got, scripts, clients); err != nil {
		return err
	}
	demoFootnote(out, results)
	return nil
}

// demoKey names one of the demo's runs.
type demoKey struct {
	script  string
	clients int
	label   string
}

// demoRuns runs every script at every client count on each server in turn.
func demoRuns(ctx context.Context, env *Env, servers []*demoServer, scripts []string, clients []int, o demoOptions, results string) (map[demoKey]*engine.Summary, error) {
	got := map[demoKey]*engine.Summary{}
	for _, script := range scripts {
		for _, c := range clients {
			for _, s := range servers {
				fmt.Fprintf(env.Stdout, "\n%s, %d clients, %s server:\n", script, c, s.label)
				run := tpcb.Workload{}.NewRun().(*tpcb.Run)
				run.Scripts = []string{script}
				spec := engine.NewSpec()
				spec.Workload, spec.Clients, spec.Warmup, spec.Duration = run, c, o.warmup, o.duration
				spec.Labels = map[string]string{"demo": s.label}
				sum, err := runSpec(ctx, env, spec, s.t, results, 5*time.Second)
				if err != nil {
					return nil, err
				}
				got[demoKey{script, c, s.label}] = sum
				fmt.Fprintf(env.Stdout, "  %.0f tps, p99 %.3f ms (run %d)\n", sum.TPS, sum.LatencyMs.P99, sum.RunID)
			}
		}
	}
	return got, nil
}

// demoTable prints the two servers' throughput and p99 side by side.
func demoTable(out io.Writer, got map[demoKey]*engine.Summary, scripts []string, clients []int) error {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "script\tclients\tdefault tps\ttuned tps\ttuned/default\tdefault p99 ms\ttuned p99 ms\t\n")
	for _, script := range scripts {
		for _, c := range clients {
			a, b := got[demoKey{script, c, "default"}], got[demoKey{script, c, "tuned"}]
			ratio := 0.0
			if a.TPS > 0 {
				ratio = b.TPS / a.TPS
			}
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.2fx\t%.3f\t%.3f\t\n", script, c, a.TPS, b.TPS, ratio, a.LatencyMs.P99, b.LatencyMs.P99)
		}
	}
	return tw.Flush()
}

// startDemoServers starts the servers and loads TPC-B at scale into each.
func startDemoServers(ctx context.Context, env *Env, servers []*demoServer, o demoOptions, base string) error {
	for _, s := range servers {
		srv, err := localpg.Start(ctx, localpg.Options{Name: "demo-" + s.label, Version: o.version, Settings: s.settings,
			BaseDir: base, Log: env.Stderr, Ports: o.ports})
		if err != nil {
			return fmt.Errorf("start the %s server: %w", s.label, err)
		}
		s.srv = srv
		s.t, err = target.Parse(srv.DSN())
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "\nserver %s: PostgreSQL %s, port %d, log %s\n", s.label, srv.Version, srv.Port, srv.LogFile)
		ds := tpcb.Workload{}.NewLoad().(*tpcb.Dataset)
		ds.Scale = o.scale
		if err := loadDataset(ctx, env, s.t, tpcb.Workload{}.Name(), ds, false, nil); err != nil {
			return err
		}
	}

	return nil
}

func demoFootnote(w io.Writer, results string) {
	fmt.Fprintf(w, `
One run each is not a verdict: differences of a few percent are within this machine's
noise. The runs are stored in %s: `+"`pgbakeoff runs`"+` lists them and
`+"`pgbakeoff show ID --json`"+` prints one in full.
`, target.Redact(results))
}

// demoBaseDir is where the demo's servers live (dir, or by default pgbakeoff's
// servers directory); they are removed when it ends.
func demoBaseDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return localpg.DefaultServersDir()
}
