// Package benchkit is what the benchmark commands share: a fresh binary and server in
// a scratch directory, timed and captured child processes, and medians.
package benchkit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
)

// Setup builds pgbakeoff into a new scratch directory and starts a server there. The
// returned cleanup stops the server and removes the directory.
func Setup(ctx context.Context, version string, settings []localpg.Setting) (bin string, srv *localpg.Server, dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", "pgbakeoff-bench-")
	if err != nil {
		return "", nil, "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "pgbakeoff")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/pgbakeoff").CombinedOutput(); err != nil {
		cleanup()
		return "", nil, "", nil, fmt.Errorf("build: %v\n%s", err, out)
	}
	// The server runs as another user when started as root; it must reach its directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		cleanup()
		return "", nil, "", nil, err
	}
	srv, err = localpg.Start(ctx, localpg.Options{Name: "bench", Version: version, BaseDir: filepath.Join(dir, "servers"),
		Settings: settings, Log: os.Stderr})
	if err != nil {
		cleanup()
		return "", nil, "", nil, err
	}
	return bin, srv, dir, func() { srv.Stop(context.Background()); os.RemoveAll(dir) }, nil
}

// Pgbench finds the pgbench that belongs to srv, or any on PATH.
func Pgbench(srv *localpg.Server) (string, error) {
	for _, p := range []string{filepath.Join(srv.BinDir, "pgbench"), fmt.Sprintf("/usr/lib/postgresql/%d/bin/pgbench", srv.Major)} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return exec.LookPath("pgbench")
}

// Timed runs a command and returns its wall time in seconds.
func Timed(name string, args ...string) (float64, error) {
	start := time.Now()
	_, _, err := Capture(name, args...)
	return time.Since(start).Seconds(), err
}

// Capture runs a command and returns its standard output and resource usage; a
// failure carries both output streams.
func Capture(name string, args ...string) ([]byte, *syscall.Rusage, error) {
	return CaptureIn("", name, args...)
}

// CaptureIn is Capture with the command run in directory dir (a script that
// finds its modules beside it: sysbench-tpcc's tpcc.lua).
func CaptureIn(dir, name string, args ...string) ([]byte, *syscall.Rusage, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s %v: %v\n%s%s", filepath.Base(name), args[:min(2, len(args))], err, out.String(), errOut.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		ru = &syscall.Rusage{}
	}
	return out.Bytes(), ru, nil
}

// CPUSeconds is a process's CPU time, user and system.
func CPUSeconds(ru *syscall.Rusage) float64 { return cpuSeconds(ru) }

// CPUPerTx is a process's CPU time per transaction in microseconds.
func CPUPerTx(ru *syscall.Rusage, tx float64) float64 {
	if tx <= 0 {
		return 0
	}
	return 1e6 * cpuSeconds(ru) / tx
}

// Reschedules is the machine's count of rescheduling interrupts so far (the RES row
// of /proc/interrupts, all CPUs), or -1 where there is none. One is sent for each
// wake-up of a task onto another core that must preempt what runs there; on a
// virtual machine each is a trap to the host, so a client whose wake-ups cross cores
// pays for it where one whose processes share a core with their backends does not.
func Reschedules() float64 {
	b, err := os.ReadFile("/proc/interrupts")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "RES:" {
			continue
		}
		var n float64
		for _, v := range f[1:] {
			c, err := strconv.ParseFloat(v, 64)
			if err != nil {
				break // the description after the counts
			}
			n += c
		}
		return n
	}
	return -1
}

// Median of v; 0 for none.
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MedianRatio is the median over rounds of ours[i]/ref[i]. Each round's two runs
// are close in time, so the ratio of a pair is spared the drift between rounds that
// a ratio of medians is not.
func MedianRatio(ours, ref []float64) float64 {
	r := make([]float64, 0, len(ours))
	for i := range min(len(ours), len(ref)) {
		if ref[i] > 0 {
			r = append(r, ours[i]/ref[i])
		}
	}
	return Median(r)
}

// CreateDatabases creates databases on srv and returns a function giving each one's
// DSN.
func CreateDatabases(ctx context.Context, srv *localpg.Server, names ...string) (func(db string) string, error) {
	conn, err := pgconn.Connect(ctx, srv.DSN())
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	for _, db := range names {
		if err := conn.Exec(ctx, "create database "+db).Close(); err != nil {
			return nil, err
		}
	}
	return func(db string) string { return strings.Replace(srv.DSN(), "dbname=postgres", "dbname="+db, 1) }, nil
}

// Clone replaces database to with a file copy of database from, which nobody may be
// connected to. A run that starts on a clone starts on the same tables as every
// other, whichever tool makes it and whatever ran before: sysbench's read-write
// slowed run after run on the same tables, even vacuumed between runs.
func Clone(ctx context.Context, srv *localpg.Server, from, to string) error {
	create := "create database " + to + " template " + from
	if srv.Major >= 15 {
		// The default since 15 writes the whole copy to WAL; a file copy takes a
		// second for a gigabyte here.
		create += " strategy file_copy"
	}
	for _, sql := range []string{"drop database if exists " + to, create} {
		if err := execSQL(ctx, srv.DSN(), sql); err != nil {
			return err
		}
	}
	return nil
}

// Checkpoint writes out every dirty buffer on srv, so that a timed load does not pay
// for the writes of the one before it.
func Checkpoint(ctx context.Context, srv *localpg.Server) error {
	return execSQL(ctx, srv.DSN(), "checkpoint")
}

// Settle vacuums and analyzes the database at dsn, then checkpoints: freshly loaded
// tables would otherwise draw autovacuum into the first timed runs, and only into
// theirs.
func Settle(ctx context.Context, dsn string) error {
	if err := execSQL(ctx, dsn, "vacuum analyze"); err != nil {
		return err
	}
	return execSQL(ctx, dsn, "checkpoint")
}

func execSQL(ctx context.Context, dsn, sql string) error {
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Exec(ctx, sql).Close()
}

// InTurn runs a, then b, in even rounds and b, then a, in odd ones: whatever changes
// from the first run of a round to the second (tables aging under writes, a
// checkpoint still under way) does not always fall on the same tool.
func InTurn(round int, a, b func() error) error {
	if round%2 == 1 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}

// CPUTimes are the machine's CPU time counters (the cpu line of /proc/stat), in
// clock ticks: idle (with iowait) and all.
type CPUTimes struct{ Idle, Total float64 }

// ReadCPUTimes reads /proc/stat; zero where there is none.
func ReadCPUTimes() CPUTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return CPUTimes{}
	}
	var t CPUTimes
	for i, v := range f[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		t.Total += n
		if i == 3 || i == 4 { // idle, iowait
			t.Idle += n
		}
	}
	return t
}

// IdlePct is the share of the machine's CPU time that was idle between a and b.
func IdlePct(a, b CPUTimes) float64 {
	if b.Total <= a.Total {
		return 0
	}
	return 100 * (b.Idle - a.Idle) / (b.Total - a.Total)
}

// MidRunIdle reads the machine's idle CPU over the middle of a run of length d
// that starts now, from 30% to 80% of it, away from either tool's start-up and
// end; the returned function waits for the reading.
func MidRunIdle(d time.Duration) func() float64 {
	done := make(chan float64, 1)
	go func() {
		time.Sleep(d * 3 / 10)
		a := ReadCPUTimes()
		time.Sleep(d / 2)
		done <- IdlePct(a, ReadCPUTimes())
	}()
	return func() float64 { return <-done }
}
