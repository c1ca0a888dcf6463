package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newStudyCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "study",
		Short: "Compare several targets in one declared, resumable benchmark (a study file)",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSub("run, status, plan"),
	}
	var opts studyOptions
	run := &cobra.Command{
		Use:   "run FILE",
		Short: "Check every target, load the data, and make every run of the study not yet made",
		Example: `  pgbakeoff study run examples/pg11-vs-pg16.yaml
  pgbakeoff study run sweep.yaml --restart    # forget earlier runs of this study and start again`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.progress < 0 {
				return usageError{fmt.Errorf("--progress must not be negative, got %s", opts.progress)}
			}
			results, _ := cmd.Flags().GetString("results")
			ctx, stop := env.Interrupt(cmd.Context())
			defer stop()
			return runStudy(ctx, env, args[0], results, opts)
		},
	}
	fl := run.Flags()
	fl.BoolVar(&opts.restart, "restart", false, "forget the runs this study made before (they stay in the results store) and start again")
	fl.StringVar(&opts.serversDir, "servers-dir", "", "directory for the study's local servers (default: pgbakeoff's servers directory)")
	fl.BoolVar(&opts.keepServers, "keep-servers", false, "leave the local servers running at the end (by default they stop, and once every run is made their data is removed)")
	durationVarP(fl, &opts.progress, "progress", "", 10*time.Second, "print a progress line this often during each run; 0 for none")

	status := &cobra.Command{
		Use:   "status FILE",
		Short: "Show which runs of a study are made and what they measured so far",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			results, _ := cmd.Flags().GetString("results")
			return studyStatus(cmd.Context(), env, args[0], results)
		},
	}
	plan := &cobra.Command{
		Use:   "plan FILE",
		Short: "Show what a study would run, how long it would take and how much data it loads",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			results, _ := cmd.Flags().GetString("results")
			return studyPlan(cmd.Context(), env, args[0], results)
		},
	}
	cmd.AddCommand(run, status, plan)
	return cmd
}

type studyOptions struct {
	restart     bool
	serversDir  string
	keepServers bool
	progress    time.Duration
}

// studyWorkload is a study's workload with its options checked against the
// commands of its kind.
type studyWorkload struct {
	w    *study.Workload
	k    kind
	data *dataset
	// db is the database its data is loaded into. Workloads of one study with the
	// same data and the same policy share it; a cloned dataset is never one that
	// runs write into.
	db string
}

// datasetDatabase names a workload's dataset database: the study's, the data's
// (kind and load options) and, for data that runs change, the policy's.
func datasetDatabase(studyName, key string, policy study.Dataset) string {
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '_'
	}, studyName)
	if len(slug) > 20 {
		slug = slug[:20]
	}
	name := "pgbakeoff_" + slug + "_" + key
	if policy != study.DatasetClone {
		name += "_" + string(policy)
	}
	return name
}

// database is where the workload's data is loaded (and, unless cloned, run).
func (sw *studyWorkload) database() string {
	if sw.w.Database != "" {
		return sw.w.Database
	}
	return sw.db
}

// runDatabase is where a run happens.
func (sw *studyWorkload) runDatabase() string {
	if sw.w.Dataset == study.DatasetClone {
		return sw.database() + "_run"
	}
	return sw.database()
}

// runReserved are run options a study sets itself, from its matrix.
var runReserved = map[string]string{
	"dsn":          "a study's targets are in targets:",
	"clients":      "set client counts in matrix.clients (or the workload's clients:)",
	"warmup":       "set it in matrix.warmup",
	"duration":     "set it in matrix.duration",
	"transactions": "a study's runs last matrix.duration",
	"json":         "study runs keep their results in the results store",
	"progress":     "use study run --progress",
	"label":        "give the target labels: instead",
}

