package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/studyrun"
	"github.com/spf13/cobra"
)

func newStudyCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "study",
		Short: "Compare several targets in one declared, resumable benchmark (a study file)",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSub("run, status, plan, prices"),
	}
	sr := &studyrun.Runner{}
	run := newStudyRunCmd(env, sr)

	var statusJSON bool
	status := &cobra.Command{
		Use:   "status FILE",
		Short: "Show which runs of a study are made and what they measured so far",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !statusJSON {
				return studyRunner(cmd, env, sr).Status(cmd.Context(), args[0])
			}
			ss, err := studyRunner(cmd, env, sr).ReadStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(ss)
		},
	}
	status.Flags().BoolVar(&statusJSON, "json", false, "print the plan and each run's state as JSON (its schema: pgbakeoff schema study-status)")
	printsJSON(status, "study-status")
	plan := &cobra.Command{
		Use:   "plan FILE",
		Short: "Show what a study would run, how long it would take and how much data it loads",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return studyRunner(cmd, env, sr).Plan(cmd.Context(), args[0])
		},
	}
	prices := newStudyPricesCmd(env, sr)
	cmd.AddCommand(run, status, plan, prices)
	return cmd
}

// newStudyRunCmd is `study run FILE`.
func newStudyRunCmd(env *Env, sr *studyrun.Runner) *cobra.Command {
	var pf priceFlags
	var metricsAddr string
	run := &cobra.Command{
		Use:   "run FILE",
		Short: "Check every target, load the data, and make every run of the study not yet made",
		Example: `  pgbakeoff study run examples/pg11-vs-pg16.yaml
  pgbakeoff study run sweep.yaml --restart    # forget earlier runs of this study and start again`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sr.Progress < 0 {
				return usageError{fmt.Errorf("--progress must not be negative, got %s", sr.Progress)}
			}
			var err error
			if sr.Metrics, err = listenMetrics(metricsAddr); err != nil {
				return err
			}
			defer sr.Metrics.Close()
			ctx, stop := env.Interrupt(cmd.Context())
			defer stop()
			if sr.Prices, err = pf.lister(env); err != nil {
				return err
			}
			if err := studyRunner(cmd, env, sr).Run(ctx, args[0]); err != nil {
				return err
			}
			if sr.GatesFailed > 0 {
				return exitError{fmt.Errorf("%s failed a --fail-if gate", engine.Plural(sr.GatesFailed, "run")), ExitGate}
			}
			return nil
		},
	}
	pf.add(run.Flags())
	run.Flags().Var(gatesValue{&sr.Gates}, "fail-if", "exit with code 3 when a run misses this, as p99<20ms or tps>1000 (repeatable); every run is made and stored regardless")
	fl := run.Flags()
	fl.BoolVar(&sr.Restart, "restart", false, "forget the runs this study made before (they stay in the results store) and start again")
	fl.StringVar(&sr.ServersDir, "servers-dir", "", "directory for the study's local servers (default: pgbakeoff's servers directory)")
	portRangeFlag(fl, &sr.Ports)
	fl.BoolVar(&sr.KeepServers, "keep-servers", false, "leave the local servers running at the end (by default they stop, and once every run is made their data is removed)")
	durationVar(fl, &sr.Progress, "progress", "", 10*time.Second, "print a progress line this often during each run; 0 for none")
	metricsFlag(fl, &metricsAddr)

	return run
}

// newStudyPricesCmd is `study prices FILE`.
func newStudyPricesCmd(env *Env, sr *studyrun.Runner) *cobra.Command {
	var refresh bool
	var ppf priceFlags
	prices := &cobra.Command{
		Use:   "prices FILE",
		Short: "Look up the prices of the study's targets that name their cloud's price list, and keep them with the study",
		Long: `prices looks up, in their clouds' price lists, the prices of the targets whose price: names a
cloud ({cloud: aws, instance: ...}), and keeps them with the study for its reports. study run
does this for targets without a price yet; prices does it when a list could not be read then,
and with --refresh looks every price up anew.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := env.Interrupt(cmd.Context())
			defer stop()
			var err error
			if sr.Prices, err = ppf.lister(env); err != nil {
				return err
			}
			return studyRunner(cmd, env, sr).PricesOf(ctx, args[0], refresh)
		},
	}
	ppf.add(prices.Flags())
	prices.Flags().BoolVar(&refresh, "refresh", false, "look every price up anew, replacing those kept")
	return prices
}

// studyRunner is sr wired to the command's results store and output.
func studyRunner(cmd *cobra.Command, env *Env, sr *studyrun.Runner) *studyrun.Runner {
	results, _ := cmd.Flags().GetString("results")
	sr.Results = results
	sr.OpenStore = func(ctx context.Context) (*store.Store, error) { return openForWriting(ctx, env, results) }
	sr.OpenReading = func(ctx context.Context) (*store.Store, error) { return openReading(ctx, env.Stderr, results) }
	sr.Out, sr.Log, sr.TTY, sr.Now = env.Stdout, env.Stderr, env.TTY, env.Now
	return sr
}
