package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/spf13/cobra"
)

func newRunsCmd(env *Env) *cobra.Command {
	var limit int
	var workload string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List stored runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := openExisting(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(cmd.Context(), store.Filter{Workload: workload, Limit: limit})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTARTED\tWORKLOAD\tSCRIPT\tCLIENTS\tTPS\tP99 MS\tSTATUS\tTARGET")
			for _, r := range runs {
				tps, p99 := "-", "-"
				var s Summary
				if len(r.Summary) > 0 && json.Unmarshal(r.Summary, &s) == nil {
					tps, p99 = fmt.Sprintf("%.1f", s.TPS), fmt.Sprintf("%.3f", s.LatencyMs.P99)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.ID, r.Started.Local().Format("2006-01-02 15:04:05"),
					r.Workload, r.Script, r.Clients, tps, p99, r.Status, r.Target)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many runs (0 for all)")
	cmd.Flags().StringVar(&workload, "workload", "", "only this workload")
	return cmd
}

func newShowCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show one stored run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return usageError{fmt.Errorf("run id %q is not a positive number; `pgbakeoff runs` lists them", args[0])}
			}
			st, err := openExisting(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			d, err := st.Run(cmd.Context(), id)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no run %d in %s; `pgbakeoff runs` lists them", id, st.Path())
			}
			if err != nil {
				return err
			}
			if len(d.Summary) == 0 {
				return showUnfinished(env, d, asJSON)
			}
			var s Summary
			if err := json.Unmarshal(d.Summary, &s); err != nil {
				return fmt.Errorf("run %d: stored summary unreadable: %w", id, err)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			printSummary(env.Stdout, &s)
			fmt.Fprintf(env.Stdout, "intervals stored: %d\n", len(d.Intervals))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// showUnfinished prints what a run that never finished (killed) left behind.
func showUnfinished(env *Env, d *store.RunDetail, asJSON bool) error {
	var txns int64
	for _, iv := range d.Intervals {
		if iv.Phase == store.PhaseMeasure {
			txns += iv.Txns
		}
	}
	if asJSON {
		return json.NewEncoder(env.Stdout).Encode(map[string]any{
			"run_id": d.ID, "workload": d.Workload, "script": d.Script, "clients": d.Clients,
			"status": d.Status, "intervals": len(d.Intervals), "transactions": txns, "target": d.Target,
		})
	}
	fmt.Fprintf(env.Stdout, "run %d: %s %s, %d clients, status %s (no summary: the run did not finish)\n", d.ID, d.Workload, d.Script, d.Clients, d.Status)
	fmt.Fprintf(env.Stdout, "intervals stored: %d, transactions in them: %d\n", len(d.Intervals), txns)
	return nil
}
