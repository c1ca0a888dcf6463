package study

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, yaml string) *Study {
	t.Helper()
	s, err := Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("Parse:\n%s\n%v", yaml, err)
	}
	return s
}

func keys(cells []Cell) []string {
	var k []string
	for _, c := range cells {
		k = append(k, c.Key)
	}
	return k
}

func TestPlan(t *testing.T) {
	s, err := Load("testdata/plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		order Order
		want  []string
	}{
		{OrderInterleaved, []string{
			// Client counts ascending; the targets' order reverses on every other repetition.
			"A/w1/c4/r1", "B/w1/c4/r1", "B/w1/c4/r2", "A/w1/c4/r2", "A/w1/c4/r3", "B/w1/c4/r3",
			"A/w1/c8/r1", "B/w1/c8/r1", "B/w1/c8/r2", "A/w1/c8/r2", "A/w1/c8/r3", "B/w1/c8/r3",
			"A/w2/c2/r1", "B/w2/c2/r1", "B/w2/c2/r2", "A/w2/c2/r2", "A/w2/c2/r3", "B/w2/c2/r3",
		}},
		{OrderSequential, []string{
			"A/w1/c4/r1", "A/w1/c4/r2", "A/w1/c4/r3", "A/w1/c8/r1", "A/w1/c8/r2", "A/w1/c8/r3",
			"A/w2/c2/r1", "A/w2/c2/r2", "A/w2/c2/r3",
			"B/w1/c4/r1", "B/w1/c4/r2", "B/w1/c4/r3", "B/w1/c8/r1", "B/w1/c8/r2", "B/w1/c8/r3",
			"B/w2/c2/r1", "B/w2/c2/r2", "B/w2/c2/r3",
		}},
	}
	for _, tt := range tests {
		t.Run("order="+string(tt.order), func(t *testing.T) {
			s.Matrix.Order = tt.order
			cells := s.Plan()
			if got := keys(cells); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keys:\n got %q\nwant %q", got, tt.want)
			}
			seen := map[string]bool{}
			for i, c := range cells {
				if c.Seq != i+1 {
					t.Errorf("cell %d has Seq %d", i, c.Seq)
				}
				if seen[c.Key] {
					t.Errorf("key %s twice", c.Key)
				}
				seen[c.Key] = true
				if want := fmt.Sprintf("%s/%s/c%d/r%d", c.Target.Name, c.Workload.Name, c.Clients, c.Repeat); c.Key != want {
					t.Errorf("cell %d: key %s, want %s from its fields", i, c.Key, want)
				}
				if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(c.Fingerprint) {
					t.Errorf("cell %d: fingerprint %q is not 16 hex digits", i, c.Fingerprint)
				}
			}
		})
	}
}

// fingerprintBase is a study whose first cell is pg/w/c4/r1.
const fingerprintBase = `description: base
targets:
  - name: pg
    local:
      version: "16"
      settings: {shared_buffers: 1GB, work_mem: 4MB}
      initdb: [--data-checksums]
    labels: {disk: nvme}
    price: {per_hour: 1}
  - name: rds
    dsn: "host=db user=bench"
    password: {env: PW}
    node_exporter: http://db:9100/metrics
workloads:
  - name: w
    kind: tpcc
    load: {warehouses: 4, scale_factor: 1}
    run: {mode: server, script: [a@9, b@1]}
matrix:
  clients: [4]
  warmup: 10s
  duration: 1m
  repeat: 2
  pause: 1s
`

