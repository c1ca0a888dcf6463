package studyrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/report"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
)

// cellRuns are the stored runs of one target, workload, client count and rate,
// or its searches.
type cellRuns struct {
	// values are the headline figure of each valid completed run.
	values []float64
	// searches are what each completed search found; one that found no rate is
	// no value of 0.
	searches []findmax.Found
	invalid  int
	pending  int
}

// studyCells reads the stored runs of every cell of the plan, keyed by cellGroup.
func studyCells(ctx context.Context, st *store.Store, s *study.Study, studyID int64, plan []study.Cell) (map[string]*cellRuns, error) {
	done, err := st.StudyRuns(ctx, studyID)
	if err != nil {
		return nil, err
	}
	steps := map[string][]string{} // a search's cell key: its runs' keys
	for key := range done {
		if cell, ok := study.SearchKey(key); ok {
			steps[cell] = append(steps[cell], key)
		}
	}
	cells := map[string]*cellRuns{}
	for _, c := range plan {
		k := cellGroup(c.Target, c.Workload, c.Clients, c.Rate)
		cr := cells[k]
		if cr == nil {
			cr = &cellRuns{}
			cells[k] = cr
		}
		d, ok := done[c.Key]
		if !ok || d.Status != store.StatusCompleted || d.Fingerprint != c.Fingerprint || d.RunID == 0 && c.Search == nil {
			cr.pending++
			continue
		}
		if c.Search != nil {
			found, err := searchFound(ctx, st, s, done, steps[c.Key], c.Fingerprint)
			if err != nil {
				return nil, err
			}
			cr.searches = append(cr.searches, found)
			continue
		}
		sum, err := storedSummary(ctx, st, d.RunID, false)
		if errors.Is(err, store.ErrNotFound) {
			cr.pending++
			continue
		}
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(sum.Flags, func(f engine.Flag) bool { return f.Invalid }) {
			cr.invalid++
			continue
		}
		cr.values = append(cr.values, report.Metric(sum))
	}
	return cells, nil
}

// storedSummary reads a stored run's summary, and with latency its window's
// latency histogram, which judging it by an objective needs.
func storedSummary(ctx context.Context, st *store.Store, id int64, latency bool) (*engine.Summary, error) {
	r, err := st.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	sum, err := workload.ReadSummary(r.Summary)
	if err != nil {
		return nil, fmt.Errorf("run %d summary: %w", id, err)
	}
	if latency {
		h, err := r.WindowLatency()
		if err != nil {
			return nil, err
		}
		sum.SetLatency(h)
	}
	return sum, nil
}

// searchFound is what a finished search found, read back from its runs
// (findmax.Read) under the study's objective.
func searchFound(ctx context.Context, st *store.Store, s *study.Study, done map[string]store.StudyRun, keys []string, fingerprint string) (findmax.Found, error) {
	obj, err := findmax.ParseObjective(s.Objective.SLO, s.Objective.Errors)
	if err != nil {
		return findmax.Found{}, err
	}
	// The steps in the order made, as the search saw them.
	slices.SortFunc(keys, func(x, y string) int { return cmp.Compare(done[x].RunID, done[y].RunID) })
	var steps []findmax.Step
	for _, key := range keys {
		d := done[key]
		if d.RunID == 0 || d.Fingerprint != fingerprint {
			continue
		}
		sum, err := storedSummary(ctx, st, d.RunID, true)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return findmax.Found{}, err
		}
		step := findmax.Step{Summary: sum}
		if sum.Rate != nil {
			step.Rate = sum.Rate.RequestedTPS
		}
		step.Met, step.Why = obj.Check(sum)
		steps = append(steps, step)
	}
	return findmax.Read(steps), nil
}

// cellGroup names a target's cells of one workload, client count and rate.
func cellGroup(t *study.Target, w *study.Workload, clients, rate int) string {
	return fmt.Sprintf("%s/%s/%d/%d", t.Name, w.Name, clients, rate)
}

