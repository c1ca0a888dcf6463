package sampler

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// procRoot is where Linux shows processes and kernel counters.
const procRoot = "/proc"

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, which
// is 100 on Linux whatever the kernel's own tick rate.
const userHZ = 100

// postmasterPID is the pid in DataDir/postmaster.pid, which follows a
// restarted server, else PostmasterPID.
func postmasterPID(l *Local) int {
	if l.DataDir != "" {
		if b, err := os.ReadFile(filepath.Join(l.DataDir, "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && pid > 0 {
				return pid
			}
		}
	}
	return l.PostmasterPID
}

// procStat is what the sampler uses of /proc/<pid>/stat.
type procStat struct {
	pid, ppid int
	ticks     uint64 // utime + stime
	start     uint64 // starttime, which tells a reused pid from its earlier owner
}

// parseProcStat parses /proc/<pid>/stat (proc(5)). The command name, in
// parentheses, may itself hold spaces and parentheses, so the fields are
// counted from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	s := string(bytes.TrimSpace(b))
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("no command name in %q", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return procStat{}, fmt.Errorf("pid in %q: %w", s, err)
	}
	// f[0] is field 3 (state); field n is f[n-3].
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("%d fields after the command name, want at least 20", len(f))
	}
	st := procStat{pid: pid}
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return procStat{}, fmt.Errorf("ppid of %d: %w", pid, err)
	}
	var utime, stime uint64
	for _, v := range []struct {
		field int
		dst   *uint64
	}{{14, &utime}, {15, &stime}, {22, &st.start}} {
		if *v.dst, err = strconv.ParseUint(f[v.field-3], 10, 64); err != nil {
			return procStat{}, fmt.Errorf("field %d of %d: %w", v.field, pid, err)
		}
	}
	st.ticks = utime + stime
	return st, nil
}

type procKey struct {
	pid   int
	start uint64
}

// cpuReading is the CPU time each process of the server has used so far.
type cpuReading struct {
	at    time.Time
	ticks map[procKey]uint64
}

// readServerCPU reads the CPU time of process root and all its descendants.
func readServerCPU(proc string, root int) (*cpuReading, error) {
	before := time.Now()
	entries, err := os.ReadDir(proc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("server CPU is read from %s, which %s does not have", proc, runtime.GOOS)
	}
	if err != nil {
		return nil, err
	}
	children := map[int][]procStat{}
	var top *procStat
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			continue // it exited
		}
		st, err := parseProcStat(b)
		if err != nil {
			continue
		}
		if st.pid == root {
			top = &st
		}
		children[st.ppid] = append(children[st.ppid], st)
	}
	if top == nil {
		return nil, fmt.Errorf("postmaster (pid %d) is not running", root)
	}
	r := &cpuReading{ticks: map[procKey]uint64{}}
	queue := []procStat{*top}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		r.ticks[procKey{p.pid, p.start}] = p.ticks
		queue = append(queue, children[p.pid]...)
	}
	r.at = before.Add(time.Since(before) / 2)
	return r, nil
}

// busyTicks is the CPU time the server's processes used between two
// readings. A process started in between used all of its time in between;
// one that exited in between is not seen, nor its time since prev.
func busyTicks(prev, cur *cpuReading) uint64 {
	var n uint64
	for k, c := range cur.ticks {
		if p := prev.ticks[k]; c >= p {
			n += c - p
		}
	}
	return n
}

// device is a block device, by its number.
type device struct {
	major, minor uint32
}

func (d device) String() string { return fmt.Sprintf("%d:%d", d.major, d.minor) }

// diskCounters are one device's line of /proc/diskstats.
type diskCounters struct {
	reads, writes               uint64 // completed operations
	readSectors, writtenSectors uint64 // of 512 bytes, whatever the device's sector size
}

// diskReading is a device's counters at one instant.
type diskReading struct {
	at time.Time
	diskCounters
}

