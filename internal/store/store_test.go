package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// zone is not UTC so the tests show that times survive a change of location.
var zone = time.FixedZone("UTC+2", 2*60*60)

// t0 has nanoseconds so the tests show that none are lost.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, zone)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s, path
}

func newRun(workload string, started time.Time) *Run {
	return &Run{
		Target:   "host=db1 user=bench dbname=bench",
		Workload: workload,
		Script:   "tpcb-like@9,select-only@1",
		Clients:  16,
		Started:  started,
	}
}

func TestRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(*testing.T) *Store) {
		ctx := t.Context()
		s := open(t)

		run := newRun("tpcb", t0)
		run.Params = map[string]any{"seed": int64(1<<62 + 1), "duration": "60s", "scale": 100, "vacuum": true}
		run.ServerVersion = "PostgreSQL 17.2"
		run.Settings = map[string]string{"shared_buffers": "8GB", "synchronous_commit": "off"}
		run.Labels = map[string]string{"storage": "nvme"}
		id, err := s.CreateRun(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if id == 0 || run.ID != id || run.Status != StatusRunning {
			t.Fatalf("CreateRun = %d, run.ID %d, status %q; want a non-zero id set on the run and status running", id, run.ID, run.Status)
		}

		intervals := []Interval{
			{Seq: 1, Phase: PhaseWarmup, Start: t0, End: t0.Add(time.Second), Txns: 900, Failed: 1, Retried: 2, TPS: 900,
				LatencyMs: Latency{Avg: 1.5, P50: 1.2, P90: 2, P95: 2.5, P99: 4, P999: 9.75, Max: 12.125}, Errors: 1},
			{Seq: 2, Phase: PhaseMeasure, Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), Txns: 1000, TPS: 1000.5,
				LatencyMs: Latency{Avg: 1, P50: 1, P90: 1, P95: 1, P99: 2, P999: 3, Max: 4}},
		}
		for _, iv := range intervals {
			if err := s.AddInterval(ctx, id, iv); err != nil {
				t.Fatal(err)
			}
		}
		histograms := []Histogram{
			{TxType: "tpcb-like", Kind: KindMeasure, Encoded: []byte{0x1c, 0x84, 0x93, 0x14, 0x00}},
			{TxType: "tpcb-like", Kind: KindWarmup, Encoded: []byte{0x1c, 0x84, 0x93, 0x14, 0x01}},
		}
		if err := s.AddHistograms(ctx, id, histograms); err != nil {
			t.Fatal(err)
		}
		errs := []ErrorCount{
			{SQLState: "40001", Class: "serialization", TxType: "tpcb-like", Count: 3, Retried: true, Example: "could not serialize access"},
			{SQLState: "57P01", Class: "connection", TxType: "tpcb-like", Count: 1, Example: "terminating connection"},
		}
		if err := s.AddErrors(ctx, id, errs); err != nil {
			t.Fatal(err)
		}
		stats := []ServerStats{
			{Point: PointBeforeConnect, At: t0.Add(-time.Second), Values: map[string]int64{"xact_commit": 10, "blks_hit": 1 << 40}},
			{Point: PointWindowStart, At: t0.Add(time.Second), Values: map[string]int64{}},
		}
		for _, st := range stats {
			if err := s.AddServerStats(ctx, id, st); err != nil {
				t.Fatal(err)
			}
		}

		run.Ended = t0.Add(2 * time.Second)
		run.Status = StatusCompleted
		run.ClientCPUUser, run.ClientCPUSys = 1.25, 0.5
		run.Summary = json.RawMessage(`{"tps":1000.5}`)
		run.Settings = map[string]string{"shared_buffers": "8GB"}
		run.Labels = nil // nil leaves the stored labels alone
		if err := s.FinishRun(ctx, run); err != nil {
			t.Fatal(err)
		}

		got, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := &RunDetail{
			Run:         *run,
			Intervals:   intervals,
			Histograms:  histograms,
			Errors:      errs,
			ServerStats: stats,
		}
		// Params come back as encoding/json decodes them, numbers exact.
		want.Params = map[string]any{"seed": json.Number("4611686018427387905"), "duration": "60s", "scale": json.Number("100"), "vacuum": true}
		want.Labels = map[string]string{"storage": "nvme"}
		// errors are ordered by SQLSTATE.
		want.Errors = []ErrorCount{errs[0], errs[1]}
		assertDetail(t, got, want)

		runs, err := s.Runs(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 {
			t.Fatalf("Runs returned %d runs, want 1", len(runs))
		}
		assertRun(t, &runs[0], &want.Run)

		// SaveRun writes the whole run into another store as it was, under a new id.
		// A sample of many values, written in chunks.
		many := map[string]float64{}
		for i := range 150 {
			many[fmt.Sprintf("wait:IO:%03d", i)] = float64(i) / 4
		}
		if err := s.AddSample(ctx, id, Sample{Seq: 1, Start: t0, End: t0.Add(time.Second), Values: many}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetFlags(ctx, id, []Flag{{Name: "dip", Invalid: true, Reason: "a dip"}}); err != nil {
			t.Fatal(err)
		}
		full, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		other := open(t)
		if _, err := other.CreateRun(ctx, newRun("sysbench", t0)); err != nil {
			t.Fatal(err)
		}
		copied := *full
		newID, err := other.SaveRun(ctx, &copied)
		if err != nil || newID == id {
			t.Fatalf("SaveRun = %d, %v; want a new id", newID, err)
		}
		back, err := other.Run(ctx, newID)
		if err != nil {
			t.Fatal(err)
		}
		full.ID = newID
		assertDetail(t, back, full)
		if !reflect.DeepEqual(back.Samples, full.Samples) || !reflect.DeepEqual(back.Flags, full.Flags) || back.Process != full.Process {
			t.Errorf("SaveRun: samples %+v, flags %+v, process %+v; want %+v, %+v, %+v", back.Samples, back.Flags, back.Process, full.Samples, full.Flags, full.Process)
		}
	})
}

