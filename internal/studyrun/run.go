package studyrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/gate"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/localfault"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/metrics"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	"github.com/spf13/pflag"
)

// Runner carries studies out: it runs them, and shows their plan and status.
type Runner struct {
	// Results is the results store's path. OpenStore opens it for writing and
	// OpenReading for reading; both may print warnings of their own.
	Results     string
	OpenStore   func(ctx context.Context) (*store.Store, error)
	OpenReading func(ctx context.Context) (*store.Store, error)
	// Out takes the study's progress and results, Log notices and warnings. TTY:
	// Out is a terminal, where progress bars redraw in place.
	Out, Log io.Writer
	TTY      bool
	Now      func() time.Time
	// Prices looks up the prices of targets that name their cloud's price
	// list; nil looks none up.
	Prices *pricelist.Lister
	// Metrics serves the study's progress, its loads' and its runs' figures
	// live; nil serves none.
	Metrics *metrics.Server
	Options
}

// Options are how `study run` goes about it.
type Options struct {
	// Restart forgets the runs the study made before (they stay in the store).
	Restart bool
	// ServersDir holds the local servers ("": pgbakeoff's servers directory).
	ServersDir string
	// Ports confines the ports of the local servers (the zero range: localpg's default).
	Ports localpg.PortRange
	// KeepServers leaves the local servers running at the end; by default they
	// stop, and once every run is made their data is removed.
	KeepServers bool
	// Progress is how often each run prints a progress line (0: never).
	Progress time.Duration
	// Gates are judged on every run (--fail-if); GatesFailed counts the runs
	// that failed one.
	Gates       []gate.Gate
	GatesFailed int
}

