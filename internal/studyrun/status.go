package studyrun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
)

// Status is a study's plan and how far it has got, as `study status --json`
// prints it.
type Status struct {
	SchemaVersion int    `json:"schema_version"` // engine.SchemaVersion
	Study         string `json:"study"`
	File          string `json:"file"`
	// Started: the results store holds the study. LastRun is when it last ran,
	// nil when it has not started.
	Started bool       `json:"started"`
	LastRun *time.Time `json:"last_run"`
	// FileChanged: the file differs from the one last run.
	FileChanged bool     `json:"file_changed"`
	Targets     []string `json:"targets"`
	Workloads   []string `json:"workloads"`
	// The cells planned, and how many are in each state; they add up to Planned.
	Planned     int             `json:"planned"`
	Made        int             `json:"made"`        // completed
	ToRun       int             `json:"to_run"`      // never started
	Running     int             `json:"running"`     // started and not finished, or its process was killed
	Interrupted int             `json:"interrupted"` // to run again
	Failed      int             `json:"failed"`      // to run again
	Incomplete  int             `json:"incomplete"`  // to run again
	Edited      int             `json:"edited"`      // made by an earlier version of the file
	Cells       []StatusCell    `json:"cells"`
	Datasets    []StatusDataset `json:"datasets"`

	id int64 // the study's in the store; 0 when not started
}

// StatusCell is one cell of the plan and its state.
type StatusCell struct {
	Seq      int    `json:"seq"` // 1-based position in the plan
	Key      string `json:"key"` // target/workload/cN/rM
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Clients  int    `json:"clients"`
	Rate     int    `json:"rate"` // 0: closed loop
	Repeat   int    `json:"repeat"`
	Search   bool   `json:"search"` // a find-max search, of several runs
	// State is "to run", "edited", or the stored run's status: completed,
	// running, interrupted, failed, incomplete.
	State string `json:"state"`
	RunID *int64 `json:"run_id"` // the latest run made for it; nil when none
}

// StatusDataset is a dataset the study loaded into a target.
type StatusDataset struct {
	Target   string    `json:"target"`
	Database string    `json:"database"` // the database it was loaded into
	Loaded   time.Time `json:"loaded"`
	LoadSecs float64   `json:"load_s"` // how long the load took
}

// The states of a StatusCell besides the stored runs' statuses.
const (
	StateToRun  = "to run"
	StateEdited = "edited"
)

// ReadStatus is the plan of the study in file and what of it is made.
func (sr *Runner) ReadStatus(ctx context.Context, file string) (*Status, error) {
	ss, _, st, err := sr.readStatus(ctx, file)
	if st != nil {
		st.Close()
	}
	return ss, err
}