// printStudyResults prints, per workload, client count and rate, each target's
// aggregate with its spread, and each target against the first: the ratio of
// the aggregates and whether it is beyond the noise. A search's row is the
// highest rate within the objective each search found.
func printStudyResults(ctx context.Context, sr *Runner, s *study.Study, st *store.Store, studyID int64) error {
	plan := s.Plan()
	cells, err := studyCells(ctx, st, s, studyID, plan)
	if err != nil {
		return err
	}
	w := sr.Out
	fmt.Fprintf(w, "%s of %d runs per cell; spread is min-max of the valid runs\n", s.Matrix.Aggregate, s.Matrix.Repeat)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workload\tclients\tmetric\t")
	for _, t := range s.Targets {
		fmt.Fprintf(tw, "%s\tspread\t", t.Name)
	}
	for _, t := range s.Targets[1:] {
		fmt.Fprintf(tw, "%s/%s\t", t.Name, s.Targets[0].Name)
	}
	fmt.Fprintln(tw)
	for _, wl := range s.Workloads {
		for _, c := range s.Clients(wl) {
			for _, rate := range s.Rates(wl) {
				clients, metric := strconv.Itoa(c), report.MetricName(wl.Kind)
				switch {
				case s.FindMax(wl) != nil:
					metric = "max tx/s within " + s.Objective.SLO
				case rate > 0:
					clients = fmt.Sprintf("%d @ %d tx/s", c, rate)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t", wl.Name, clients, metric)
				row := make([]*cellRuns, len(s.Targets))
				for i, t := range s.Targets {
					if row[i] = cells[cellGroup(t, wl, c, rate)]; row[i] == nil {
						row[i] = &cellRuns{}
					}
				}
				if s.FindMax(wl) != nil {
					printSearchCells(tw, s, row)
				} else {
					printCells(tw, s, row)
				}
				fmt.Fprintln(tw)
			}
		}
	}
	return tw.Flush()
}

// printCells prints a row's cells of runs: each target's aggregate and spread,
// and each against the first in the words compare and report use (report.Versus).
func printCells(w io.Writer, s *study.Study, row []*cellRuns) {
	agg := string(s.Matrix.Aggregate)
	for _, cr := range row {
		if len(cr.values) == 0 {
			fmt.Fprintf(w, "-\t%s\t", cellNote(cr))
			continue
		}
		fmt.Fprintf(w, "%.0f\t%.0f-%.0f %s\t", stats.Aggregate(agg, cr.values, true), slices.Min(cr.values), slices.Max(cr.values), cellNote(cr))
	}
	for _, cr := range row[1:] {
		if len(cr.values) == 0 || len(row[0].values) == 0 {
			fmt.Fprintf(w, "-\t")
			continue
		}
		fmt.Fprintf(w, "%s\t", report.Versus(row[0].values, cr.values, agg, report.DefaultNoise))
	}
}

// printSearchCells prints a row's cells of searches: each target's aggregate of
// the rates its searches found and their spread, or the objective's NoRate when
// none found one, and each against the first in the words compare and report use
// (report.SearchVersus). A search that found no rate stays out of both.
func printSearchCells(w io.Writer, s *study.Study, row []*cellRuns) {
	agg := string(s.Matrix.Aggregate)
	obj, _ := findmax.ParseObjective(s.Objective.SLO, s.Objective.Errors) // a study with a search has a valid one
	for _, cr := range row {
		var rates []float64
		bound := ""
		for _, f := range cr.searches {
			if f.OK {
				rates = append(rates, f.Rate)
			}
			if f.OK && f.Bound {
				bound = "≥" // a lower bound makes the aggregate one
			}
		}
		switch {
		case len(rates) > 0:
			fmt.Fprintf(w, "%s%.0f\t%.0f-%.0f %s\t", bound, stats.Aggregate(agg, rates, true), slices.Min(rates), slices.Max(rates), searchNote(cr))
		case len(cr.searches) > 0:
			fmt.Fprintf(w, "%s\t%s\t", obj.NoRate(), searchNote(cr))
		default:
			fmt.Fprintf(w, "-\t%s\t", searchNote(cr))
		}
	}
	for _, cr := range row[1:] {
		fmt.Fprintf(w, "%s\t", report.SearchVersus(row[0].searches, cr.searches, agg, report.DefaultNoise))
	}
}

// searchNote counts a cell's searches: n that found a rate, and those that found
// none, whose runs contradict each other, or that are not made.
func searchNote(cr *cellRuns) string {
	found, none, unreliable := 0, 0, 0
	for _, f := range cr.searches {
		if f.OK {
			found++
		} else {
			none++
		}
		if f.Doubt != "" {
			unreliable++
		}
	}
	parts := []string{fmt.Sprintf("n=%d", found)}
	if none > 0 {
		parts = append(parts, fmt.Sprintf("%d found no rate", none))
	}
	if unreliable > 0 {
		parts = append(parts, fmt.Sprintf("%d unreliable", unreliable))
	}
	if cr.pending > 0 {
		parts = append(parts, fmt.Sprintf("%d to run", cr.pending))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// cellNote counts a cell's runs: n valid, and those invalid or not made.
func cellNote(cr *cellRuns) string {
	if cr == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("n=%d", len(cr.values))}
	if cr.invalid > 0 {
		parts = append(parts, fmt.Sprintf("%d invalid", cr.invalid))
	}
	if cr.pending > 0 {
		parts = append(parts, fmt.Sprintf("%d to run", cr.pending))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Plan shows what the study in file would do, without connecting to anything.
func (sr *Runner) Plan(ctx context.Context, file string) error {
	s, wls, err := loadValidStudy(file)
	if err != nil {
		return err
	}
	w := sr.Out
	plan := s.Plan()
	fmt.Fprintf(w, "study %s: %d targets x %d workloads, %s\n", s.Name, len(s.Targets), len(s.Workloads), planSize(plan))
	if s.Description != "" {
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(s.Description))
	}
	fmt.Fprintln(w, "\ntargets:")
	for _, t := range s.Targets {
		if l := t.Local; l != nil {
			var set []string
			for _, st := range l.Settings {
				set = append(set, st.Name+"="+st.Value)
			}
			fmt.Fprintf(w, "  %s: local PostgreSQL %s", t.Name, l.Version)
			if len(set) > 0 {
				fmt.Fprintf(w, ", %s", strings.Join(set, " "))
			}
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, "  %s: %s\n", t.Name, target.Redact(t.DSN))
		}
		switch {
		case t.PriceLookup != nil:
			fmt.Fprintf(w, "    price: looked up when the study runs (%s)\n", t.PriceLookup)
		case t.Price != nil:
			fmt.Fprintf(w, "    price: %s\n", t.Price.Detail())
		}
	}
	fmt.Fprintln(w, "\nworkloads:")
	for _, sw := range wls {
		var run []string
		for _, o := range sw.w.Run {
			run = append(run, o.Name+"="+strings.Join(o.Values, ","))
		}
		fmt.Fprintf(w, "  %s: %s, about %s, dataset %s, vacuum %s, checkpoint %v", sw.w.Name, sw.describe(),
			engine.FormatBytes(sw.bytes()), sw.w.Dataset, sw.w.Vacuum, sw.w.Checkpoint)
		if len(run) > 0 {
			fmt.Fprintf(w, ", %s", strings.Join(run, " "))
		}
		fmt.Fprintf(w, "; clients %v", s.Clients(sw.w))
		if f := s.FindMax(sw.w); f != nil {
			fmt.Fprintf(w, "; find-max within %s, %d confirmations, resolution %s%%", s.Objective.SLO, f.Confirm,
				strconv.FormatFloat(math.Round(1e4*f.Resolution)/100, 'f', -1, 64))
			if n := s.SearchRuns(f); n < f.Runs() {
				fmt.Fprintf(w, " (its budget of %s leaves about %d of the %d runs a search to that resolution makes)", f.Budget, n, f.Runs())
			}
		} else if r := s.Rates(sw.w); r[0] > 0 {
			fmt.Fprintf(w, "; rates %v tx/s", r)
		}
		fmt.Fprintln(w)
	}
	m := s.Matrix
	fmt.Fprintf(w, "\nmatrix: %s warm-up, %s measured, %d repetitions (%s), %s order, %s pause\n",
		m.Warmup, m.Duration, m.Repeat, m.Aggregate, m.Order, m.Pause)

	// How much data, and roughly how long loading takes at the 100 MB/s these loaders
	// reach on a small machine.
	once, disk := datasetBytes(wls)
	loads := once * int64(len(s.Targets))
	for _, sw := range wls {
		if sw.w.Dataset == study.DatasetReload {
			runs := len(s.Clients(sw.w)) * m.Repeat * len(s.Targets)
			loads += sw.bytes() * int64(runs-1)
		}
	}
	loadTime := time.Duration(float64(loads) / (100 << 20) * float64(time.Second))
	fmt.Fprintf(w, "data: about %s on disk on each target, %s loaded in all\n", engine.FormatBytes(disk), engine.FormatBytes(loads))
	fmt.Fprintf(w, "time: %s of runs and pauses, and roughly %s of loading\n", s.Estimate().Round(time.Second), loadTime.Round(time.Second))

	made := map[string]bool{}
	if st, err := store.OpenReadOnly(ctx, sr.Results); err == nil {
		if state, err := st.FindStudy(ctx, s.Name); err == nil {
			if done, err := st.StudyRuns(ctx, state.ID); err == nil {
				for _, c := range plan {
					if d, ok := done[c.Key]; ok && d.Status == store.StatusCompleted && d.Fingerprint == c.Fingerprint {
						made[c.Key] = true
					}
				}
			}
		}
		st.Close()
	}
	fmt.Fprintln(w, "\nruns, in order:")
	for _, c := range plan {
		mark := ""
		if made[c.Key] {
			mark = "  (made)"
		}
		if f := c.Search; f != nil && mark == "" {
			mark = fmt.Sprintf("  (a search: about %d runs", s.SearchRuns(f))
			if f.Budget > 0 {
				mark += ", none begun after its budget of " + f.Budget.String()
			}
			mark += ")"
		}
		fmt.Fprintf(w, "  %3d  %s%s\n", c.Seq, c.Key, mark)
	}
	return nil
}