// studyWorkload is a study's workload with its options checked against the
// commands of its kind.
type studyWorkload struct {
	w    *study.Workload
	kind workload.Workload
	// run is the workload's own options, set once from its run: keys and shared
	// by its runs; settings the common ones, at the workload's defaults and then
	// the file's.
	run      engine.Workload
	settings engine.Settings
	faults   []engine.Fault
	// data is the workload's dataset as load: describes it; nil for a workload
	// with nothing to load, which runs on its own database:.
	data load.Dataset
	// source is the workload whose data this one runs on (study.Workload.DataOf);
	// nil when it has data of its own.
	source *studyWorkload
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

// describe names the workload's data for people.
func (sw *studyWorkload) describe() string {
	if sw.data == nil {
		return "database " + sw.w.Database
	}
	return sw.data.Describe()
}

// bytes is the estimated size of the workload's data; 0 when it loads none.
func (sw *studyWorkload) bytes() int64 {
	if sw.data == nil {
		return 0
	}
	return sw.data.Bytes()
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

// commandLineOnly are options of the command line that a study has in its own
// way, named with it for a run: key that gives them.
var commandLineOnly = map[string]string{
	"dsn":      "a study's targets are in targets:",
	"json":     "study runs keep their results in the results store",
	"progress": "use study run --progress",
	"label":    "give the target labels: instead",
}

// matrixSettings are the common settings a study gives every run from its
// matrix, rather than in a workload's run: keys.
var matrixSettings = map[string]string{
	"clients":      "set client counts in matrix.clients (or the workload's clients:)",
	"warmup":       "set it in matrix.warmup",
	"duration":     "set it in matrix.duration",
	"transactions": "a study's runs last matrix.duration",
}

// loadStudy parses the file and checks every workload's options against its
// commands. A file that does not parse is an error; problems with options come
// back in errs, each with its position, so that preflight can add its own.
func loadStudy(file string) (s *study.Study, wls []*studyWorkload, errs study.Errors, err error) {
	s, errs, err = study.LoadAll(file)
	if err != nil {
		return nil, nil, nil, &study.Error{File: file, Msg: err.Error()}
	}
	if s == nil {
		return nil, nil, nil, errs.Err()
	}
	var out []*studyWorkload
	for _, w := range s.Workloads {
		kind, ok := workload.Find(w.Kind)
		if !ok {
			errs = append(errs, s.Errorf(w.Pos, "unknown workload kind %q: choose one of %s", w.Kind, workload.NameList()))
			continue
		}
		sw := &studyWorkload{w: w, kind: kind, db: datasetDatabase(s.Name, s.DatasetKey(w), w.Dataset)}
		if l, ok := kind.(workload.Loader); ok {
			lfl := pflag.NewFlagSet("init "+kind.Name(), pflag.ContinueOnError)
			sw.data = l.NewLoad()
			sw.data.Flags(lfl)
			setOptions(s, &errs, lfl, "load", w.Load)
			if err := sw.data.Validate(); err != nil {
				errs = append(errs, keyed(s, w, "load", w.Load, err))
			}
		} else if w.DataOf == nil && (w.Database == "" || w.Dataset == study.DatasetReload) {
			errs = append(errs, s.Errorf(w.Pos, "workload %s: %s has no data to load: give it the database: it runs on, with dataset: keep or clone", w.Name, w.Kind))
		}
		sw.setRun(s, &errs)
		sw.setFaults(s, &errs)
		if (s.Rates(w)[0] > 0 || s.FindMax(w) != nil) && slices.ContainsFunc(w.Run, func(o study.Option) bool { return o.Name == "rate" }) {
			errs = append(errs, s.Errorf(w.Pos, "workload %s: run: rate is set by the study's rates or find_max: give one or the other", w.Name))
		}
		for _, c := range s.Clients(w) {
			if err := sw.check(s, c, &errs); err != nil {
				break
			}
		}
		out = append(out, sw)
	}
	shareData(out)
	return s, out, errs, nil
}

// shareData gives each workload that runs on another's data that one's dataset
// and database, and the workload that loads it.
func shareData(wls []*studyWorkload) {
	for _, sw := range wls {
		for _, src := range wls {
			if sw.w.DataOf == src.w {
				sw.data, sw.db, sw.source = src.data, src.db, src
			}
		}
	}
}

// loader is the workload that loads sw's data: sw itself, or the one whose data
// it runs on.
func (sw *studyWorkload) loader() *studyWorkload {
	if sw.source != nil {
		return sw.source
	}
	return sw
}

// loadValidStudy is loadStudy for commands that go no further with a bad file.
func loadValidStudy(file string) (*study.Study, []*studyWorkload, error) {
	s, wls, errs, err := loadStudy(file)
	if err == nil && len(errs) > 0 {
		err = errs.Err()
	}
	return s, wls, err
}

// setRun sets the workload's run from its run: keys: the common settings,
// decoded from the file onto the workload's defaults, and its own options, on
// the flags of its run command (bound once).
func (sw *studyWorkload) setRun(s *study.Study, errs *study.Errors) {
	sw.run = sw.kind.NewRun()
	sw.settings = workload.Settings(sw.run)
	fl := pflag.NewFlagSet("run "+sw.kind.Name(), pflag.ContinueOnError)
	if o, ok := sw.run.(workload.Options); ok {
		o.Flags(fl)
	}
	var own []study.Option
	for _, o := range sw.w.Run {
		name := strings.ReplaceAll(o.Name, "-", "_")
		field, ok := sw.settings.Field(name)
		why, fromMatrix := matrixSettings[name]
		if hint, ok := commandLineOnly[name]; ok {
			why, fromMatrix = hint, true
		}
		switch {
		case fromMatrix:
			*errs = append(*errs, s.Errorf(o.Pos, "run: %s is set by the study: %s", o.Key, why))
		case !ok:
			own = append(own, o)
		default:
			if err := o.Decode(field); err != nil {
				*errs = append(*errs, s.Errorf(o.Pos, "run: %s: %v", o.Key, err))
			}
		}
	}
	setOptions(s, errs, fl, "run", own, engine.SettingNames...)
	if r, ok := sw.run.(workload.PathResolver); ok {
		r.ResolvePaths(filepath.Dir(s.File))
	}
}

// setFaults sets the faults of the workload's runs from the file, each checked
// against the run's settings at its place in the file; a fault of a local kind
// needs every target to be a server the study runs.
func (sw *studyWorkload) setFaults(s *study.Study, errs *study.Errors) {
	settings := sw.settings
	settings.Warmup, settings.Duration = s.Matrix.Warmup, s.Matrix.Duration
	for _, sf := range s.Faults(sw.w) {
		if s.FindMax(sw.w) != nil {
			*errs = append(*errs, s.Errorf(sf.Pos, "workload %s: a fault and find_max do not go together: a search's runs each hold one rate steady", sw.w.Name))
			break
		}
		f := engine.Fault{At: sf.At, Kind: engine.FaultKind(sf.Kind), Command: sf.Command}
		if err := f.Check(&settings); err != nil {
			*errs = append(*errs, s.Errorf(sf.Pos, "workload %s: %v", sw.w.Name, err))
			continue
		}
		for _, t := range s.Targets {
			switch {
			case f.Kind.Local() && t.Local == nil:
				*errs = append(*errs, s.Errorf(sf.Pos, "workload %s: fault %s needs a local: target, and %s is not one; for it, give kind: command with the command that does it",
					sw.w.Name, f.Kind, t.Name))
			case (f.Kind == engine.FaultFailover || f.Kind == engine.FaultSwitchover) && t.Local.Standbys == 0:
				*errs = append(*errs, s.Errorf(sf.Pos, "workload %s: fault %s needs a standby to promote, and target %s has none: give it local: {standbys: 1}",
					sw.w.Name, f.Kind, t.Name))
			}
		}
		sw.faults = append(sw.faults, f)
	}
}

// spec is the spec of the workload's runs with a number of clients and a rate
// (0: closed-loop).
func (sw *studyWorkload) spec(s *study.Study, clients, rate int) engine.Spec {
	spec := engine.NewSpec()
	spec.Workload, spec.Settings, spec.Faults = sw.run, sw.settings, sw.faults
	spec.Clients, spec.Warmup, spec.Duration = clients, s.Matrix.Warmup, s.Matrix.Duration
	if rate > 0 {
		spec.Rate = float64(rate)
	} else if s.FindMax(sw.w) != nil {
		spec.Rate = 1 // what the search's runs are: open-loop
	}
	return spec
}

// check validates the runs with a number of clients: the common settings and
// the workload's own options, each error added to errs at the run: key it names,
// or at the workload.
func (sw *studyWorkload) check(s *study.Study, clients int, errs *study.Errors) error {
	spec := sw.spec(s, clients, s.Rates(sw.w)[0])
	var found error
	for _, err := range []error{spec.Validate(), sw.run.Check(&spec)} {
		if err != nil && (found == nil || err.Error() != found.Error()) {
			*errs = append(*errs, keyed(s, sw.w, "run", sw.w.Run, err))
			found = err
		}
	}
	return found
}

// keyed is err at the key of opts it names (engine.FieldError), in the file's
// spelling, or at the workload.
func keyed(s *study.Study, w *study.Workload, section string, opts []study.Option, err error) *study.Error {
	pos, what := w.Pos, err.Error()
	if fe, ok := errors.AsType[*engine.FieldError](err); ok {
		for _, o := range opts {
			if strings.ReplaceAll(o.Name, "-", "_") == fe.Field {
				pos, what = o.Pos, strings.Replace(what, fe.Error(), fe.Named(o.Key), 1)
			}
		}
	}
	return s.Errorf(pos, "workload %s: %s: %s", w.Name, section, what)
}

// setOptions sets the options on the flag set of a workload's command.
// Names beside the flags' are suggested for a name that is none of them.
func setOptions(s *study.Study, errs *study.Errors, fl *pflag.FlagSet, section string, opts []study.Option, others ...string) {
	for _, o := range opts {
		if fl.Lookup(o.Name) == nil {
			var names []string
			fl.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
			for _, n := range others {
				if _, fromMatrix := matrixSettings[n]; !fromMatrix {
					names = append(names, strings.ReplaceAll(n, "_", "-"))
				}
			}
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
	t   *study.Target
	srv *localpg.Server // local targets: the primary
	// cluster is a local target's servers: srv and its standbys.
	cluster *localpg.Cluster
	tgt     *target.Target // with its password
	info    *target.Info
	priv    privileges
	memory  int64 // local: this machine's memory
	free    int64 // local: free bytes where the data directory is
	// fresh marks datasets loaded by this process and not yet run on, so a reloading
	// workload's first run does not load again.
	fresh            map[string]bool
	warnedCheckpoint bool
}

// local is the target's server on this machine, whose processes and disk the
// sampler reads: the cluster's primary, which a failover or switchover in an
// earlier run may have moved to another node. nil for a remote target.
func (st *studyTarget) local(ctx context.Context) *sampler.Local {
	if st.srv == nil {
		return nil
	}
	if st.cluster != nil && len(st.cluster.Nodes) > 1 {
		// When no node answers as the primary, the run finds that out itself.
		if p, err := st.cluster.Primary(ctx); err == nil {
			st.srv = p
		}
	}
	return &sampler.Local{PostmasterPID: st.srv.PID, DataDir: st.srv.DataDir}
}

// Run carries the study in file out: preflight, loads, then every run not yet
// made. It stops at the first run interrupted; failed runs are made again the
// next time.
func (sr *Runner) Run(ctx context.Context, file string) (err error) {
	// Every problem of the file, its options and its prices is found before a
	// server starts or anything connects.
	s, wls, err := loadValidStudy(file)
	if err != nil {
		return err
	}
	spec, err := readSpec(file)
	if err != nil {
		return err
	}
	lock, err := store.LockStudy(sr.Results, s.Name, sr.Now())
	if err != nil {
		return err
	}
	defer lock.Release()
	st, err := sr.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	// The file and the servers are checked against the runs made before, and the
	// study's record updated, only once everything passed.
	prev, done, err := sr.madeBefore(ctx, st, s)
	if err != nil {
		return err
	}
	plan := s.Plan()
	if err := checkEdits(s, plan, done); err != nil {
		return err
	}
	// Prices are looked up before servers start: a price the file gets wrong
	// stops the study before it takes hours.
	stored := map[string]store.StudyPrice{}
	if prev.ID != 0 && !sr.Restart {
		if stored, err = st.StudyPrices(ctx, prev.ID); err != nil {
			return err
		}
	}
	prices, err := sr.lookUpPrices(ctx, s, stored, false)
	if err != nil {
		return err
	}

	out := sr.Out
	fmt.Fprintf(out, "study %s: %d targets, %d workloads, %s (%s of measuring)\n",
		s.Name, len(s.Targets), len(s.Workloads), planSize(plan), s.Estimate().Round(time.Second))
	remaining := 0
	for _, c := range plan {
		if d, ok := done[c.Key]; !ok || d.Status != store.StatusCompleted {
			remaining++
		}
	}
	progress := sr.Metrics.Study(s.Name)
	progress.Plan(len(plan), len(plan)-remaining)
	if remaining == 0 {
		// Nothing to make: no server is started and nothing loaded to say so.
		fmt.Fprintf(out, "all %s were made before\n\n", planSize(plan))
		if err := savePrices(ctx, st, prev.ID, prices); err != nil {
			return err
		}
		return printStudyResults(ctx, sr, s, st, prev.ID)
	}
	targets, err := preflight(ctx, sr, s, wls)
	defer func() {
		if !sr.KeepServers {
			stopStudyServers(sr, targets, sr.ServersDir, err == nil)
		}
	}()
	if err != nil {
		return err
	}
	if err := checkServers(ctx, s, st, done, targets); err != nil {
		return err
	}
	state, err := sr.save(ctx, st, s, file, spec)
	if err != nil {
		return err
	}
	if err := savePrices(ctx, st, state.ID, prices); err != nil {
		return err
	}
	if err := loadDatasets(ctx, sr, s, st, state, targets, wls); err != nil {
		return err
	}

	if remaining < len(plan) {
		fmt.Fprintf(out, "%d of %s were made before; continuing with the rest\n", len(plan)-remaining, planSize(plan))
	}
	failed, err := sr.makeRuns(ctx, s, st, state, plan, done, targets, wls, progress)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := printStudyResults(ctx, sr, s, st, state.ID); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d runs failed (%s); `study run` again makes them anew", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

// madeBefore is the study's record in the store and the runs it made before;
// none with Restart. A new study has an empty record.
func (sr *Runner) madeBefore(ctx context.Context, st *store.Store, s *study.Study) (*store.Study, map[string]store.StudyRun, error) {
	done := map[string]store.StudyRun{}
	prev, err := st.FindStudy(ctx, s.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &store.Study{}, done, nil
	case err != nil:
		return nil, nil, err
	case !sr.Restart:
		if done, err = st.StudyRuns(ctx, prev.ID); err != nil {
			return nil, nil, err
		}
	}
	return prev, done, nil
}

// save records the study as run now from file, whose text is spec, and with
// Restart forgets its earlier runs.
func (sr *Runner) save(ctx context.Context, st *store.Store, s *study.Study, file, spec string) (*store.Study, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	// The absolute path, so that report finds the prices file from anywhere.
	state := &store.Study{Name: s.Name, File: abs, Spec: spec, Updated: sr.Now()}
	if err := st.SaveStudy(ctx, state); err != nil {
		return nil, err
	}
	if sr.Restart {
		if err := st.ForgetStudy(ctx, state.ID); err != nil {
			return nil, err
		}
	}
	return state, nil
}

// makeRuns makes the runs of the plan not made before, one after another with
// the matrix's pause between them, and names those that failed; it stops at the
// first one interrupted.
func (sr *Runner) makeRuns(ctx context.Context, s *study.Study, st *store.Store, state *store.Study, plan []study.Cell,
	done map[string]store.StudyRun, targets []*studyTarget, wls []*studyWorkload, progress *metrics.Study) (failed []string, err error) {
	byWorkload := map[*study.Workload]*studyWorkload{}
	for _, sw := range wls {
		byWorkload[sw.w] = sw
	}
	byTarget := map[*study.Target]*studyTarget{}
	for _, t := range targets {
		byTarget[t.t] = t
	}
	first := true
	same := newSameFailures(len(targets))
	for _, c := range plan {
		if d, ok := done[c.Key]; ok && d.Status == store.StatusCompleted {
			continue
		}
		if (!first && !pause(ctx, s.Matrix.Pause)) || ctx.Err() != nil {
			return nil, fmt.Errorf("%w: the study stops before run %s; `study run` again continues there", engine.ErrInterrupted, c.Key)
		}
		first = false
		var err error
		if c.Search != nil {
			var res *findmax.Result
			res, err = studySearch(ctx, sr, s, st, state, c, len(plan), byTarget[c.Target], byWorkload[c.Workload])
			switch {
			case err != nil:
				fmt.Fprintf(sr.Out, "  the search stopped early and is not recorded; `study run` again makes it anew\n")
			case res != nil && len(res.Steps) > 0:
				printSearch(sr.Out, res)
			}
		} else {
			var sum *engine.Summary
			if sum, err = studyRun(ctx, sr, s, st, state, c, len(plan), byTarget[c.Target], byWorkload[c.Workload]); sum != nil {
				printStudyRun(sr.Out, sum)
			}
		}
		progress.Ran(err == nil)
		if err != nil {
			if errors.Is(err, engine.ErrInterrupted) || ctx.Err() != nil {
				return nil, fmt.Errorf("%w: run %s stopped early; `study run` again makes it anew", engine.ErrInterrupted, c.Key)
			}
			// One failed run does not end a study of hours; it is made again next
			// time. The same failure everywhere does.
			failed = append(failed, c.Key)
			if stop := same.failed(c, err); stop != nil {
				return failed, stop
			}
			fmt.Fprintf(sr.Log, "run %s failed: %v\n", c.Key, err)
			continue
		}
		same.succeeded(c)
	}
	return failed, nil
}

// checkServers refuses to continue a study on a server that changed since its
// earlier runs (another version or other settings): the results would mix.
func checkServers(ctx context.Context, s *study.Study, st *store.Store, done map[string]store.StudyRun, targets []*studyTarget) error {
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
				return s.Errorf(t.t.Pos, "target %s changed since run %d of this study (%s): restore it, or run the study with --restart",
					t.t.Name, r.ID, strings.Join(diffs, "; "))
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
	return s.Errorf(study.Pos{}, "the file changed what finished runs measured (%s%s): undo the edit, give the study a new name:, or run it with --restart",
		strings.Join(changed, ", "), more)
}

// studyRun prepares the database for one cell and makes the run.
func studyRun(ctx context.Context, sr *Runner, s *study.Study, st *store.Store, state *store.Study, c study.Cell, total int,
	t *studyTarget, sw *studyWorkload) (*engine.Summary, error) {
	fmt.Fprintf(sr.Out, "\n[%d/%d] %s\n", c.Seq, total, c.Key)
	spec := cellSpec(ctx, sr, s, c, t, sw)
	return makeRun(ctx, sr, st, state, spec, t, sw, store.StudyRun{Key: c.Key, Fingerprint: c.Fingerprint})
}

// cellSpec is the spec of a cell's runs, with the labels that find them again.
func cellSpec(ctx context.Context, sr *Runner, s *study.Study, c study.Cell, t *studyTarget, sw *studyWorkload) engine.Spec {
	spec := sw.spec(s, c.Clients, c.Rate)
	spec.Target = t.tgt.WithDatabase(sw.runDatabase())
	spec.Local, spec.NodeExporter = t.local(ctx), t.t.NodeExporter
	spec.Labels = map[string]string{"study": s.Name, "cell": c.Key, "target": t.t.Name, "workload": sw.w.Name,
		"repeat": strconv.Itoa(c.Repeat)}
	if c.Rate > 0 {
		spec.Labels["rate"] = strconv.Itoa(c.Rate)
	}
	maps.Copy(spec.Labels, t.t.Labels)
	return spec
}

// env is where the study's runs on t happen; a local target's faults are done
// to its cluster.
func (sr *Runner) env(t *studyTarget) engine.Env {
	env := engine.Env{OpenStore: sr.OpenStore, Progress: sr.Progress, Out: sr.Out, Log: sr.Log, Clock: sr.Now, Metrics: sr.Metrics}
	if t.cluster != nil {
		env.Injector = localfault.Injector{Cluster: t.cluster, Log: func(format string, args ...any) { fmt.Fprintf(sr.Log, format+"\n", args...) }}
	}
	return env
}

// judge prints the verdict of each gate on the run, and counts it when one failed.
func (sr *Runner) judge(sum *engine.Summary) {
	if len(sr.Gates) == 0 {
		return
	}
	results, passed := gate.Judge(sr.Gates, sum)
	for _, r := range results {
		fmt.Fprintf(sr.Out, "  %s\n", r)
	}
	if !passed {
		sr.GatesFailed++
	}
}

// makeRun prepares the database, makes the run and records it as rec.
func makeRun(ctx context.Context, sr *Runner, st *store.Store, state *store.Study, spec engine.Spec,
	t *studyTarget, sw *studyWorkload, rec store.StudyRun) (*engine.Summary, error) {
	if err := prepareRun(ctx, sr, t, sw); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	sum, err := engine.Run(ctx, spec, sr.env(t))
	rec.Status = store.StatusFailed
	if sum != nil {
		rec.RunID, rec.Status = sum.RunID, sum.Status
		if spec.Labels["find_max"] == "" { // a search's steps miss the objective on purpose
			sr.judge(sum)
		}
	}
	if serr := st.SetStudyRun(context.Background(), state.ID, rec); serr != nil && err == nil {
		err = serr
	}
	return sum, err
}

// studySearch makes a search cell: findmax.Search, each of whose runs is a run
// of the study recorded under its StepKey, after the matrix's pause. The cell is
// recorded completed once the search ends, whatever it found; an earlier
// attempt's runs are forgotten first, since a search is made whole or anew.
func studySearch(ctx context.Context, sr *Runner, s *study.Study, st *store.Store, state *store.Study, c study.Cell, total int,
	t *studyTarget, sw *studyWorkload) (*findmax.Result, error) {
	obj, err := findmax.ParseObjective(s.Objective.SLO, s.Objective.Errors)
	if err != nil {
		return nil, s.Errorf(study.Pos{}, "objective: %v", err)
	}
	fmt.Fprintf(sr.Out, "\n[%d/%d] %s: the highest rate within %s\n", c.Seq, total, c.Key, obj)
	spec := cellSpec(ctx, sr, s, c, t, sw)
	// Each attempt its own: an interrupted one's runs stay in the store.
	spec.Labels["find_max"] = c.Key + "@" + sr.Now().UTC().Format(time.RFC3339)
	if err := st.ForgetStudyRuns(ctx, state.ID, c.Key+"/"); err != nil {
		return nil, err
	}
	n := 0
	step := func(ctx context.Context, spec engine.Spec) (*engine.Summary, error) {
		if n++; n > 1 && !pause(ctx, s.Matrix.Pause) {
			return nil, engine.ErrInterrupted
		}
		key := study.StepKey(c.Key, n)
		fmt.Fprintf(sr.Out, "\n[%d/%d] %s\n", c.Seq, total, key)
		spec.Labels["cell"] = key
		if spec.Rate > 0 {
			spec.Labels["rate"] = strconv.FormatFloat(spec.Rate, 'f', -1, 64)
		}
		return makeRun(ctx, sr, st, state, spec, t, sw, store.StudyRun{Key: key, Fingerprint: c.Fingerprint})
	}
	f := c.Search
	res, err := findmax.Search(ctx, spec, step, findmax.Options{Objective: obj, Ceiling: float64(f.Ceiling), Confirm: f.Confirm,
		Resolution: f.Resolution, Budget: f.Budget, Progress: sr.Out})
	rec := store.StudyRun{Key: c.Key, Fingerprint: c.Fingerprint, Status: store.StatusCompleted}
	switch {
	case errors.Is(err, engine.ErrInterrupted) || ctx.Err() != nil:
		rec.Status = store.StatusInterrupted
	case err != nil:
		rec.Status = store.StatusFailed
	}
	if serr := st.SetStudyRun(context.Background(), state.ID, rec); serr != nil && err == nil {
		err = serr
	}
	return res, err
}

// pause waits d, and tells whether ctx let it.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// planSize counts a plan's cells: "12 runs", "4 searches", "12 runs and 4 searches".
func planSize(plan []study.Cell) string {
	searches := 0
	for _, c := range plan {
		if c.Search != nil {
			searches++
		}
	}
	runs := fmt.Sprintf("%d runs", len(plan)-searches)
	switch {
	case searches == 0:
		return runs
	case searches == len(plan):
		return fmt.Sprintf("%d searches", searches)
	}
	return fmt.Sprintf("%s and %d searches", runs, searches)
}

// printSearch says what a search found, how sure it is, and why it is not to be
// trusted when its runs contradict each other.
func printSearch(w io.Writer, res *findmax.Result) {
	fmt.Fprintf(w, "  max rate within the objective: %s; %s\n", res.Answer(), res.Sure())
	if d := res.Found.Doubt; d != "" {
		fmt.Fprintf(w, "  unreliable: %s\n", d)
	}
}

func printStudyRun(w io.Writer, sum *engine.Summary) {
	fmt.Fprintf(w, "  run %d: %s", sum.RunID, sum.Headline())
	for _, fl := range sum.Flags {
		if fl.Invalid {
			fmt.Fprintf(w, "  INVALID: %s", fl.Reason)
		}
	}
	fmt.Fprintln(w)
}