// loadStudy parses the file and checks every workload's options against its
// commands. A file that does not parse is an error; problems with options come
// back in errs, each with its position, so that preflight can add its own.
func loadStudy(env *Env, file string) (s *study.Study, wls []*studyWorkload, errs study.Errors, err error) {
	s, errs, err = study.LoadAll(file)
	if err != nil {
		return nil, nil, nil, usageError{err}
	}
	if s == nil {
		return nil, nil, nil, usageError{errs.Err()}
	}
	var out []*studyWorkload
	for _, w := range s.Workloads {
		k, ok := findKind(w.Kind)
		if !ok {
			errs = append(errs, s.Errorf(w.Pos, "unknown workload kind %q: choose one of %s", w.Kind, kindNames()))
			continue
		}
		sw := &studyWorkload{w: w, k: k, db: datasetDatabase(s.Name, s.DatasetKey(w), w.Dataset)}
		lfl := pflag.NewFlagSet("init "+k.name, pflag.ContinueOnError)
		sw.data = k.loadFlags(lfl)
		setOptions(s, &errs, lfl, "load", w.Load, map[string]string{"dsn": "a study's targets are in targets:"})
		if err := sw.data.validate(); err != nil {
			errs = append(errs, s.Errorf(w.Pos, "workload %s: load: %v", w.Name, err))
		}
		for _, c := range s.Clients(w) {
			f, wl := studyRunFlags(env, s, sw, c, &errs)
			err := checkRunFlags(f)
			if w := wl(); err == nil && w.Check != nil {
				err = w.Check()
			}
			if err != nil {
				errs = append(errs, s.Errorf(w.Pos, "workload %s: run: %v", w.Name, err))
				break
			}
		}
		out = append(out, sw)
	}
	return s, out, errs, nil
}

// loadValidStudy is loadStudy for commands that go no further with a bad file.
func loadValidStudy(env *Env, file string) (*study.Study, []*studyWorkload, error) {
	s, wls, errs, err := loadStudy(env, file)
	if err == nil && len(errs) > 0 {
		err = usageError{errs.Err()}
	}
	return s, wls, err
}

// studyRunFlags builds a run's options from the workload's run: options and the
// matrix. Errors in the options are added to errs when it is not nil.
func studyRunFlags(env *Env, s *study.Study, sw *studyWorkload, clients int, errs *study.Errors) (runFlags, func() engine.Workload) {
	var f runFlags
	fl := pflag.NewFlagSet("run "+sw.k.name, pflag.ContinueOnError)
	wl := sw.k.runFlags(env, fl, &f)
	var discard study.Errors
	if errs == nil {
		errs = &discard
	}
	setOptions(s, errs, fl, "run", sw.w.Run, runReserved)
	f.clients, f.warmup, f.duration = clients, s.Matrix.Warmup, s.Matrix.Duration
	f.fitThreads(fl)
	return f, wl
}

// setOptions sets the options on the flag set of a workload's command.
func setOptions(s *study.Study, errs *study.Errors, fl *pflag.FlagSet, section string, opts []study.Option, reserved map[string]string) {
	for _, o := range opts {
		if why, ok := reserved[o.Name]; ok {
			*errs = append(*errs, s.Errorf(o.Pos, "%s: %s is set by the study: %s", section, o.Key, why))
			continue
		}
		if fl.Lookup(o.Name) == nil {
			var names []string
			fl.VisitAll(func(f *pflag.Flag) {
				if _, r := reserved[f.Name]; !r {
					names = append(names, f.Name)
				}
			})
			msg := fmt.Sprintf("unknown %s option %q for %s", section, o.Key, strings.TrimPrefix(fl.Name(), section+" "))
			if s := study.Suggest(o.Name, names); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			*errs = append(*errs, s.Errorf(o.Pos, "%s", msg))
			continue
		}
		for _, v := range o.Values {
			if err := fl.Set(o.Name, v); err != nil {
				*errs = append(*errs, s.Errorf(o.Pos, "%s: %s: %v", section, o.Key, err))
				break
			}
		}
	}
}

// studyTarget is a study's target once it is reachable.
type studyTarget struct {
	t      *study.Target
	srv    *localpg.Server // local targets
	tgt    *target.Target  // with its password
	info   *target.Info
	priv   privileges
	memory int64 // local: this machine's memory
	free   int64 // local: free bytes where the data directory is
	// fresh marks datasets loaded by this process and not yet run on, so a reloading
	// workload's first run does not load again.
	fresh            map[string]bool
	warnedCheckpoint bool
}

func (st *studyTarget) local() *sampler.Local {
	if st.srv == nil {
		return nil
	}
	return &sampler.Local{PostmasterPID: st.srv.PID, DataDir: st.srv.DataDir}
}