// assertDetail compares times with Equal and everything else deeply.
func assertDetail(t *testing.T, got, want *RunDetail) {
	t.Helper()
	assertRun(t, &got.Run, &want.Run)
	if len(got.Intervals) != len(want.Intervals) {
		t.Fatalf("%d intervals, want %d", len(got.Intervals), len(want.Intervals))
	}
	for i := range got.Intervals {
		g, w := got.Intervals[i], want.Intervals[i]
		if !g.Start.Equal(w.Start) || !g.End.Equal(w.End) {
			t.Errorf("interval %d: times %v-%v, want %v-%v", i, g.Start, g.End, w.Start, w.End)
		}
		g.Start, g.End = w.Start, w.End
		if !reflect.DeepEqual(g, w) {
			t.Errorf("interval %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if len(got.ServerStats) != len(want.ServerStats) {
		t.Fatalf("%d server stats, want %d", len(got.ServerStats), len(want.ServerStats))
	}
	for i := range got.ServerStats {
		g, w := got.ServerStats[i], want.ServerStats[i]
		if !g.At.Equal(w.At) {
			t.Errorf("server stats %d: at %v, want %v", i, g.At, w.At)
		}
		g.At = w.At
		if !reflect.DeepEqual(g, w) {
			t.Errorf("server stats %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if !reflect.DeepEqual(got.Histograms, want.Histograms) {
		t.Errorf("histograms:\n got %+v\nwant %+v", got.Histograms, want.Histograms)
	}
	if !reflect.DeepEqual(got.Errors, want.Errors) {
		t.Errorf("errors:\n got %+v\nwant %+v", got.Errors, want.Errors)
	}
}

func assertRun(t *testing.T, got, want *Run) {
	t.Helper()
	g := *got
	if !g.Started.Equal(want.Started) || !g.Ended.Equal(want.Ended) {
		t.Errorf("run %d: times %v-%v, want %v-%v", g.ID, g.Started, g.Ended, want.Started, want.Ended)
	}
	g.Started, g.Ended = want.Started, want.Ended
	if !reflect.DeepEqual(&g, want) {
		t.Errorf("run:\n got %+v\nwant %+v", g, *want)
	}
}

func TestReplace(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t)
	id, err := s.CreateRun(ctx, newRun("tpcb", t0))
	if err != nil {
		t.Fatal(err)
	}
	// A caller saving cumulative totals periodically: the last save wins.
	for _, n := range []byte{1, 2, 3} {
		if err := s.AddHistograms(ctx, id, []Histogram{{TxType: "t", Kind: KindMeasure, Encoded: []byte{n}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddErrors(ctx, id, []ErrorCount{{SQLState: "40001", TxType: "t", Count: int64(n), Example: fmt.Sprint(n)}}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := s.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	wantH := []Histogram{{TxType: "t", Kind: KindMeasure, Encoded: []byte{3}}}
	wantE := []ErrorCount{{SQLState: "40001", TxType: "t", Count: 3, Example: "3"}}
	if !reflect.DeepEqual(d.Histograms, wantH) || !reflect.DeepEqual(d.Errors, wantE) {
		t.Errorf("after three saves: histograms %+v errors %+v, want %+v %+v", d.Histograms, d.Errors, wantH, wantE)
	}
}

func TestInvalidWrites(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t)
	run := newRun("tpcb", t0)
	id, err := s.CreateRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddInterval(ctx, id, Interval{Seq: 1, Phase: PhaseMeasure, Start: t0, End: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddServerStats(ctx, id, ServerStats{Point: PointWindowEnd, At: t0}); err != nil {
		t.Fatal(err)
	}
	const missing = 4242
	tests := []struct {
		name     string
		write    func() error
		notFound bool
		contains string
	}{
		{"run/no workload", func() error { _, err := s.CreateRun(ctx, newRun("", t0)); return err }, false, "no workload"},
		{"run/no start", func() error { _, err := s.CreateRun(ctx, newRun("tpcb", time.Time{})); return err }, false, "no start time"},
		{"run/bad status", func() error {
			r := newRun("tpcb", t0)
			r.Status = "done"
			_, err := s.CreateRun(ctx, r)
			return err
		}, false, `unknown status "done"`},
		{"finish/still running", func() error {
			r := *run
			r.Ended, r.Status = t0, StatusRunning
			return s.FinishRun(ctx, &r)
		}, false, "not a final status"},
		{"finish/no end", func() error {
			r := *run
			r.Status = StatusCompleted
			return s.FinishRun(ctx, &r)
		}, false, "no end time"},
		{"finish/bad summary", func() error {
			r := *run
			r.Ended, r.Status, r.Summary = t0, StatusCompleted, json.RawMessage("{")
			return s.FinishRun(ctx, &r)
		}, false, "not valid JSON"},
		{"finish/unknown run", func() error {
			r := *run
			r.ID, r.Ended, r.Status = missing, t0, StatusFailed
			return s.FinishRun(ctx, &r)
		}, true, "run 4242"},
		{"interval/bad phase", func() error { return s.AddInterval(ctx, id, Interval{Seq: 2, Phase: "cooldown"}) }, false, `unknown phase "cooldown"`},
		{"interval/duplicate seq", func() error { return s.AddInterval(ctx, id, Interval{Seq: 1, Phase: PhaseMeasure}) }, false, "UNIQUE"},
		{"interval/unknown run", func() error { return s.AddInterval(ctx, missing, Interval{Seq: 1, Phase: PhaseMeasure}) }, true, "run 4242"},
		{"histograms/empty", func() error { return s.AddHistograms(ctx, id, []Histogram{{TxType: "t", Kind: KindMeasure}}) }, false, "empty"},
		{"histograms/unknown run", func() error {
			return s.AddHistograms(ctx, missing, []Histogram{{TxType: "t", Kind: KindMeasure, Encoded: []byte{1}}})
		}, true, "run 4242"},
		{"errors/unknown run", func() error { return s.AddErrors(ctx, missing, []ErrorCount{{SQLState: "40001"}}) }, true, "run 4242"},
		{"server stats/duplicate point", func() error { return s.AddServerStats(ctx, id, ServerStats{Point: PointWindowEnd, At: t0}) }, false, "UNIQUE"},
		{"server stats/unknown run", func() error { return s.AddServerStats(ctx, missing, ServerStats{Point: PointWindowEnd, At: t0}) }, true, "run 4242"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.write()
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrNotFound) != tt.notFound {
				t.Errorf("errors.Is(%q, ErrNotFound) = %v, want %v", err, !tt.notFound, tt.notFound)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", err, tt.contains)
			}
		})
	}

	// The failed writes left nothing behind.
	d, err := s.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Intervals) != 1 || len(d.Histograms) != 0 || len(d.ServerStats) != 1 || d.Status != StatusRunning {
		t.Errorf("after failed writes: %d intervals, %d histograms, %d server stats, status %q; want 1, 0, 1, running",
			len(d.Intervals), len(d.Histograms), len(d.ServerStats), d.Status)
	}
}

func TestRunNotFound(t *testing.T) {
	s, _ := openTemp(t)
	_, err := s.Run(t.Context(), 42)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Run(42) error = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "run 42") {
		t.Errorf("error %q does not name the run", err)
	}
}

func TestRuns(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t)
	// Created out of order; two share a start time, where the later id wins.
	seed := []struct {
		workload string
		offset   time.Duration
	}{
		{"tpcb", 2 * time.Hour}, // id 1
		{"tpcc", 0},             // id 2
		{"tpcb", 3 * time.Hour}, // id 3
		{"tpcb", 0},             // id 4
		{"sysbench", time.Hour}, // id 5
		{"tpcc", 3 * time.Hour}, // id 6
	}
	for _, r := range seed {
		if _, err := s.CreateRun(ctx, newRun(r.workload, t0.Add(r.offset))); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		filter Filter
		want   []int64
	}{
		{Filter{}, []int64{6, 3, 1, 5, 4, 2}},
		{Filter{Limit: 2}, []int64{6, 3}},
		{Filter{Limit: 100}, []int64{6, 3, 1, 5, 4, 2}},
		{Filter{Workload: "tpcb"}, []int64{3, 1, 4}},
		{Filter{Workload: "tpcb", Limit: 1}, []int64{3}},
		{Filter{Workload: "tpcc", Limit: 5}, []int64{6, 2}},
		{Filter{Workload: "tpch"}, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("workload=%s/limit=%d", tt.filter.Workload, tt.filter.Limit), func(t *testing.T) {
			runs, err := s.Runs(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range runs {
				got = append(got, r.ID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ids %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPermissions(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string) // make the file before Open
	}{
		{"new", func(*testing.T, string) {}},
		{"existing empty 0644", func(t *testing.T, path string) {
			writeMode(t, path, nil, 0o644)
		}},
		{"existing store 0644 with loose wal", func(t *testing.T, path string) {
			s, err := Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateRun(t.Context(), newRun("tpcb", t0)); err != nil {
				t.Fatal(err)
			}
			// Keep s open so its -wal and -shm files stay, then loosen all three.
			for _, name := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Chmod(name, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() { s.Close() })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.db")
			tt.prepare(t, path)
			s, err := Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// A write makes sure the -wal and -shm files exist.
			if _, err := s.CreateRun(t.Context(), newRun("tpcb", t0)); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{path, path + "-wal", path + "-shm"} {
				fi, err := os.Stat(name)
				if err != nil {
					t.Fatal(err)
				}
				if perm := fi.Mode().Perm(); perm != 0o600 {
					t.Errorf("%s has mode %v, want 0600", filepath.Base(name), perm)
				}
			}
		})
	}
}

func writeMode(t *testing.T, path string, data []byte, perm fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
}

func TestMigrate(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "results.db")
	for i := range 3 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i+1, err)
		}
		if _, err := s.CreateRun(ctx, newRun("tpcb", t0)); err != nil {
			t.Fatal(err)
		}
		runs, err := s.Runs(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != i+1 {
			t.Errorf("open %d: %d runs, want %d", i+1, len(runs), i+1)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if v := pragma(t, path, "user_version"); v != len(migrations) {
		t.Errorf("user_version = %d, want %d", v, len(migrations))
	}
	if id := pragma(t, path, "application_id"); id != applicationID {
		t.Errorf("application_id = %#x, want %#x", id, applicationID)
	}
}

func TestRefusedFiles(t *testing.T) {
	tests := []struct {
		name     string
		prepare  func(t *testing.T, path string)
		tooNew   bool
		contains string
	}{
		{"newer schema", func(t *testing.T, path string) {
			s, err := Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			exec1(t, path, "PRAGMA user_version = 99")
		}, true, "schema version 99"},
		{"another program's database", func(t *testing.T, path string) {
			exec1(t, path, "CREATE TABLE notes (body TEXT)")
		}, false, "not a pgbakeoff results store"},
		{"another program's application_id", func(t *testing.T, path string) {
			exec1(t, path, "PRAGMA application_id = 1234")
		}, false, "not a pgbakeoff results store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.db")
			tt.prepare(t, path)
			s, err := Open(t.Context(), path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if errors.Is(err, ErrSchemaTooNew) != tt.tooNew {
				t.Errorf("errors.Is(%q, ErrSchemaTooNew) = %v, want %v", err, !tt.tooNew, tt.tooNew)
			}
			assertOneLine(t, err, path, tt.contains)
		})
	}
}

// exec1 runs one statement on path with a plain connection.
func exec1(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

func pragma(t *testing.T, path, name string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestBadPaths(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	garbageData := []byte(strings.Repeat("not a database\n", 100))
	writeMode(t, garbage, garbageData, 0o600)
	regular := filepath.Join(dir, "regular")
	writeMode(t, regular, []byte("x"), 0o600)
	readOnly := filepath.Join(dir, "readonly")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		path     string
		contains string
		skip     string
	}{
		{"empty", "", "no path given", ""},
		{"directory", dir, "is a directory", ""},
		{"not sqlite", garbage, "not a SQLite database", ""},
		{"under a regular file", filepath.Join(regular, "results.db"), "not a directory", ""},
		{"missing directory", filepath.Join(dir, "missing", "results.db"), "no such file or directory", ""},
		{"unwritable directory", filepath.Join(readOnly, "results.db"), "permission denied",
			map[bool]string{true: "root may write anywhere"}[os.Geteuid() == 0]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			s, err := Open(t.Context(), tt.path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			assertOneLine(t, err, tt.path, tt.contains)
		})
	}

	// The garbage file was not touched.
	if data, err := os.ReadFile(garbage); err != nil || string(data) != string(garbageData) {
		t.Errorf("garbage file changed (read error %v)", err)
	}
	if _, err := os.Stat(garbage + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a -wal file was made next to the garbage file (stat error %v)", err)
	}
}

func assertOneLine(t *testing.T, err error, path, contains string) {
	t.Helper()
	msg := err.Error()
	prefix := "open results store " + path + ": "
	if path == "" {
		prefix = "open results store: "
	}
	if errors.Is(err, ErrNotStore) {
		prefix = path + " is not a pgbakeoff results store"
	}
	if !strings.HasPrefix(msg, prefix) {
		t.Errorf("error %q does not start with %q", msg, prefix)
	}
	if !strings.Contains(msg, contains) {
		t.Errorf("error %q does not contain %q", msg, contains)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is more than one line", msg)
	}
}

// helperEnv names the store path for TestHelperKilledWriter.
const helperEnv = "PGBAKEOFF_STORE_HELPER_PATH"

// TestHelperKilledWriter is not a test: TestKilledWriter runs it in a child
// process that writes a run and two intervals, says so, and waits to be killed.
func TestHelperKilledWriter(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("runs only as TestKilledWriter's child process")
	}
	if err := writeUnfinished(context.Background(), path); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("written")
	time.Sleep(time.Minute) // waits to be killed, not for something
	os.Exit(1)              // not reached when the parent kills us
}

// writeUnfinished writes a run and two intervals and leaves the store open.
func writeUnfinished(ctx context.Context, path string) error {
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	id, err := s.CreateRun(ctx, newRun("tpcb", t0))
	if err != nil {
		return err
	}
	for seq := 1; seq <= 2; seq++ {
		iv := Interval{Seq: seq, Phase: PhaseMeasure, Start: t0, End: t0.Add(time.Second), Txns: int64(seq) * 100}
		if err := s.AddInterval(ctx, id, iv); err != nil {
			return err
		}
	}
	return nil
}

func TestKilledWriter(t *testing.T) {
	tests := []struct {
		name  string
		write func(t *testing.T, path string)
		// status is the run's after the next Open: still running while its
		// process lives, interrupted once it is gone.
		status string
	}{
		{"handle dropped", func(t *testing.T, path string) {
			if err := writeUnfinished(t.Context(), path); err != nil {
				t.Fatal(err)
			}
		}, StatusRunning},
		{"process killed", func(t *testing.T, path string) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperKilledWriter$", "-test.v")
			cmd.Env = append(os.Environ(), helperEnv+"="+path)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(out)
			for lines.Scan() && lines.Text() != "written" {
				if strings.HasPrefix(lines.Text(), "error:") {
					t.Fatal(lines.Text())
				}
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err == nil {
				t.Fatal("the writer exited cleanly, want it killed")
			}
			// The data is still only in the write-ahead log.
			if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
				t.Fatalf("no write-ahead log left by the killed writer (stat error %v)", err)
			}
		}, StatusInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.db")
			tt.write(t, path)

			s, err := Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			runs, err := s.Runs(t.Context(), Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].Status != tt.status || runs[0].Ended.IsZero() != (tt.status == StatusRunning) {
				t.Fatalf("runs %+v, want one %s", runs, tt.status)
			}
			// An interrupted run ended with its last stored interval.
			if tt.status == StatusInterrupted && !runs[0].Ended.Equal(t0.Add(time.Second)) {
				t.Errorf("interrupted run ended %v, want %v", runs[0].Ended, t0.Add(time.Second))
			}
			d, err := s.Run(t.Context(), runs[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			var txns []int64
			for _, iv := range d.Intervals {
				txns = append(txns, iv.Txns)
			}
			if !reflect.DeepEqual(txns, []int64{100, 200}) {
				t.Errorf("intervals have txns %v, want [100 200]", txns)
			}
		})
	}
}

// TestConcurrentOpen opens one new file from several stores at once, as
// parallel pgbakeoff processes would: the schema is made once and all of them
// can write.
func TestConcurrentOpen(t *testing.T) {
	const stores = 8
	path := filepath.Join(t.TempDir(), "results.db")
	errs := make(chan error, stores)
	for range stores {
		go func() {
			s, err := Open(t.Context(), path)
			if err != nil {
				errs <- err
				return
			}
			_, err = s.CreateRun(t.Context(), newRun("tpcb", t0))
			errs <- errors.Join(err, s.Close())
		}()
	}
	for range stores {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(t.Context(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != stores {
		t.Errorf("%d runs, want %d", len(runs), stores)
	}
}

// Every connection of the pool has the settings the store relies on, its page
// cache held small included.
func TestConnectionSettings(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var conns []*sql.Conn
	for range 3 { // held at once, so three connections
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mode string
		var fk, cache, timeout int
		if err := c.QueryRowContext(ctx, "select * from pragma_journal_mode, pragma_foreign_keys, pragma_cache_size, pragma_busy_timeout").Scan(&mode, &fk, &cache, &timeout); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || fk != 1 || cache != -512 || timeout != busyTimeoutMs {
			t.Errorf("connection %d: journal_mode %s, foreign_keys %d, cache_size %d, busy_timeout %d; want wal, 1, -512, %d", i, mode, fk, cache, timeout, busyTimeoutMs)
		}
		c.Close()
	}
}
