package sampler

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseNode(t *testing.T) {
	tests := []struct {
		file    string
		want    map[string]float64
		wantErr bool
	}{
		{file: "node_exporter.txt", want: map[string]float64{
			// Every mode but idle and iowait, of both CPUs; guest time is another family.
			"node_cpu": 1.25 + 10.5 + 400 + 1200.5 + 300.25 + 1500,
			// Without dm-, loop, md, ram and zram devices.
			"node_disk_read_bytes":  2.5e10 + 5e9,
			"node_disk_read_iops":   900000 + 100000,
			"node_disk_write_iops":  4e6 + 1e6,
			"node_disk_write_bytes": 2e11 + 5e10,
		}},
		{file: "node_exporter_escapes.txt", want: map[string]float64{
			"node_cpu":            10 + 5.5, // NaN counts for nothing
			"node_disk_read_iops": 0,
		}},
		{file: "node_exporter_nodisk.txt", want: map[string]float64{"node_cpu": 3}},
		{file: "node_exporter_bad.txt", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := parseNode(f)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseNode = %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("parseNode = %v, want %v", got, tt.want)
			}
			for name, want := range tt.want {
				if g, ok := got[name]; !ok || g != want {
					t.Errorf("%s = %v (present %v), want %v", name, g, ok, want)
				}
			}
		})
	}
}

func TestParseSeries(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		labels  map[string]string
		value   float64
		wantErr bool
	}{
		{name: "no-labels", in: " 0.52", labels: map[string]string{}, value: 0.52},
		{name: "timestamp", in: `{device="sda"} 5e+10 1700000000000`, labels: map[string]string{"device": "sda"}, value: 5e10},
		{name: "escapes", in: `{a="x\"y",b="c\\d",n="1\n2"} 1`, labels: map[string]string{"a": `x"y`, "b": `c\d`, "n": "1\n2"}, value: 1},
		{name: "brace-in-value", in: `{a="}",b=","} -3`, labels: map[string]string{"a": "}", "b": ","}, value: -3},
		{name: "unterminated", in: `{a="x} 1`, wantErr: true},
		{name: "unquoted", in: `{a=x} 1`, wantErr: true},
		{name: "no-value", in: `{a="x"}`, wantErr: true},
		{name: "bad-value", in: ` one`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels, value, err := parseSeries(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseSeries(%q) = %v, %v; want an error", tt.in, labels, value)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if value != tt.value || len(labels) != len(tt.labels) {
				t.Errorf("parseSeries(%q) = %q, %v; want %q, %v", tt.in, labels, value, tt.labels, tt.value)
			}
			for k, v := range tt.labels {
				if labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, labels[k], v)
				}
			}
		})
	}
}