// runStudy carries the study out: preflight, loads, then every run not yet made.
func runStudy(ctx context.Context, env *Env, file, results string, opts studyOptions) (err error) {
	// Every problem of the file, its options and its prices is found before a
	// server starts or anything connects.
	s, wls, err := loadValidStudy(env, file)
	if err != nil {
		return err
	}
	spec, err := readSpec(file)
	if err != nil {
		return err
	}
	lock, err := store.LockStudy(results, s.Name, env.Now())
	if err != nil {
		return err
	}
	defer lock.Release()
	st, err := openForWriting(ctx, env, results)
	if err != nil {
		return err
	}
	defer st.Close()
	// The file and the servers are checked against the runs made before, and the
	// study's record updated, only once everything passed.
	done := map[string]store.StudyRun{}
	prev, err := st.FindStudy(ctx, s.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// a new study: nothing was made before
	case err != nil:
		return err
	case !opts.restart:
		if done, err = st.StudyRuns(ctx, prev.ID); err != nil {
			return err
		}
	}
	plan := s.Plan()
	if err := checkEdits(s, plan, done); err != nil {
		return err
	}

	out := env.Stdout
	fmt.Fprintf(out, "study %s: %d targets, %d workloads, %d runs (%s of measuring)\n",
		s.Name, len(s.Targets), len(s.Workloads), len(plan), s.Estimate().Round(time.Second))
	remaining := 0
	for _, c := range plan {
		if d, ok := done[c.Key]; !ok || d.Status != store.StatusCompleted {
			remaining++
		}
	}
	if remaining == 0 {
		// Nothing to make: no server is started and nothing loaded to say so.
		fmt.Fprintf(out, "all %d runs were made before\n\n", len(plan))
		return printStudyResults(ctx, env, s, st, prev.ID)
	}
	targets, err := preflight(ctx, env, s, wls, opts)
	defer func() {
		if !opts.keepServers {
			stopStudyServers(env, targets, opts.serversDir, err == nil)
		}
	}()
	if err != nil {
		return err
	}
	if err := checkServers(ctx, st, done, targets); err != nil {
		return err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	// The absolute path, so that report finds the prices file from anywhere.
	state := &store.Study{Name: s.Name, File: abs, Spec: spec, Updated: env.Now()}
	if err := st.SaveStudy(ctx, state); err != nil {
		return err
	}
	if opts.restart {
		if err := st.ForgetStudy(ctx, state.ID); err != nil {
			return err
		}
	}
	if err := loadDatasets(ctx, env, s, st, state, targets, wls); err != nil {
		return err
	}

	byWorkload := map[*study.Workload]*studyWorkload{}
	for _, sw := range wls {
		byWorkload[sw.w] = sw
	}
	byTarget := map[*study.Target]*studyTarget{}
	for _, t := range targets {
		byTarget[t.t] = t
	}
	if remaining < len(plan) {
		fmt.Fprintf(out, "%d of %d runs were made before; continuing with the rest\n", len(plan)-remaining, len(plan))
	}
	first := true
	var failed []string
	for _, c := range plan {
		if d, ok := done[c.Key]; ok && d.Status == store.StatusCompleted {
			continue
		}
		if !first && s.Matrix.Pause > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(s.Matrix.Pause):
			}
		}
		first = false
		if ctx.Err() != nil {
			return fmt.Errorf("%w: the study stops before run %s; `study run` again continues there", ErrInterrupted, c.Key)
		}
		sum, err := studyRun(ctx, env, s, st, state, c, len(plan), byTarget[c.Target], byWorkload[c.Workload], results, opts)
		if sum != nil {
			printStudyRun(out, sum)
		}
		if err != nil {
			if errors.Is(err, ErrInterrupted) || ctx.Err() != nil {
				return fmt.Errorf("%w: run %s stopped early; `study run` again makes it anew", ErrInterrupted, c.Key)
			}
			// One failed run does not end a study of hours; it is made again next time.
			fmt.Fprintf(env.Stderr, "run %s failed: %v\n", c.Key, err)
			failed = append(failed, c.Key)
		}
	}
	fmt.Fprintln(out)
	if err := printStudyResults(ctx, env, s, st, state.ID); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d runs failed (%s); `study run` again makes them anew", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