func TestFingerprint(t *testing.T) {
	fingerprints := func(t *testing.T, yaml string) map[string]string {
		t.Helper()
		m := map[string]string{}
		for _, c := range mustParse(t, yaml).Plan() {
			m[c.Key] = c.Fingerprint
		}
		return m
	}
	base := fingerprints(t, fingerprintBase)
	if base["pg/w/c4/r1"] != base["pg/w/c4/r2"] {
		t.Errorf("repetitions differ: %s, %s", base["pg/w/c4/r1"], base["pg/w/c4/r2"])
	}
	if base["pg/w/c4/r1"] == base["rds/w/c4/r1"] {
		t.Errorf("targets share fingerprint %s", base["pg/w/c4/r1"])
	}
	tests := []struct {
		name     string
		old, new string
		same     bool
	}{
		{"workload keys reordered", "    kind: tpcc\n    load: {warehouses: 4, scale_factor: 1}\n", "    load: {warehouses: 4, scale_factor: 1}\n    kind: tpcc\n", true},
		{"load keys reordered", "{warehouses: 4, scale_factor: 1}", "{scale-factor: 1, warehouses: 4}", true},
		{"run keys reordered", "{mode: server, script: [a@9, b@1]}", "{script: [a@9, b@1], mode: server}", true},
		{"target keys reordered", "    local:\n      version: \"16\"\n      settings: {shared_buffers: 1GB, work_mem: 4MB}\n      initdb: [--data-checksums]\n",
			"    local:\n      initdb: [--data-checksums]\n      settings: {shared_buffers: 1GB, work_mem: 4MB}\n      version: \"16\"\n", true},
		{"labels", "{disk: nvme}", "{disk: ssd, zone: b}", true},
		{"price", "{per_hour: 1}", "{per_hour: 2, currency: EUR}", true},
		{"password", "{env: PW}", "{command: pass show db}", true},
		{"node_exporter", "http://db:9100/metrics", "https://db:9100/metrics", true},
		{"description", "description: base", "description: other", true},
		{"repeat", "repeat: 2", "repeat: 5", true},
		{"pause", "pause: 1s", "pause: 9s", true},
		{"order", "pause: 1s", "pause: 1s\n  order: sequential\n  aggregate: best", true},
		{"duration spelling", "duration: 1m", "duration: 60s", true},
		{"duration", "duration: 1m", "duration: 2m", false},
		{"warmup", "warmup: 10s", "warmup: 20s", false},
		{"setting value", "work_mem: 4MB", "work_mem: 8MB", false},
		{"setting order", "{shared_buffers: 1GB, work_mem: 4MB}", "{work_mem: 4MB, shared_buffers: 1GB}", false},
		{"version", "version: \"16\"", "version: \"16.4\"", false},
		{"initdb", "[--data-checksums]", "[--data-checksums, --locale=C]", false},
		{"run option", "mode: server", "mode: simple", false},
		{"run list order", "[a@9, b@1]", "[b@1, a@9]", false},
		{"load option", "warehouses: 4", "warehouses: 8", false},
		{"dataset", "    run:", "    dataset: reload\n    run:", false},
		{"vacuum", "    run:", "    vacuum: freeze\n    run:", false},
		{"checkpoint", "    run:", "    checkpoint: false\n    run:", false},
		{"clients", "clients: [4]", "clients: [4, 8]", true}, // c4 itself is unchanged
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(fingerprintBase, tt.old) {
				t.Fatalf("base has no %q", tt.old)
			}
			got := fingerprints(t, strings.Replace(fingerprintBase, tt.old, tt.new, 1))["pg/w/c4/r1"]
			if same := got == base["pg/w/c4/r1"]; same != tt.same {
				t.Errorf("fingerprint %s, base %s: same = %v, want %v", got, base["pg/w/c4/r1"], same, tt.same)
			}
		})
	}
}

func TestFingerprintClients(t *testing.T) {
	s := mustParse(t, strings.Replace(fingerprintBase, "clients: [4]", "clients: [4, 8]", 1))
	f := map[string]string{}
	for _, c := range s.Plan() {
		f[c.Key] = c.Fingerprint
	}
	if f["pg/w/c4/r1"] == f["pg/w/c8/r1"] {
		t.Errorf("client counts 4 and 8 share fingerprint %s", f["pg/w/c4/r1"])
	}
}