// parseDiskstats finds the counters of device d in /proc/diskstats
// (Documentation/admin-guide/iostats.rst): major, minor, name, then reads
// completed, reads merged, sectors read, time reading, writes completed,
// writes merged, sectors written, and more that kernels have added since.
func parseDiskstats(r io.Reader, d device) (diskCounters, bool, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != strconv.FormatUint(uint64(d.major), 10) || f[1] != strconv.FormatUint(uint64(d.minor), 10) {
			continue
		}
		var c diskCounters
		for _, v := range []struct {
			field int
			dst   *uint64
		}{{3, &c.reads}, {5, &c.readSectors}, {7, &c.writes}, {9, &c.writtenSectors}} {
			n, err := strconv.ParseUint(f[v.field], 10, 64)
			if err != nil {
				return diskCounters{}, false, fmt.Errorf("diskstats of %s (%s): %w", f[2], d, err)
			}
			*v.dst = n
		}
		return c, true, nil
	}
	return diskCounters{}, false, sc.Err()
}

// readDisk reads device d's counters.
func readDisk(proc string, d device) (*diskReading, error) {
	f, err := os.Open(filepath.Join(proc, "diskstats"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	at := time.Now()
	c, ok, err := parseDiskstats(f, d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("device %s is no longer in /proc/diskstats", d)
	}
	return &diskReading{at: at, diskCounters: c}, nil
}

// findDevice finds the block device that holds dir and has counters in
// /proc/diskstats. A partition has its own. Some file systems, btrfs for one,
// give their files a device number of their own; /proc/self/mountinfo then
// names the block device mounted. An overlay or network file system has none.
func findDevice(proc, dir string) (device, error) {
	d, err := deviceOf(dir)
	if err != nil {
		return device{}, err
	}
	if ok, err := hasDiskstats(proc, d); ok || err != nil {
		return d, err
	}
	if f, err := os.Open(filepath.Join(proc, "self", "mountinfo")); err == nil {
		source := mountSource(f, d)
		_ = f.Close() // read only
		if strings.HasPrefix(source, "/dev/") {
			if m, err := rdevOf(source); err == nil {
				if ok, err := hasDiskstats(proc, m); ok || err != nil {
					return m, err
				}
			}
		}
	}
	return device{}, fmt.Errorf("no I/O counters for device %s, which holds %s (not a block device, or an overlay or network file system); disk_* values are left out", d, dir)
}

func hasDiskstats(proc string, d device) (bool, error) {
	f, err := os.Open(filepath.Join(proc, "diskstats"))
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, ok, err := parseDiskstats(f, d)
	return ok, err
}

// mountSource returns the mount source of the file system numbered d in a
// mountinfo file (proc(5)): field 3 is major:minor, and the source follows
// the file system type after the " - " separator.
func mountSource(r io.Reader, d device) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		before, after, ok := strings.Cut(sc.Text(), " - ")
		f := strings.Fields(before)
		if !ok || len(f) < 3 || f[2] != d.String() {
			continue
		}
		if g := strings.Fields(after); len(g) >= 2 {
			return g[1]
		}
	}
	return ""
}

// diskValues adds the device's rates between two readings.
func diskValues(prev, cur *diskReading, values map[string]float64) {
	secs := cur.at.Sub(prev.at).Seconds()
	if secs <= 0 {
		return
	}
	for _, v := range []struct {
		name      string
		prev, cur uint64
		scale     float64
	}{
		{"disk_read_iops", prev.reads, cur.reads, 1},
		{"disk_write_iops", prev.writes, cur.writes, 1},
		{"disk_read_bytes", prev.readSectors, cur.readSectors, 512},
		{"disk_write_bytes", prev.writtenSectors, cur.writtenSectors, 512},
	} {
		if v.cur >= v.prev {
			values[v.name] = float64(v.cur-v.prev) * v.scale / secs
		}
	}
}