// checkServers refuses to continue a study on a server that changed since its
// earlier runs (another version or other settings): the results would mix.
func checkServers(ctx context.Context, st *store.Store, done map[string]store.StudyRun, targets []*studyTarget) error {
	for _, t := range targets {
		for key, d := range done {
			if !strings.HasPrefix(key, t.t.Name+"/") || d.Status != store.StatusCompleted || d.RunID == 0 {
				continue
			}
			r, err := st.Run(ctx, d.RunID)
			if err != nil {
				continue
			}
			var diffs []string
			if r.ServerVersion != t.info.Version {
				diffs = append(diffs, fmt.Sprintf("version %s, now %s", r.ServerVersion, t.info.Version))
			}
			for _, k := range slices.Sorted(maps.Keys(mergeKeys(r.Settings, t.info.Settings))) {
				if !target.IncidentalSettings[k] && r.Settings[k] != t.info.Settings[k] {
					diffs = append(diffs, fmt.Sprintf("%s %s, now %s", k, valueOr(r.Settings[k], "default"), valueOr(t.info.Settings[k], "default")))
				}
			}
			if len(diffs) > 0 {
				return usageError{fmt.Errorf("target %s changed since run %d of this study (%s): restore it, or run the study with --restart",
					t.t.Name, r.ID, strings.Join(diffs, "; "))}
			}
			break
		}
	}
	return nil
}

func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func readSpec(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read study: %w", err)
	}
	return string(b), nil
}

// checkEdits refuses to continue a study whose file changed what finished runs
// measured: their results would be mixed with different ones.
func checkEdits(s *study.Study, plan []study.Cell, done map[string]store.StudyRun) error {
	var changed []string
	for _, c := range plan {
		if d, ok := done[c.Key]; ok && d.Status == store.StatusCompleted && d.Fingerprint != c.Fingerprint {
			changed = append(changed, c.Key)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	more := ""
	if len(changed) > 3 {
		more = fmt.Sprintf(" and %d more", len(changed)-3)
		changed = changed[:3]
	}
	return usageError{fmt.Errorf("%s changed what finished runs measured (%s%s): undo the edit, give the study a new name:, or run it with --restart",
		s.File, strings.Join(changed, ", "), more)}
}

// studyRun prepares the database for one cell and makes the run.
func studyRun(ctx context.Context, env *Env, s *study.Study, st *store.Store, state *store.Study, c study.Cell, total int,
	t *studyTarget, sw *studyWorkload, results string, opts studyOptions) (*engine.Summary, error) {
	fmt.Fprintf(env.Stdout, "\n[%d/%d] %s\n", c.Seq, total, c.Key)
	if err := prepareRun(ctx, env, t, sw); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	f, wl := studyRunFlags(env, s, sw, c.Clients, nil)
	f.tgt = t.tgt.WithDatabase(sw.runDatabase())
	f.progress = opts.progress
	f.local, f.nodeExporter = t.local(), t.t.NodeExporter
	f.labels = []string{"study=" + s.Name, "cell=" + c.Key, "target=" + t.t.Name, "workload=" + sw.w.Name,
		fmt.Sprintf("repeat=%d", c.Repeat)}
	for k, v := range t.t.Labels {
		f.labels = append(f.labels, k+"="+v)
	}
	sum, err := runWorkload(ctx, env, f, results, wl())
	rec := store.StudyRun{Key: c.Key, Fingerprint: c.Fingerprint, Status: store.StatusFailed}
	if sum != nil {
		rec.RunID, rec.Status = sum.RunID, sum.Status
	}
	if serr := st.SetStudyRun(context.Background(), state.ID, rec); serr != nil && err == nil {
		err = serr
	}
	return sum, err
}

func printStudyRun(w io.Writer, sum *engine.Summary) {
	fmt.Fprintf(w, "  run %d: %s", sum.RunID, headline(sum))
	for _, fl := range sum.Flags {
		if fl.Invalid {
			fmt.Fprintf(w, "  INVALID: %s", fl.Reason)
		}
	}
	fmt.Fprintln(w)
}

// headline is a run's main figure with its latency: NOPM for TPC-C, tps otherwise.
func headline(sum *engine.Summary) string {
	if t := sum.TPCCFigures; t != nil {
		return fmt.Sprintf("%.0f NOPM, %.0f TPM, p99 %.2f ms", t.NOPM, t.TPMCluster, sum.LatencyMs.P99)
	}
	if sb := sum.SysbenchFigures; sb != nil {
		return fmt.Sprintf("%.1f tps, %.0f qps, p95 %.2f ms", sum.TPS, sb.QPS, sum.LatencyMs.P95)
	}
	return fmt.Sprintf("%.1f tps, p99 %.3f ms", sum.TPS, sum.LatencyMs.P99)
}
