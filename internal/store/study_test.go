package store

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestSamplesAndFlags(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(*testing.T) *Store) {
		ctx := t.Context()
		s := open(t)
		id, err := s.CreateRun(ctx, newRun("tpcc", t0))
		if err != nil {
			t.Fatal(err)
		}
		samples := []Sample{
			{Seq: 1, Start: t0, End: t0.Add(time.Second), Values: map[string]float64{"commits": 1500.5, "wait:CPU": 0.75, "wait:LWLock:WALWrite": 0.25}},
			{Seq: 2, Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), Values: map[string]float64{}},
		}
		for _, sm := range samples {
			if err := s.AddSample(ctx, id, sm); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AddSample(ctx, id, samples[0]); err == nil {
			t.Error("a sample added twice was accepted")
		}
		if err := s.AddSample(ctx, id+1, samples[0]); !errors.Is(err, ErrNotFound) {
			t.Errorf("sample of an unknown run: %v, want ErrNotFound", err)
		}
		flags := []Flag{{Name: "checkpoint", Reason: "1 checkpoint in the window"}, {Name: "restarted", Invalid: true, Reason: "the server restarted"}}
		if err := s.SetFlags(ctx, id, flags[:1]); err != nil {
			t.Fatal(err)
		}
		if err := s.SetFlags(ctx, id, flags); err != nil {
			t.Fatal(err)
		}
		d, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range samples {
			samples[i].Start, samples[i].End = samples[i].Start.UTC(), samples[i].End.UTC()
		}
		if !reflect.DeepEqual(d.Samples, samples) {
			t.Errorf("samples read back:\n%+v\nwant\n%+v", d.Samples, samples)
		}
		if !reflect.DeepEqual(d.Flags, flags) {
			t.Errorf("flags read back: %+v, want %+v", d.Flags, flags)
		}
	})
}

func TestStudyState(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(*testing.T) *Store) {
		ctx := t.Context()
		s := open(t)
		if _, err := s.FindStudy(ctx, "sweep"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown study: %v, want ErrNotFound", err)
		}
		st := &Study{Name: "sweep", File: "a.yaml", Spec: "name: sweep\n", Updated: t0}
		if err := s.SaveStudy(ctx, st); err != nil {
			t.Fatal(err)
		}
		again := &Study{Name: "sweep", File: "b.yaml", Spec: "name: sweep # edited\n", Updated: t0.Add(time.Hour)}
		if err := s.SaveStudy(ctx, again); err != nil {
			t.Fatal(err)
		}
		if again.ID != st.ID || !again.Created.Equal(t0) {
			t.Errorf("saved again: id %d created %v, want id %d created %v", again.ID, again.Created, st.ID, t0)
		}
		got, err := s.FindStudy(ctx, "sweep")
		if err != nil {
			t.Fatal(err)
		}
		if got.File != "b.yaml" || got.Spec != again.Spec || !got.Updated.Equal(t0.Add(time.Hour)) {
			t.Errorf("found %+v, want the second save", got)
		}

		runID, err := s.CreateRun(ctx, newRun("tpcb", t0))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []StudyRun{
			{Key: "a/tpcb/c4/r1", Fingerprint: "f1", RunID: runID, Status: StatusInterrupted},
			{Key: "a/tpcb/c4/r1", Fingerprint: "f1", RunID: runID, Status: StatusCompleted},
			{Key: "b/tpcb/c4/r1", Fingerprint: "f2", Status: StatusFailed},
			{Key: "a/tpcb/c4/find-max/r1/step1", Fingerprint: "f3", RunID: runID, Status: StatusCompleted},
			{Key: "a/tpcb/c4/find-max/r1/step2", Fingerprint: "f3", Status: StatusFailed},
			{Key: "a/tpcb/c4/find-max/r10/step1", Fingerprint: "f3", Status: StatusFailed},
		} {
			if err := s.SetStudyRun(ctx, st.ID, r); err != nil {
				t.Fatal(err)
			}
		}
		// A search's earlier attempt is forgotten by its prefix, and no other record.
		if err := s.ForgetStudyRuns(ctx, st.ID, "a/tpcb/c4/find-max/r1/"); err != nil {
			t.Fatal(err)
		}
		runs, err := s.StudyRuns(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]StudyRun{
			"a/tpcb/c4/find-max/r10/step1": {Key: "a/tpcb/c4/find-max/r10/step1", Fingerprint: "f3", Status: StatusFailed},
			"a/tpcb/c4/r1":                 {Key: "a/tpcb/c4/r1", Fingerprint: "f1", RunID: runID, Status: StatusCompleted},
			"b/tpcb/c4/r1":                 {Key: "b/tpcb/c4/r1", Fingerprint: "f2", Status: StatusFailed},
		}
		if !reflect.DeepEqual(runs, want) {
			t.Errorf("study runs %+v, want %+v", runs, want)
		}

		ds := Dataset{Target: "a", Name: "tpcb_0011aabb", Fingerprint: "f9", Loaded: t0.UTC(), LoadS: 12.5}
		if err := s.SetStudyDataset(ctx, st.ID, ds); err != nil {
			t.Fatal(err)
		}
		dss, err := s.StudyDatasets(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(dss) != 1 || !reflect.DeepEqual(dss[0], ds) {
			t.Errorf("datasets %+v, want [%+v]", dss, ds)
		}

		if err := s.ForgetStudy(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
		runs, _ = s.StudyRuns(ctx, st.ID)
		dss, _ = s.StudyDatasets(ctx, st.ID)
		if len(runs) != 0 || len(dss) != 0 {
			t.Errorf("after ForgetStudy: %d runs, %d datasets, want none", len(runs), len(dss))
		}
		if _, err := s.Run(ctx, runID); err != nil {
			t.Errorf("ForgetStudy removed the run itself: %v", err)
		}
	})
}

