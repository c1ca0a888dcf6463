package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/report"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	"github.com/spf13/cobra"
)

func newRunsCmd(env *Env) *cobra.Command {
	var limit int
	var workload string
	var asJSON bool
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
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(engine.NewRunList(runs))
			}
			return printRuns(env.Stdout, runs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (its schema: pgbakeoff schema runs)")
	printsJSON(cmd, "runs")
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
			s, err := workload.ReadSummary(d.Summary)
			if err != nil {
				return fmt.Errorf("run %d: stored summary unreadable: %w", id, err)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			s.WriteText(env.Stdout)
			fmt.Fprintf(env.Stdout, "intervals stored: %d\n", len(d.Intervals))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (its schema: pgbakeoff schema show)")
	printsJSON(cmd, "show")
	return cmd
}

// showUnfinished prints what a run that never finished (killed) left behind.
func showUnfinished(env *Env, d *store.RunDetail, asJSON bool) error {
	u := engine.NewUnfinished(d)
	if asJSON {
		return json.NewEncoder(env.Stdout).Encode(u)
	}
	fmt.Fprintf(env.Stdout, "run %d: %s %s, %d clients, status %s (no summary: the run did not finish)\n", u.RunID, u.Workload, u.Script, u.Clients, u.Status)
	fmt.Fprintf(env.Stdout, "intervals stored: %d, transactions in them: %d\n", u.Intervals, u.Transactions)
	return nil
}

// runsWidth is the width `runs` keeps its lines within.
const runsWidth = 100

// printRuns writes the runs as a table within runsWidth columns: the workload
// with its script, and the target (its label, else host:port/dbname), are
// shortened to fit; the others are short by nature.
func printRuns(w io.Writer, runs []store.Run) error {
	const workloadCol, targetCol = 2, 8
	header := []string{"ID", "STARTED", "WORKLOAD", "CLIENTS", "TPS", "P99 MS", "STATUS", "VERSION", "TARGET"}
	right := []bool{true, false, false, true, true, true, false, false, false}
	rows := [][]string{header}
	var names [][]string // the target's names, longest first
	for _, r := range runs {
		tps, p99 := "-", "-"
		var s engine.Summary
		if len(r.Summary) > 0 && json.Unmarshal(r.Summary, &s) == nil {
			tps, p99 = fmt.Sprintf("%.1f", s.TPS), fmt.Sprintf("%.3f", s.LatencyMs.P99)
		}
		version, _, _ := strings.Cut(r.ServerVersion, " ") // "16.4 (Debian 16.4-1.pgdg120+2)"
		rows = append(rows, []string{strconv.FormatInt(r.ID, 10), r.Started.Local().Format("01-02 15:04"),
			r.Workload + " " + r.Script, strconv.Itoa(r.Clients), tps, p99, r.Status, cutEnd(version, 10), ""})
		names = append(names, report.RunNames(&r))
	}
	// The target takes its longest name that fits beside the workload and
	// script at full width, else a shorter one in up to half the room left by
	// the other columns (at least 12); the workload and script take the rest.
	widths := make([]int, len(header))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	fixed := 2 * (len(widths) - 1)
	for i, n := range widths {
		if i != workloadCol && i != targetCol {
			fixed += n
		}
	}
	room := runsWidth - fixed
	shortest := len(header[targetCol])
	for _, n := range names {
		shortest = max(shortest, utf8.RuneCountInString(n[len(n)-1]))
	}
	targetRoom := max(12, room-widths[workloadCol], min(shortest, room/2))
	widths[targetCol] = len(header[targetCol])
	for i, n := range names {
		rows[i+1][targetCol] = fitName(n, targetRoom)
	}
	distinguish(rows[1:], targetCol, names, targetRoom)
	for _, row := range rows[1:] {
		widths[targetCol] = max(widths[targetCol], utf8.RuneCountInString(row[targetCol]))
	}
	widths[workloadCol] = max(12, min(widths[workloadCol], room-widths[targetCol]))
	for _, row := range rows {
		row[workloadCol] = cutEnd(row[workloadCol], widths[workloadCol])
	}
	return writeColumns(w, rows, widths, right)
}

// writeColumns writes rows with each column padded to its width, to the right
// where right says so.
func writeColumns(w io.Writer, rows [][]string, widths []int, right []bool) error {
	var b strings.Builder
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// distinguish gives rows whose names in column col are alike but whose targets
// differ (four servers must not all read "postgres") the longest of their names
// that fits in n columns and that no other target has, else their full name cut
// in the middle.
func distinguish(rows [][]string, col int, names [][]string, n int) {
	full := map[string][]string{} // the targets each shown name stands for
	for i, row := range rows {
		if !slices.Contains(full[row[col]], names[i][0]) {
			full[row[col]] = append(full[row[col]], names[i][0])
		}
	}
	taken := map[string][]string{} // the targets that have each name
	for _, ns := range names {
		for _, name := range ns {
			if !slices.Contains(taken[name], ns[0]) {
				taken[name] = append(taken[name], ns[0])
			}
		}
	}
	for i, row := range rows {
		if len(full[row[col]]) < 2 {
			continue
		}
		row[col] = cutMiddle(names[i][0], n)
		for _, name := range names[i] {
			if utf8.RuneCountInString(name) <= n && len(taken[name]) == 1 {
				row[col] = name
				break
			}
		}
	}
}

// fitName is the first of the names that fits in n columns, else the last cut
// in the middle.
func fitName(names []string, n int) string {
	for _, s := range names {
		if utf8.RuneCountInString(s) <= n {
			return s
		}
	}
	return cutMiddle(names[len(names)-1], n)
}

// cutEnd shortens s to n columns, marking the cut with an ellipsis.
func cutEnd(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// cutMiddle shortens s to n columns by cutting its middle, which keeps a
// target's host and its database.
func cutMiddle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}