func TestDatasetKey(t *testing.T) {
	s := mustParse(t, `targets: [{name: a, dsn: "host=db"}]
workloads:
  - {name: base, kind: tpcc, load: {warehouses: 4, scale_factor: 1}, run: {mode: server}}
  - {name: reordered, kind: tpcc, load: {scale-factor: 1, warehouses: 4}}
  - {name: other-run, kind: tpcc, load: {warehouses: 4, scale_factor: 1}, run: {mode: simple}, dataset: reload}
  - {name: other-load, kind: tpcc, load: {warehouses: 8, scale_factor: 1}}
  - {name: other-kind, kind: tpcb, load: {warehouses: 4, scale_factor: 1}}
  - {name: no-load, kind: tpcc}
`)
	base := s.DatasetKey(s.Workloads[0])
	if !regexp.MustCompile(`^tpcc_[0-9a-f]{8}$`).MatchString(base) {
		t.Errorf("DatasetKey = %q, want tpcc_ and 8 hex digits", base)
	}
	tests := []struct {
		workload string
		same     bool
	}{
		{"reordered", true},
		{"other-run", true},
		{"other-load", false},
		{"other-kind", false},
		{"no-load", false},
	}
	for _, tt := range tests {
		t.Run(tt.workload, func(t *testing.T) {
			var w *Workload
			for _, x := range s.Workloads {
				if x.Name == tt.workload {
					w = x
				}
			}
			got := s.DatasetKey(w)
			if same := got == base; same != tt.same {
				t.Errorf("DatasetKey = %s, base %s: same = %v, want %v", got, base, same, tt.same)
			}
			if !strings.HasPrefix(got, w.Kind+"_") {
				t.Errorf("DatasetKey = %s, want prefix %s_", got, w.Kind)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	tests := []struct {
		name   string
		matrix string
		want   time.Duration
	}{
		// Two targets and two workloads: 4 cells per client count and repetition.
		{"defaults", "", 4 * 3 * time.Minute},
		{"warmup and pause", "matrix: {warmup: 30s, duration: 2m, repeat: 1, pause: 10s}\n", 4*150*time.Second + 3*10*time.Second},
		{"clients", "matrix: {clients: [1, 2], duration: 1m, repeat: 2}\n", 16 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, `targets: [{name: a, dsn: "host=a"}, {name: b, dsn: "host=b"}]
workloads: [{kind: tpcb}, {kind: tpcc}]
`+tt.matrix)
			if got := s.Estimate(); got != tt.want {
				t.Errorf("Estimate = %s, want %s", got, tt.want)
			}
			if runs := len(s.Plan()); runs*int(s.Matrix.Warmup+s.Matrix.Duration)+(runs-1)*int(s.Matrix.Pause) != int(tt.want) {
				t.Errorf("Estimate %s does not match the plan's %d runs", tt.want, runs)
			}
		})
	}
}

func TestTargetFingerprint(t *testing.T) {
	base := Target{Name: "a", Local: &Local{Version: "16", Settings: []Setting{{Name: "shared_buffers", Value: "1GB"}}}}
	labelled := base
	labelled.Labels = map[string]string{"tier": "gold"}
	tuned := base
	tuned.Local = &Local{Version: "16", Settings: []Setting{{Name: "shared_buffers", Value: "2GB"}}}
	if base.Fingerprint() != labelled.Fingerprint() {
		t.Error("labels changed the target's fingerprint")
	}
	if base.Fingerprint() == tuned.Fingerprint() || len(base.Fingerprint()) != 16 {
		t.Errorf("fingerprints %q and %q: want 16 hex digits that differ with a setting", base.Fingerprint(), tuned.Fingerprint())
	}
	// The fingerprint of a file written before standbys is what it was.
	if got := base.Fingerprint(); got != "8bac72e78399c04f" {
		t.Errorf("fingerprint %s, want 8bac72e78399c04f as before standbys", got)
	}
	alone, one, sync := base, base, base
	alone.Local = &Local{Version: "16", Settings: base.Local.Settings, Synchronous: "off"}
	one.Local = &Local{Version: "16", Settings: base.Local.Settings, Standbys: 1}
	sync.Local = &Local{Version: "16", Settings: base.Local.Settings, Standbys: 1, Synchronous: "on"}
	if alone.Fingerprint() != base.Fingerprint() || one.Fingerprint() == base.Fingerprint() || sync.Fingerprint() == one.Fingerprint() {
		t.Errorf("fingerprints: base %s, synchronous off %s (want equal), one standby %s, synchronous %s (want different)",
			base.Fingerprint(), alone.Fingerprint(), one.Fingerprint(), sync.Fingerprint())
	}
}

// Open-loop rates are an axis of the plan like client counts: a list, or a ramp
// of evenly spaced rates, each its own cell and fingerprint.
func TestPlanRates(t *testing.T) {
	s := mustParse(t, `targets: [{name: a, dsn: "host=db"}]
workloads:
  - {name: w, kind: tpcb}
  - {name: v, kind: tpcb, rates: [500]}
objective: {slo: "p99<10ms", errors: "<0.1%"}
matrix: {clients: [8], rates: {from: 1000, to: 4000, steps: 4}, repeat: 1}
`)
	want := []string{"a/w/c8/rate1000/r1", "a/w/c8/rate2000/r1", "a/w/c8/rate3000/r1", "a/w/c8/rate4000/r1", "a/v/c8/rate500/r1"}
	cells := s.Plan()
	if got := keys(cells); !reflect.DeepEqual(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	if cells[1].Rate != 2000 || cells[0].Fingerprint == cells[1].Fingerprint {
		t.Errorf("cell %+v; fingerprints %s and %s", cells[1], cells[0].Fingerprint, cells[1].Fingerprint)
	}
	if s.Objective == nil || s.Objective.SLO != "p99<10ms" || s.Objective.Errors != "<0.1%" {
		t.Errorf("objective %+v", s.Objective)
	}
	// Without rates, keys and fingerprints are what they were.
	closed := mustParse(t, strings.Replace(fingerprintBase, "clients: [4]", "clients: [4]", 1))
	if c := closed.Plan()[0]; c.Rate != 0 || strings.Contains(c.Key, "rate") || c.Fingerprint != closed.fingerprint(c.Target, c.Workload, c.Clients, 0, nil) {
		t.Errorf("closed-loop cell %+v", c)
	}
}

// A search for the highest rate is one cell per target, client count and
// repetition, whose runs have keys of their own; its options and the objective
// are part of its fingerprint, and a workload's rates override the matrix's search.
func TestPlanFindMax(t *testing.T) {
	const file = `targets: [{name: a, dsn: "host=db"}, {name: b, dsn: "host=db2"}]
workloads:
  - {name: w, kind: tpcb}
  - {name: v, kind: tpcb, rates: [500]}
objective: {slo: "p99<10ms"}
matrix: {clients: [8], find_max: {confirm: 1, budget: 10m}, repeat: 1, duration: 20s, warmup: 5s}
`
	s := mustParse(t, file)
	want := []string{"a/w/c8/find-max/r1", "b/w/c8/find-max/r1", "a/v/c8/rate500/r1", "b/v/c8/rate500/r1"}
	cells := s.Plan()
	if got := keys(cells); !reflect.DeepEqual(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
	f := cells[0].Search
	if f == nil || f.Confirm != 1 || f.Budget != 10*time.Minute || f.Resolution != DefaultFindMaxResolution || f.Ceiling != 0 || cells[2].Search != nil {
		t.Errorf("searches %+v and %+v", f, cells[2].Search)
	}
	// Ceiling, bisection from 1 down to 5% (5 halvings), one confirmation: 8 runs of 25 s
	// per search; the two rate runs are one each.
	if got, want := s.Estimate(), (2*8+2)*25*time.Second; got != want {
		t.Errorf("estimate %s, want %s", got, want)
	}
	other := mustParse(t, strings.Replace(file, "p99<10ms", "p99<20ms", 1))
	if other.Plan()[0].Fingerprint == cells[0].Fingerprint || other.Plan()[2].Fingerprint != cells[2].Fingerprint {
		t.Errorf("the objective must change the search's fingerprint and only its")
	}
	for key, cell := range map[string]string{
		"a/w/c8/find-max/r1/step3": "a/w/c8/find-max/r1", "a/w/c8/find-max/r12/step10": "a/w/c8/find-max/r12",
		"a/w/c8/find-max/r1/step0": "", "a/w/c8/rate500/r1/step1": "", "a/w/c8/find-max/r1": "", "a/w/c8/find-max/r1/stepx": "",
	} {
		if got, ok := SearchKey(key); got != cell || ok != (cell != "") {
			t.Errorf("SearchKey(%q) = %q, %v; want %q", key, got, ok, cell)
		}
	}
	if StepKey("a/w/c8/find-max/r1", 3) != "a/w/c8/find-max/r1/step3" {
		t.Errorf("StepKey %q", StepKey("a/w/c8/find-max/r1", 3))
	}
	// find_max: true takes find-max's defaults; a budget that ends the search early
	// bounds the estimate.
	d := mustParse(t, strings.Replace(file, "{confirm: 1, budget: 10m}", "{budget: 1m}", 1))
	if f := d.Plan()[0].Search; f.Confirm != DefaultFindMaxConfirm || f.Budget != time.Minute {
		t.Errorf("defaults %+v", f)
	}
	if got, want := d.Estimate(), (2*3+2)*25*time.Second; got != want {
		t.Errorf("estimate with budget %s, want %s", got, want)
	}
	if f := mustParse(t, strings.Replace(file, "{confirm: 1, budget: 10m}", "true", 1)).Matrix.FindMax; f == nil || f.Budget != DefaultFindMaxBudget {
		t.Errorf("find_max: true gave %+v", f)
	}
	// A budget of exactly two runs makes two: the third would begin as it ends.
	if f := mustParse(t, strings.Replace(file, "budget: 10m", "budget: 50s", 1)).Matrix.FindMax; mustParse(t, file).SearchRuns(f) != 2 {
		t.Errorf("a budget of two runs: %d runs", mustParse(t, file).SearchRuns(f))
	}
	// find_max: false keeps a workload closed-loop under a matrix that searches.
	off := mustParse(t, strings.Replace(file, "rates: [500]", "find_max: false", 1))
	if got := keys(off.Plan()); !reflect.DeepEqual(got, []string{"a/w/c8/find-max/r1", "b/w/c8/find-max/r1", "a/v/c8/r1", "b/v/c8/r1"}) {
		t.Errorf("find_max: false: keys %q", got)
	}
}