// TestMigrateFromFirstVersion opens a store written before samples and studies
// existed: its runs stay and the new tables work.
func TestMigrateFromFirstVersion(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "results.db")
	all := migrations
	migrations = all[:1]
	s, err := Open(ctx, path)
	if err == nil {
		err = createOldRun(t, s, newRun("tpcb", t0))
		s.Close()
	}
	migrations = all
	if err != nil {
		t.Fatal(err)
	}
	if v := pragma(t, path, "user_version"); v != 1 {
		t.Fatalf("user_version of the old store = %d, want 1", v)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx, Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs after migration: %d, %v; want 1", len(runs), err)
	}
	if err := s.AddSample(ctx, runs[0].ID, Sample{Seq: 1, Start: t0, End: t0, Values: map[string]float64{"commits": 1}}); err != nil {
		t.Error(err)
	}
	if v := pragma(t, path, "user_version"); v != len(migrations) {
		t.Errorf("user_version = %d, want %d", v, len(migrations))
	}
}

// A study's looked-up prices are kept with it, replaced by a new lookup, and
// forgotten with its runs when it starts again.
func TestStudyPrices(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(*testing.T) *Store) {
		ctx := t.Context()
		s := open(t)
		st := &Study{Name: "priced", File: "priced.yaml", Spec: "name: priced", Updated: t0}
		if err := s.SaveStudy(ctx, st); err != nil {
			t.Fatal(err)
		}
		first := StudyPrice{Target: "rds", Query: "aws --instance db.m6g.large --region us-east-1", Price: `{"compute_per_hour":0.154}`, LookedUp: t0}
		if err := s.SetStudyPrice(ctx, st.ID, first); err != nil {
			t.Fatal(err)
		}
		again := first
		again.Price, again.LookedUp = `{"compute_per_hour":0.16}`, t0.Add(time.Hour)
		if err := s.SetStudyPrice(ctx, st.ID, again); err != nil {
			t.Fatal(err)
		}
		got, err := s.StudyPrices(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		again.LookedUp = again.LookedUp.UTC()
		if len(got) != 1 || got["rds"] != again {
			t.Errorf("prices %+v, want %+v", got, again)
		}
		if err := s.ForgetStudy(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := s.StudyPrices(ctx, st.ID); err != nil || len(got) != 0 {
			t.Errorf("after ForgetStudy: %v, %v", got, err)
		}
	})
}
