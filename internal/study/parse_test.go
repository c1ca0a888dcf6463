package study

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
)

func TestLoadFull(t *testing.T) {
	got, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Study{
		File:        "testdata/full.yaml",
		Pos:         Pos{1, 1},
		Name:        "pg11-vs-pg16",
		Description: "Does a newer PostgreSQL run TPC-C faster on the same box?",
		Targets: []*Target{
			{
				Name: "pg11",
				Pos:  Pos{4, 5},
				Local: &Local{
					Pos:     Pos{6, 7},
					Version: "11",
					Settings: []Setting{
						{Name: "shared_buffers", Value: "1GB", Pos: Pos{8, 9}},
						{Name: "max_wal_size", Value: "4GB", Pos: Pos{9, 9}},
						{Name: "synchronous_commit", Value: "off", Pos: Pos{10, 9}},
					},
					Initdb: []string{"--data-checksums"},
				},
				Labels: map[string]string{"storage": "nvme", "cores": "8"},
				Price:  &cost.Price{ComputePerHour: 0.68, Currency: "USD"},
			},
			{
				Name:         "rds",
				Pos:          Pos{14, 5},
				DSN:          "host=db.example user=bench dbname=bench sslmode=require",
				Password:     &Password{Pos: Pos{16, 15}, Env: "RDS_PASSWORD"},
				NodeExporter: "http://10.0.0.5:9100/metrics",
				Price:        &cost.Price{ComputePerHour: 1.5, Currency: "EUR"},
			},
		},
		Workloads: []*Workload{
			{
				Name: "tpcc-small",
				Pos:  Pos{20, 5},
				Kind: "tpcc",
				Run: []Option{
					{Name: "mode", Key: "mode", Values: []string{"server"}, Pos: Pos{23, 11}},
					{Name: "dist", Key: "dist", Values: []string{"pareto"}, Pos: Pos{23, 25}},
				},
				Dataset:    DatasetKeep,
				Vacuum:     VacuumAnalyze,
				Checkpoint: false,
				Database:   "bench",
				Clients:    []int{8, 16},
				ClientsPos: Pos{28, 14},
			},
			{
				Name: "tpcb",
				Pos:  Pos{29, 5},
				Kind: "tpcb",
				Load: []Option{
					{Name: "scale", Key: "scale", Values: []string{"10"}, Pos: Pos{31, 7}},
					{Name: "table-size", Key: "table_size", Values: []string{"1000"}, Pos: Pos{32, 7}},
				},
				Run: []Option{
					{Name: "script", Key: "script", Values: []string{"tpcb-like@9", "select-only@1"}, Pos: Pos{34, 7}},
					{Name: "protocol", Key: "protocol", Values: []string{"prepared"}, Pos: Pos{35, 7}},
				},
				Dataset:    DatasetClone,
				Vacuum:     VacuumNone,
				Checkpoint: true,
			},
		},
		Matrix: Matrix{
			Pos:        Pos{37, 3},
			Clients:    []int{4, 8},
			ClientsPos: Pos{37, 12},
			Warmup:     30 * time.Second,
			Duration:   2 * time.Minute,
			Repeat:     2,
			Aggregate:  AggregateMean,
			Order:      OrderSequential,
			Pause:      5 * time.Second,
		},
	}
	// The options' YAML values are for Decode; compared are what the file said.
	for _, w := range got.Workloads {
		for _, opts := range [][]Option{w.Load, w.Run} {
			for i := range opts {
				opts[i].value = nil
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(full.yaml) differs")
		for i := range max(len(got.Targets), len(want.Targets)) {
			if i < len(got.Targets) && i < len(want.Targets) {
				t.Logf("target %d:\n got %+v %+v\nwant %+v %+v", i, *got.Targets[i], got.Targets[i].Local, *want.Targets[i], want.Targets[i].Local)
			}
		}
		for i := range max(len(got.Workloads), len(want.Workloads)) {
			if i < len(got.Workloads) && i < len(want.Workloads) {
				t.Logf("workload %d:\n got %+v\nwant %+v", i, *got.Workloads[i], *want.Workloads[i])
			}
		}
		t.Logf("matrix:\n got %+v\nwant %+v", got.Matrix, want.Matrix)
	}
}

func TestLoadDefaults(t *testing.T) {
	s, err := Load("testdata/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"name from file", s.Name, "minimal"},
		{"clients", s.Matrix.Clients, []int{1}},
		{"clients pos", s.Matrix.ClientsPos, Pos{}},
		{"warmup", s.Matrix.Warmup, time.Duration(0)},
		{"duration", s.Matrix.Duration, time.Minute},
		{"repeat", s.Matrix.Repeat, 3},
		{"aggregate", s.Matrix.Aggregate, AggregateMedian},
		{"order", s.Matrix.Order, OrderInterleaved},
		{"pause", s.Matrix.Pause, time.Duration(0)},
		{"workload name", s.Workloads[0].Name, "tpcb"},
		{"dataset", s.Workloads[0].Dataset, DatasetClone},
		{"vacuum", s.Workloads[0].Vacuum, VacuumNone},
		{"checkpoint", s.Workloads[0].Checkpoint, true},
		{"workload clients", s.Clients(s.Workloads[0]), []int{1}},
		{"no price", s.Targets[0].Price, (*cost.Price)(nil)},
		{"no prices file", s.Prices, ""},
		{"no password", s.Targets[0].Password, (*Password)(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

// TestDurationSeconds: a duration without a unit is a number of seconds, as on the
// command line (pgbakeoff run -T 60).
func TestDurationSeconds(t *testing.T) {
	s, err := Parse("x.yaml", []byte(head+"matrix: {warmup: 30, duration: 1.5, pause: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Matrix; m.Warmup != 30*time.Second || m.Duration != 1500*time.Millisecond || m.Pause != 0 {
		t.Errorf("warmup %s, duration %s, pause %s; want 30s, 1.5s, 0s", m.Warmup, m.Duration, m.Pause)
	}
}

func TestLoadAnchors(t *testing.T) {
	s, err := Load("testdata/anchors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Targets[1].Local.Settings {
		got = append(got, st.Name+"="+st.Value)
	}
	// Merged keys come where the merge is, and an explicit key where it is written.
	want := []string{"max_wal_size=4GB", "shared_buffers=8GB", "work_mem=64MB"}
	if !reflect.DeepEqual(got, want) || s.Targets[1].Local.Version != "16" {
		t.Errorf("large: version %q, settings %v; want 16, %v", s.Targets[1].Local.Version, got, want)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load("testdata/no-such-file.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "read study: ") {
		t.Errorf("Load(missing) = %v, want a read study error", err)
	}
}

// head is a valid start for files whose error comes later, at line 3 on.
const head = "targets: [{name: a, dsn: \"host=db\"}]\nworkloads: [{kind: tpcb}]\n"

// workloads starts a file whose workloads come next, at line 3.
const workloads = "targets: [{name: a, dsn: \"host=db\"}]\nworkloads:\n"

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		// Unknown keys and values, with suggestions.
		{"unknown key in matrix", head + "matrix:\n  warmpu: 30s\n",
			`x.yaml:4:3: unknown key "warmpu" in matrix; did you mean "warmup"?`},
		{"unknown key in target", "targets:\n  - name: a\n    dsn: \"host=db\"\n    node-exporter: http://h:9100/metrics\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:4:5: unknown key "node-exporter" in target "a"; did you mean "node_exporter"?`},
		{"unknown key at top without suggestion", head + "comment: hello\n",
			`x.yaml:3:1: unknown key "comment" in the study; want name, description, targets, workloads, matrix, prices or objective`},
		{"unknown key in local", "targets:\n  - name: a\n    local: {version: \"16\", setings: {}}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:3:28: unknown key "setings" in local of target "a"; did you mean "settings"?`},
		{"unknown key in workload", workloads + "  - kind: tpcc\n    lod: {warehouses: 1}\n",
			`x.yaml:4:5: unknown key "lod" in workload "tpcc"; did you mean "load"?`},
		{"kind", workloads + "  - kind: tpc-c\n", `x.yaml:3:11: unknown kind "tpc-c"; did you mean "tpcc"?`},
		{"kind without suggestion", workloads + "  - kind: ycsb\n", `x.yaml:3:11: unknown kind "ycsb"; want tpcb, tpcc, sysbench, sysbench-tpcc or pgbench`},
		{"dataset", workloads + "  - {kind: tpcc, dataset: clones}\n", `x.yaml:3:27: unknown dataset "clones"; did you mean "clone"?`},
		{"dataset of a workload misspelt", workloads + "  - {name: read-write, kind: tpcb}\n  - {kind: pgbench, dataset: read-writ}\n",
			`x.yaml:4:30: unknown dataset "read-writ"; did you mean "read-write"?`},
		{"dataset of no workload", workloads + "  - {name: read-write, kind: tpcb}\n  - {kind: pgbench, dataset: orders}\n",
			`x.yaml:4:30: unknown dataset "orders"; want keep, clone or reload, or the name of another workload whose data this one runs on`},
		{"dataset of itself", workloads + "  - {name: mine, kind: pgbench, dataset: mine}\n",
			`x.yaml:3:42: dataset: mine names this workload itself; name another workload, whose data this one runs on`},
		{"dataset of a workload without its own", workloads + "  - {name: a, kind: tpcb}\n  - {name: b, kind: pgbench, dataset: a}\n  - {name: c, kind: pgbench, dataset: b}\n",
			`x.yaml:5:39: dataset: b names a workload that runs on another's data itself; name the workload that loads it`},
		{"dataset of a workload and database", workloads + "  - {name: a, kind: tpcb}\n  - {name: b, kind: pgbench, dataset: a, database: x}\n",
			`x.yaml:4:42: database: has no effect with dataset: a, which runs on that workload's data; remove one`},
		{"vacuum", workloads + "  - {kind: tpcc, vacuum: full}\n", `x.yaml:3:26: unknown vacuum "full"; want none, analyze, vacuum or freeze`},
		{"aggregate", head + "matrix: {aggregate: medain}\n", `x.yaml:3:21: unknown aggregate "medain"; did you mean "median"?`},
		{"order", head + "matrix: {order: sequental}\n", `x.yaml:3:17: unknown order "sequental"; did you mean "sequential"?`},
		{"ramp without steps", head + "matrix: {rates: {from: 100, to: 800}}\n", `x.yaml:3:17: a ramp of rates needs from, to and steps, as {from: 1000, to: 8000, steps: 8}`},
		{"ramp down", head + "matrix: {rates: {from: 800, to: 100, steps: 3}}\n", `x.yaml:3:17: a ramp of rates goes up: to (100) must be above from (800)`},
		{"rate twice", head + "matrix: {rates: [100, 100]}\n", `x.yaml:3:23: rate 100 is given twice`},
		{"objective", head + "objective: {slo: \"p99 under 10ms\"}\n", `x.yaml:3:12: objective: slo "p99 under 10ms": write a percentile and a limit, as p99<10ms or p99.9<50ms`},
		{"find_max without objective", head + "matrix: {find_max: true}\n", `x.yaml:3:20: find_max searches for the highest rate within the study's objective: add objective: {slo: "p99<10ms"}`},
		{"find_max and rates", head + "objective: {slo: p99<5ms}\nmatrix: {rates: [5], find_max: {}}\n", `x.yaml:4:32: the matrix has both rates and find_max: give fixed rates or a search for the highest, not both`},
		{"find_max resolution", head + "objective: {slo: p99<5ms}\nmatrix: {find_max: {resolution: 0}}\n", `x.yaml:4:33: resolution "0": give a share from 0.1% to below 100%, as 5%`},
		{"find_max key", head + "objective: {slo: p99<5ms}\nmatrix: {find_max: {confirms: 3}}\n", `x.yaml:4:21: unknown key "confirms" in find_max; did you mean "confirm"?`},
		{"find_max with a bad objective", head + "objective: {slo: fast}\nmatrix: {find_max: true}\n", `x.yaml:3:12: objective: slo "fast": write a percentile and a limit, as p99<10ms or p99.9<50ms`},
		{"find_max confirm", head + "objective: {slo: p99<5ms}\nmatrix: {find_max: {confirm: 11}}\n", `x.yaml:4:30: confirm 11 is out of range; want 0 to 10`},

		// What the study sets itself, and what it must not repeat.
		{"reserved label", "targets:\n  - {name: a, dsn: \"host=db\", labels: {target: x}}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:2:40: label "target" is set by the study on every run; name it otherwise`},
		{"node_exporter credentials", "targets:\n  - {name: a, dsn: \"host=db\", node_exporter: \"http://u:s3cret@h:9100/metrics\"}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:2:46: node_exporter must not hold credentials; put node_exporter behind a network it can be reached on without them`},
		{"load with database", workloads + "  - {kind: tpcb, dataset: keep, database: bench, load: {scale: 5}}\n",
			`x.yaml:3:57: load: has no effect with database: the study runs on the data already in "bench" and loads nothing; remove load:`},

		// Types and ranges.
		{"clients word", head + "matrix:\n  clients: four\n",
			`x.yaml:4:12: clients must be a positive integer or a list of them, not "four"`},
		{"clients zero", head + "matrix: {clients: [4, 0]}\n", `x.yaml:3:23: clients 0 is out of range; want 1 to 100000`},
		{"clients twice", head + "matrix: {clients: [4, 4]}\n", `x.yaml:3:23: client count 4 is given twice`},
		{"clients empty", head + "matrix: {clients: []}\n", `x.yaml:3:19: clients is an empty list; give at least one client count`},
		{"clients in workload", workloads + "  - {kind: tpcc, clients: [8, x]}\n",
			`x.yaml:3:31: clients must be a positive integer or a list of them, not "x"`},
		{"repeat zero", head + "matrix: {repeat: 0}\n", `x.yaml:3:18: repeat 0 is out of range; want 1 to 1000`},
		{"repeat float", head + "matrix: {repeat: 2.5}\n", `x.yaml:3:18: repeat must be an integer, not 2.5`},
		{"duration words", head + "matrix:\n  duration: 2 minutes\n",
			`x.yaml:4:13: invalid duration "2 minutes"; use Go durations like 2m or 90s`},
		{"duration too long", head + "matrix: {duration: 2100000h}\n",
			`x.yaml:3:20: duration 2100000h is too long: at most 87600h (10 years)`},
		{"duration past time.Duration", head + "matrix: {duration: 3000000h}\n",
			`x.yaml:3:20: duration 3000000h is too long: at most 87600h (10 years)`},
		{"warmup too long in seconds", head + "matrix: {warmup: 1e12}\n",
			`x.yaml:3:18: warmup 1e12 is too long: at most 87600h (10 years)`},
		{"duration zero", head + "matrix: {duration: 0s}\n", `x.yaml:3:20: duration must be more than 0, not 0s`},
		{"warmup negative", head + "matrix: {warmup: -5s}\n", `x.yaml:3:18: warmup -5s is negative`},
		{"pause list", head + "matrix: {pause: [1s]}\n",
			`x.yaml:3:17: pause must be a duration, not a list; use Go durations like 2m or 90s`},
		{"checkpoint", workloads + "  - {kind: tpcc, checkpoint: yes}\n", `x.yaml:3:30: checkpoint must be true or false, not "yes"`},
		{"matrix list", head + "matrix: [1]\n", `x.yaml:3:9: matrix must be a mapping like {clients: [4, 8], duration: 2m}, not a list`},
		{"targets mapping", "targets: {a: {dsn: x}}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:10: targets must be a list like [{name: pg16, local: {version: "16"}}], not a mapping`},
		{"description", head + "description: [a]\n", `x.yaml:3:14: description must be a string, not a list`},
		{"per_hour", "targets: [{name: a, dsn: \"host=db\", price: {per_hour: 0}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:55: per_hour 0 is out of range; want more than 0`},
		{"per_hour word", "targets: [{name: a, dsn: \"host=db\", price: {per_hour: cheap}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:55: per_hour must be a number, not "cheap"`},
		{"currency", "targets: [{name: a, dsn: \"host=db\", price: {per_hour: 1, currency: usd}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:68: invalid currency "usd"; want a code of three upper-case letters like USD or EUR`},
		{"price without per_hour", "targets: [{name: a, dsn: \"host=db\", price: {currency: USD}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:44: price of target "a": the price has no amounts; give monthly, or components such as compute_per_hour`},
		{"version", "targets: [{name: a, local: {version: sixteen}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:38: invalid PostgreSQL version "sixteen"; want a major version like "16" or an exact one like "16.10"`},
		{"version too old", "targets: [{name: a, local: {version: \"9.6\"}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:38: PostgreSQL 9.6 is not supported; want version 10 or later`},
		{"synchronous without standbys", "targets: [{name: a, local: {version: \"16\", synchronous: on}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:57: local of target "a": synchronous on needs standbys: a primary alone has no standby to wait for`},
		{"standbys out of range", "targets: [{name: a, local: {version: \"16\", standbys: -1, synchronous: on}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:54: standbys -1 is out of range; want 0 to 8`},
		{"standbys on an old version", "targets: [{name: a, local: {version: \"11\", standbys: 1}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:54: local of target "a": standbys need PostgreSQL 12 or later, not 11`},
		{"synchronous unknown", "targets: [{name: a, local: {version: \"16\", standbys: 1, synchronous: always}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:70: local of target "a": synchronous "always": want off, on or remote_apply`},
		{"local without version", "targets: [{name: a, local: {initdb: [-k]}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:28: local of target "a" has no version; add version: "16" or another major version`},
		{"setting list", "targets: [{name: a, local: {version: \"16\", settings: {shared_preload_libraries: [a, b]}}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:81: setting "shared_preload_libraries" must be a string or a number, not a list`},
		{"setting twice", "targets: [{name: a, local: {version: \"16\", settings: {work_mem: 4MB, Work_Mem: 8MB}}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:70: setting "Work_Mem" is given twice (first at line 1)`},
		{"initdb string", "targets: [{name: a, local: {version: \"16\", initdb: --data-checksums}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:52: initdb must be a list like [--data-checksums], not "--data-checksums"`},
		{"node_exporter", "targets: [{name: a, dsn: \"host=db\", node_exporter: \"10.0.0.5:9100\"}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:52: node_exporter must be an http or https URL like http://10.0.0.5:9100/metrics, not "10.0.0.5:9100"`},
		{"label mapping", "targets: [{name: a, dsn: \"host=db\", labels: {disk: {type: nvme}}}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:52: label "disk" must be a string or a number, not a mapping`},

		// Names.
		{"duplicate target", "targets:\n  - {name: a, dsn: \"host=db1\"}\n  - {name: a, dsn: \"host=db2\"}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:3:5: duplicate target name "a" (first at line 2)`},
		{"duplicate workload", workloads + "  - kind: tpcb\n  - kind: tpcb\n",
			`x.yaml:4:5: duplicate workload name "tpcb" (first at line 3); give each workload of the same kind a name`},
		{"invalid target name", "targets: [{name: a/b, dsn: \"host=db\"}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:18: invalid target name "a/b"; use up to 41 letters, digits, '_', '.' and '-', starting with a letter or digit`},
		{"target without name", "targets: [{dsn: \"host=db\"}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:11: target 1 has no name; add name:`},
		{"workload without kind", workloads + "  - name: w\n", `x.yaml:3:5: workload "w" has no kind; add kind: tpcb, tpcc, sysbench, sysbench-tpcc or pgbench`},
		{"invalid study name", "name: my study\n" + head, `x.yaml:1:7: invalid study name "my study"; use letters, digits, '_', '.' and '-'`},
		{"key twice", head + "matrix: {repeat: 1}\nmatrix: {repeat: 2}\n", `x.yaml:4:1: "matrix" is given twice (first at line 3)`},

		// Targets and workloads that do not make sense.
		{"dsn and local", "targets:\n  - name: a\n    dsn: \"host=db\"\n    local: {version: \"16\"}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:4:5: target "a" has both dsn and local; give one: dsn for a running server, local for one pgbakeoff starts`},
		{"neither dsn nor local", "targets:\n  - name: a\n    labels: {x: y}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:2:5: target "a" needs dsn (a running server) or local (a server pgbakeoff starts)`},
		{"password with local", "targets:\n  - name: a\n    local: {version: \"16\"}\n    password: {env: PW}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:4:5: password is only for dsn targets; a local server needs none`},
		{"password env and command", "targets:\n  - name: a\n    dsn: \"host=db\"\n    password: {env: PW, command: pass show db}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:4:15: password needs exactly one of env: NAME or command: "..."`},
		{"password env name", "targets:\n  - name: a\n    dsn: \"host=db\"\n    password: {env: $PW}\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:4:21: invalid environment variable name "$PW"`},
		{"database without keep", workloads + "  - name: w\n    kind: tpcc\n    database: bench\n",
			`x.yaml:5:5: database needs dataset: keep; with dataset: clone every run gets its own copy of the data`},
		{"dsn not key=value", "targets: [{name: a, dsn: localhost}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:26: dsn is not a URI and not key=value pairs: "localhost" has no =`},
		{"dsn empty", "targets: [{name: a, dsn: \"\"}]\nworkloads: [{kind: tpcb}]\n",
			`x.yaml:1:26: dsn is empty; give a URI (postgres://user@host/db) or key=value pairs (host=... dbname=...)`},

		// Options.
		{"option mapping", workloads + "  - {kind: tpcc, load: {warehouses: {min: 1}}}\n",
			`x.yaml:3:37: load option "warehouses" must be a value or a list of values, not a mapping`},
		{"option twice", workloads + "  - {kind: tpcc, load: {table_size: 1, table-size: 2}}\n",
			`x.yaml:3:40: load option "table-size" is given twice (as "table_size" at line 3)`},
		{"option dashes", workloads + "  - {kind: tpcc, run: {--mode: server}}\n",
			`x.yaml:3:24: write the run option "--mode" without dashes: mode`},
		{"option empty", workloads + "  - {kind: tpcc, run: {mode: }}\n",
			`x.yaml:3:24: run option "mode" must be a value or a list of values, not empty`},
		{"option nested list", workloads + "  - {kind: tpcb, run: {script: [[a, b]]}}\n",
			`x.yaml:3:33: each value of run option "script" must be a string or a number, not a list`},

		// The file as a whole.
		{"empty", "", `x.yaml:1:1: the study file is empty; it needs targets and workloads`},
		{"only comments", "# nothing yet\n", `x.yaml:1:1: the study file is empty; it needs targets and workloads`},
		{"list", "- a\n", `x.yaml:1:1: a study file is a mapping with targets, workloads and matrix, not a list`},
		{"no targets", "workloads: [{kind: tpcb}]\n", `x.yaml:1:1: the study has no targets; add targets: with at least one dsn or local target`},
		{"empty targets", "targets: []\nworkloads: [{kind: tpcb}]\n", `x.yaml:1:10: targets is empty; give at least one`},
		{"no workloads", "targets: [{name: a, dsn: \"host=db\"}]\n",
			`x.yaml:1:1: the study has no workloads; add workloads: with at least one kind: tpcb, tpcc, sysbench, sysbench-tpcc or pgbench`},
		{"two documents", head + "---\n" + head, `x.yaml:3:1: a study file holds one YAML document; remove the second one or the --- before it`},
		{"malformed", head + "matrix: {repeat: 1\n", `x.yaml:3: invalid YAML: did not find expected ',' or '}'`},
		{"tab", head + "matrix:\n\trepeat: 1\n", `x.yaml:4: invalid YAML: found character that cannot start any token`},
		{"unknown anchor", head + "matrix: *m\n", `x.yaml:3:9: invalid YAML: alias *m names no anchor; define it with &m first`},
		{"merge of a scalar", head + "matrix: {<<: 1}\n", `x.yaml:3:14: a merge key (<<) takes a mapping or a list of mappings, not 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded, want error %s", tt.want)
			}
			if s != nil {
				t.Errorf("Parse returned a study with its error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestParseNameFromFile(t *testing.T) {
	tests := []struct {
		file    string
		want    string
		wantErr string
	}{
		{"studies/pg11-vs-pg16.yaml", "pg11-vs-pg16", ""},
		{"nightly.v2.yml", "nightly.v2", ""},
		{"study", "study", ""},
		{"my study.yaml", "", `my study.yaml:1:1: the study name "my study" from the file name is invalid; add name: with letters, digits, '_', '.' and '-'`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Parse(tt.file, []byte(head))
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("Parse error = %v, want %s", err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("Parse: %v", err)
			case s.Name != tt.want:
				t.Errorf("Name = %q, want %q", s.Name, tt.want)
			}
		})
	}
}

func TestParseErrorsTogether(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"testdata/three-errors.yaml", []string{
			`testdata/three-errors.yaml:4:5: target "pg16" needs dsn (a running server) or local (a server pgbakeoff starts)`,
			`testdata/three-errors.yaml:5:5: unknown key "dns" in target "pg16"; did you mean "dsn"?`,
			`testdata/three-errors.yaml:7:11: unknown kind "tpcx"; want tpcb, tpcc, sysbench, sysbench-tpcc or pgbench`,
		}},
		{"testdata/malformed.yaml", []string{
			`testdata/malformed.yaml:3: invalid YAML: did not find expected ',' or '}'`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load(tt.file)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Load = %v, want Errors", err)
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
			if len(errs) != len(tt.want) {
				t.Errorf("%d errors, want %d", len(errs), len(tt.want))
			}
		})
	}
}

func TestParseDSNPassword(t *testing.T) {
	_, err := Load("testdata/dsn-password.yaml")
	if err == nil {
		t.Fatal("Load succeeded, want an error for each dsn")
	}
	msg := `dsn holds a password (or sslpassword); remove it and use password: {env: NAME}, password: {command: "..."} or ~/.pgpass`
	want := []string{
		"testdata/dsn-password.yaml:3:10: " + msg,
		"testdata/dsn-password.yaml:5:10: " + msg,
		"testdata/dsn-password.yaml:7:10: " + msg,
		"testdata/dsn-password.yaml:9:10: " + msg,
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	for _, secret := range []string{"s3cret", "slash"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error holds the password %q:\n%s", secret, err)
		}
	}
}

func TestParseDSN(t *testing.T) {
	tests := []struct {
		dsn     string
		wantErr string
	}{
		{"host=db user=bench dbname=bench", ""},
		{"host = db  dbname='my db'", ""},
		{"host=db password=", ""},
		{"postgres://bench@db:5432/bench?sslmode=require", ""},
		{"postgres://bench:@db/bench", ""},
		{"postgresql://db1:5432,db2:5433/bench", ""},
		{"postgres://db:5432/bench@2", ""},
		{"host=db passfile=/etc/pgpass", ""},
		{"host=db password=x", dsnPasswordMsg},
		{"host=db password = 'a b'", dsnPasswordMsg},
		{"postgres://:x@db/bench", dsnPasswordMsg},
		{"postgres://db/bench?password=x", dsnPasswordMsg},
		{"postgres://db/bench?sslmode=require&PASSWORD=x", dsnPasswordMsg},
		{"host=db PASSWORD=x", dsnPasswordMsg},
		{"host=db sslcert=c.crt sslkey=c.key sslpassword=x", dsnPasswordMsg},
		{"postgres://db/bench?sslpassword=x", dsnPasswordMsg},
		{"host='db", `dsn has an unterminated quoted value for "host"`},
		{"postgres://db:port/bench", `dsn is not a valid URI: invalid port ":port" after host`},
	}
	for _, tt := range tests {
		t.Run(tt.dsn, func(t *testing.T) {
			if got := checkDSN(tt.dsn); got != tt.wantErr {
				t.Errorf("checkDSN = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestErrorsFromCaller(t *testing.T) {
	s, err := Parse("study.yaml", []byte(head))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		errs Errors
		want string
	}{
		{"none", nil, ""},
		{"sorted", Errors{
			s.Errorf(Pos{3, 7}, "third"),
			s.Errorf(Pos{1, 2}, "first"),
			s.Errorf(Pos{3, 1}, "second"),
		}, "study.yaml:1:2: first\nstudy.yaml:3:1: second\nstudy.yaml:3:7: third"},
		{"without column", Errors{s.Errorf(Pos{Line: 2}, "line only")}, "study.yaml:2: line only"},
		{"without position", Errors{s.Errorf(Pos{}, "whole file")}, "study.yaml: whole file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.errs.Err()
			if tt.want == "" {
				if err != nil {
					t.Errorf("Err() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("Err() = %v, want %s", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "study.yaml" {
				t.Errorf("errors.As(*Error) = %v", e)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct {
		word string
		want string
	}{
		{"warmpu", "warmup"},
		{"Warmup", "warmup"},
		{"dns", "dsn"},
		{"worklaods", "workloads"},
		{"target", "targets"},
		{"x", ""},
		{"tpcx", ""}, // as close to tpcb as to tpcc
		{"comment", ""},
	}
	known := append(append(append([]string{}, studyKeys...), matrixKeys...), targetKeys...)
	known = append(known, kinds...)
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			if got := Suggest(tt.word, known); got != tt.want {
				t.Errorf("Suggest(%q) = %q, want %q", tt.word, got, tt.want)
			}
		})
	}
}

// TestParseAll: a file with errors still gives what could be read, so a caller can
// check the targets and report everything together.
func TestParseAll(t *testing.T) {
	s, errs := ParseAll("x.yaml", []byte("targets:\n  - {name: a, dsn: \"host=db\"}\n  - {name: b}\nworkloads: [{kind: tpcb, lod: 1}]\nmatrix: {warmpu: 1s}\n"))
	if s == nil || len(errs) != 3 {
		t.Fatalf("ParseAll: study %v, %d errors (%v); want a study and 3 errors", s, len(errs), errs)
	}
	if len(s.Targets) < 1 || s.Targets[0].Name != "a" || s.Targets[0].DSN != "host=db" {
		t.Errorf("the good target was not kept: %+v", s.Targets)
	}
	if s, errs := ParseAll("x.yaml", []byte("[1, 2")); s != nil || len(errs) != 1 {
		t.Errorf("malformed YAML: study %v, errors %v; want none and one error", s, errs)
	}
}

// TestParseStandbys: a local target's standbys and synchronous mode are read;
// without them it is a server alone.
func TestParseStandbys(t *testing.T) {
	s := mustParse(t, `targets:
  - {name: ha, local: {version: "16", standbys: 2, synchronous: remote_apply}}
  - {name: alone, local: {version: "16"}}
workloads: [{kind: tpcb}]
`)
	if l := s.Targets[0].Local; l.Standbys != 2 || l.Synchronous != "remote_apply" {
		t.Errorf("ha: standbys %d, synchronous %q; want 2 and remote_apply", l.Standbys, l.Synchronous)
	}
	if l := s.Targets[1].Local; l.Standbys != 0 || l.Synchronous != "" {
		t.Errorf("alone: standbys %d, synchronous %q; want none", l.Standbys, l.Synchronous)
	}
}
