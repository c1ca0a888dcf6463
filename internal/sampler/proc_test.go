package sampler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		file    string
		want    procStat
		wantErr bool
	}{
		{file: "postmaster.txt", want: procStat{pid: 4242, ppid: 1, ticks: 1500 + 250, start: 1189000}},
		{file: "backend.txt", want: procStat{pid: 4300, ppid: 4242, ticks: 37 + 5, start: 1190001}},
		{file: "parens.txt", want: procStat{pid: 77, ppid: 1, ticks: 4294967295 + 4294967296, start: 18446744073709551615}},
		{file: "truncated.txt", wantErr: true},
		{file: "nocomm.txt", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "procstat", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseProcStat(b)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseProcStat = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("parseProcStat = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBusyTicks(t *testing.T) {
	prev := &cpuReading{ticks: map[procKey]uint64{{1, 10}: 100, {2, 20}: 50, {3, 30}: 7}}
	cur := &cpuReading{ticks: map[procKey]uint64{
		{1, 10}: 130, // ran 30
		{2, 20}: 50,  // idle
		{4, 40}: 12,  // started since: all of its 12
		{3, 99}: 5,   // pid 3 reused by a new process: all of its 5
		// pid 3 of start 30 exited: left out
	}}
	if got, want := busyTicks(prev, cur), uint64(30+0+12+5); got != want {
		t.Errorf("busyTicks = %d, want %d", got, want)
	}
}

func TestParseDiskstats(t *testing.T) {
	tests := []struct {
		name    string
		dev     device
		want    diskCounters
		found   bool
		wantErr bool
	}{
		{name: "disk=sda", dev: device{8, 0}, found: true,
			want: diskCounters{reads: 920361, readSectors: 61029538, writes: 5530911, writtenSectors: 398726272}},
		{name: "partition=sda1", dev: device{8, 1}, found: true,
			want: diskCounters{reads: 919993, readSectors: 61017410, writes: 5530897, writtenSectors: 398726272}},
		{name: "old-format=sdb", dev: device{8, 16}, found: true,
			want: diskCounters{reads: 12, readSectors: 96}},
		{name: "device-mapper=dm-0", dev: device{253, 0}, found: true,
			want: diskCounters{reads: 1039733, readSectors: 60968786, writes: 9781058, writtenSectors: 398726272}},
		{name: "virtio=vda", dev: device{254, 0}, found: true,
			want: diskCounters{reads: 511089, readSectors: 15355554, writes: 39057165, writtenSectors: 1609936248}},
		{name: "missing=9:9", dev: device{9, 9}},
		{name: "minor-only-matches=0:0", dev: device{0, 0}},
		{name: "garbled=nvme0n1", dev: device{259, 0}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "diskstats"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, found, err := parseDiskstats(f, tt.dev)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseDiskstats error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want || found != tt.found {
				t.Errorf("parseDiskstats = %+v, %v; want %+v, %v", got, found, tt.want, tt.found)
			}
		})
	}
}

func TestMountSource(t *testing.T) {
	tests := []struct {
		dev  device
		want string
	}{
		{dev: device{0, 45}, want: "/dev/nvme0n1p2"}, // btrfs: its own device number
		{dev: device{0, 31}, want: "overlay"},
		{dev: device{8, 1}, want: "/dev/sda1"},
		{dev: device{0, 99}, want: ""},
	}
	for _, tt := range tests {
		t.Run("dev="+tt.dev.String(), func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "mountinfo"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := mountSource(f, tt.dev); got != tt.want {
				t.Errorf("mountSource = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNoProc: where there is no /proc, as on macOS, the server's CPU time is missing
// for a reason the sampler's error list can show.
func TestNoProc(t *testing.T) {
	_, err := readServerCPU(filepath.Join(t.TempDir(), "proc"), 1)
	if err == nil || !strings.Contains(err.Error(), "server CPU is read from") {
		t.Errorf("error %v, want one that says the server's CPU time comes from /proc", err)
	}
}
