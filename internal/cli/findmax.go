package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	"github.com/spf13/cobra"
)

// `find-max <kind>`: the highest open-loop rate a target carries within a latency
// objective, by runs of `run <kind>` at rates chosen by findmax.Search.
func newFindMaxCmd(env *Env) *cobra.Command {
	cmd := parentCmd("find-max", "Find the highest rate a target carries within a latency objective, by open-loop runs")
	for _, w := range workload.All() {
		cmd.AddCommand(newFindMaxKindCmd(env, w))
	}
	return cmd
}

func newFindMaxKindCmd(env *Env, w workload.Workload) *cobra.Command {
	cmd := &cobra.Command{Use: w.Name(), Args: cobra.NoArgs,
		Short: fmt.Sprintf("Find the highest rate of %s transactions a target carries within a latency objective", w.Name()),
		Example: fmt.Sprintf(`  pgbakeoff find-max %s --slo 'p99<10ms' --errors '<0.1%%' --clients 64 --dsn "$DSN"
  pgbakeoff find-max %s --slo 'p99.9<50ms' --duration 30s --confirm 3 --budget 20m --dsn "$DSN"`, w.Name(), w.Name())}
	printsJSON(cmd, "find-max")
	f := bindRun(w, cmd.Flags())
	// Shorter runs than run's, since a search makes several: each holds one rate.
	fl := cmd.Flags()
	f.spec.Duration, f.spec.Warmup = 20*time.Second, 5*time.Second
	fl.Lookup("duration").DefValue, fl.Lookup("warmup").DefValue = "20s", "5s"
	var slo, errs string
	var o findmax.Options
	fl.StringVar(&slo, "slo", "", "latency objective: a percentile under a limit, as p99<10ms (required)")
	fl.StringVar(&errs, "errors", "", "most failed transactions allowed, as <0.1% (default: not checked)")
	fl.IntVar(&o.Confirm, "confirm", 2, "runs at the rate found that must meet the objective again")
	fl.Float64Var(&o.Ceiling, "ceiling", 0, "a rate known to be too high, to search below (default: measured by a closed-loop run)")
	resolution := fl.String("resolution", "5%", "stop when the highest rate that met the objective and the lowest that did not are this close")
	durationVar(fl, &o.Budget, "budget", "", 15*time.Minute, "stop the search, with what it found, after this long (0: no limit)")
	_ = fl.MarkHidden("rate") // the search sets it
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		results, _ := cmd.Flags().GetString("results")
		if err := checkFindMax(f, &o, slo, errs, *resolution); err != nil {
			return err
		}
		ctx, stop := env.Interrupt(cmd.Context())
		defer stop()
		// The search's runs share a label, so that reports show them as one search.
		if f.spec.Labels == nil {
			f.spec.Labels = map[string]string{}
		}
		if f.spec.Labels["find_max"] == "" {
			f.spec.Labels["find_max"] = env.Now().UTC().Format("20060102T150405Z")
		}
		t, err := target.Parse(f.dsn)
		if err != nil {
			return usageError{err}
		}
		// Each run's own lines go to stderr; stdout has the search's table (or JSON).
		runEnv := *env
		runEnv.Stdout = io.Discard
		o.Progress = env.Stderr
		runOne := func(ctx context.Context, spec engine.Spec) (*engine.Summary, error) {
			return runSpec(ctx, &runEnv, spec, t, results, f.progress)
		}
		res, err := findmax.Search(ctx, f.spec, runOne, o)
		if res != nil && len(res.Steps) > 0 {
			if f.json {
				writeFindMaxJSON(env.Stdout, res)
			} else {
				writeFindMax(env.Stdout, res)
			}
		}
		return err
	}
	return cmd
}

// checkFindMax reads find-max's own flags into o and refuses what a search
// cannot take: a fixed rate, a transaction count, negative limits.
func checkFindMax(f *runFlags, o *findmax.Options, slo, errs, resolution string) error {
	var err error
	if o.Objective, err = findmax.ParseObjective(slo, errs); err != nil {
		return usageError{err}
	}
	if o.Resolution, err = percentFlag("--resolution", resolution); err != nil {
		return usageError{err}
	}
	if o.Confirm < 0 || o.Ceiling < 0 || o.Budget < 0 {
		return usageError{fmt.Errorf("--confirm, --ceiling and --budget must not be negative")}
	}
	if f.spec.Rate != 0 {
		return usageError{fmt.Errorf("find-max chooses the rates itself: leave --rate out")}
	}
	if len(f.gates) > 0 || len(f.spec.Faults) > 0 {
		return usageError{fmt.Errorf("find-max judges its runs by --slo and --errors, without faults: leave --fail-if and --fault out")}
	}
	if err := f.settle(); err != nil {
		return usageError{err}
	}
	if f.spec.Transactions > 0 {
		return usageError{fmt.Errorf("find-max holds each rate for --duration: leave --transactions out")}
	}
	if err := f.spec.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// percentFlag reads a share written as a percentage ("5%") or a fraction ("0.05").
func percentFlag(name, v string) (float64, error) {
	s, pct := strings.CutSuffix(strings.TrimSpace(v), "%")
	x, err := strconv.ParseFloat(s, 64)
	if pct {
		x /= 100
	}
	if err != nil || x <= 0 || x >= 1 {
		return 0, fmt.Errorf("%s %q: give a share above 0 and below 100%%, as 5%%", name, v)
	}
	return x, nil
}

// writeFindMax prints the runs the search made, in the order made, and what it found.
func writeFindMax(w io.Writer, res *findmax.Result) {
	q := strconv.FormatFloat(res.Objective.Quantile, 'f', -1, 64)
	fmt.Fprintf(w, "objective: %s\n", res.Objective)
	fmt.Fprintf(w, "%6s %12s %10s %12s %8s  %s\n", "run", "rate tx/s", "tps", "p"+q+" ms", "failed", "objective")
	for _, s := range res.Steps {
		rate := strconv.FormatFloat(s.Rate, 'f', 0, 64)
		verdict := "met"
		if !s.Met {
			verdict = "not met: " + s.Why
		}
		if s.Rate == 0 {
			rate, verdict = "closed", "the ceiling, "+verdict
		}
		if s.Confirm {
			verdict += " (confirmation)"
		}
		p, _ := s.Summary.LatencyAt(res.Objective.Quantile)
		fmt.Fprintf(w, "%6d %12s %10.0f %12.3f %8d  %s\n", s.Summary.RunID, rate, s.Summary.TPS, p, s.Summary.Failed, verdict)
	}
	fmt.Fprintf(w, "max rate within the objective: %s\n", res.Answer())
	if d := res.Found.Doubt; d != "" {
		fmt.Fprintf(w, "unreliable: %s\n", d)
	}
	fmt.Fprintf(w, "how sure: %s\n", res.Sure())
}

func writeFindMaxJSON(w io.Writer, res *findmax.Result) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(res.Summary())
}