// readStatus is ReadStatus, with the study the file holds and the store open
// when the study has started (nil else), for the caller to read more and close.
func (sr *Runner) readStatus(ctx context.Context, file string) (*Status, *study.Study, *store.Store, error) {
	s, _, err := loadValidStudy(file)
	if err != nil {
		return nil, nil, nil, err
	}
	ss := newStatus(s, file)
	if _, err := os.Stat(sr.Results); errors.Is(err, fs.ErrNotExist) && !store.IsPostgres(sr.Results) {
		return ss, s, nil, nil
	}
	st, err := sr.OpenReading(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	state, err := st.FindStudy(ctx, s.Name)
	if errors.Is(err, store.ErrNotFound) {
		st.Close()
		return ss, s, nil, nil
	}
	if err == nil {
		err = ss.read(ctx, st, s, state)
	}
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return ss, s, st, nil
}

// newStatus is the study's plan, none of it made.
func newStatus(s *study.Study, file string) *Status {
	ss := &Status{SchemaVersion: engine.SchemaVersion, Study: s.Name, File: file, Targets: []string{}, Workloads: []string{},
		Cells: []StatusCell{}, Datasets: []StatusDataset{}}
	for _, t := range s.Targets {
		ss.Targets = append(ss.Targets, t.Name)
	}
	for _, w := range s.Workloads {
		ss.Workloads = append(ss.Workloads, w.Name)
	}
	for _, c := range s.Plan() {
		ss.Cells = append(ss.Cells, StatusCell{Seq: c.Seq, Key: c.Key, Target: c.Target.Name, Workload: c.Workload.Name,
			Clients: c.Clients, Rate: c.Rate, Repeat: c.Repeat, Search: c.Search != nil, State: StateToRun})
	}
	ss.Planned, ss.ToRun = len(ss.Cells), len(ss.Cells)
	return ss
}

// read sets the cells' states and the datasets from what the store holds of
// the study s (state), by the fingerprints of s's plan.
func (ss *Status) read(ctx context.Context, st *store.Store, s *study.Study, state *store.Study) error {
	done, err := st.StudyRuns(ctx, state.ID)
	if err != nil {
		return err
	}
	datasets, err := st.StudyDatasets(ctx, state.ID)
	if err != nil {
		return err
	}
	ss.id, ss.Started = state.ID, true
	updated := state.Updated
	ss.LastRun = &updated
	if spec, err := os.ReadFile(ss.File); err == nil && string(spec) != state.Spec {
		ss.FileChanged = true
	}
	ss.ToRun = 0
	for i, c := range s.Plan() {
		cell := &ss.Cells[i]
		d, ok := done[c.Key]
		switch {
		case !ok:
		case d.Fingerprint != c.Fingerprint:
			cell.State = StateEdited
		default:
			cell.State = d.Status
		}
		if ok && d.RunID != 0 {
			id := d.RunID
			cell.RunID = &id
		}
		ss.count(cell.State)
	}
	for _, d := range datasets {
		ss.Datasets = append(ss.Datasets, StatusDataset{Target: d.Target, Database: d.Name, Loaded: d.Loaded, LoadSecs: d.LoadS})
	}
	return nil
}

// count adds a cell in state to its count.
func (ss *Status) count(state string) {
	switch state {
	case StateToRun:
		ss.ToRun++
	case StateEdited:
		ss.Edited++
	case store.StatusCompleted:
		ss.Made++
	case store.StatusRunning:
		ss.Running++
	case store.StatusInterrupted:
		ss.Interrupted++
	case store.StatusFailed:
		ss.Failed++
	case store.StatusIncomplete:
		ss.Incomplete++
	}
}

// Status shows what the study in file has made so far: how many cells are in
// each state, and the figures of those made.
func (sr *Runner) Status(ctx context.Context, file string) error {
	ss, s, st, err := sr.readStatus(ctx, file)
	if err != nil {
		return err
	}
	if st == nil {
		fmt.Fprintf(sr.Out, "study %s: not started; %s to make (`pgbakeoff study run %s`)\n", ss.Study, planSize(s.Plan()), file)
		return nil
	}
	defer st.Close()
	fmt.Fprintf(sr.Out, "study %s (%s, last run %s): %s", ss.Study, file, ss.LastRun.Local().Format(time.DateTime), planSize(s.Plan()))
	for _, n := range []struct {
		count int
		what  string
	}{
		{ss.Made, "made"}, {ss.ToRun, "to run"}, {ss.Running, store.StatusRunning + ", to run again"},
		{ss.Interrupted, store.StatusInterrupted + ", to run again"}, {ss.Failed, store.StatusFailed + ", to run again"},
		{ss.Incomplete, store.StatusIncomplete + ", to run again"}, {ss.Edited, "edited since"},
	} {
		if n.count > 0 {
			fmt.Fprintf(sr.Out, ", %d %s", n.count, n.what)
		}
	}
	fmt.Fprintln(sr.Out)
	var edited []string
	for _, c := range ss.Cells {
		if c.State == StateEdited {
			edited = append(edited, c.Key)
		}
	}
	if len(edited) > 0 {
		fmt.Fprintf(sr.Out, "the file changed what these runs measured: %s\n", strings.Join(edited, ", "))
	}
	if ss.FileChanged {
		fmt.Fprintf(sr.Out, "the file differs from the one last run\n")
	}
	fmt.Fprintln(sr.Out)
	return printStudyResults(ctx, sr, s, st, ss.id)
}
