// Command soak runs one long TPC-B run with many clients on a local primary with a
// standby, a fault every few minutes (a crash and a failover in turn), and checks
// that the client holds up: its resident memory and open files stay flat once
// the first faults are behind it, every fault is recovered from, and every
// interval is stored.
//
//	go run ./bench/soak [-duration 60m] [-clients 1000] [-every 5m]
//
// Built with -tags memory.counters, each minute's line also says what SQLite (the
// results store) holds.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgbakeoff/pgbakeoff/bench/internal/benchkit"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localfault"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
	"modernc.org/libc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// maxGrowth is how much the client's memory and open files may grow after the
// first interval between faults.
const maxGrowth = 0.05

func run() error {
	duration := flag.Duration("duration", 60*time.Minute, "the run's window")
	clients := flag.Int("clients", 1000, "TPC-B clients")
	every := flag.Duration("every", 5*time.Minute, "a fault this often, a crash and a failover in turn")
	version := flag.String("version", "16", "PostgreSQL major version")
	keep := flag.String("results", "", "results store to keep the run in (default: a temporary one, removed)")
	heaps := flag.String("heapprofiles", "", "directory to write the client's heap profile to each minute (heap-MM.pprof), to find what grows: go tool pprof -base")
	flag.Parse()
	if *heaps != "" {
		runtime.MemProfileRate = 4096 // fine enough to see what a run adds a second
	}
	ctx := context.Background()
	bin, install, dir, cleanup, err := benchkit.SetupInstall(ctx, *version)
	if err != nil {
		return err
	}
	defer cleanup()
	c, tg, stopCluster, err := benchkit.TPCBCluster(ctx, bin, filepath.Join(dir, "cluster"), 50, localpg.ClusterOptions{Standbys: 1,
		Options: localpg.Options{Name: "soak", Install: install, Settings: []localpg.Setting{{Name: "max_connections", Value: strconv.Itoa(*clients + 50)}}}})
	if err != nil {
		return err
	}
	defer stopCluster()
	spec := engine.NewSpec()
	spec.Target, spec.Workload, spec.Clients, spec.Duration, spec.OutageTimeout = tg, tpcb.Workload{}.NewRun(), *clients, *duration, 5*time.Minute
	for at, i := *every, 0; at < *duration; at, i = at+*every, i+1 {
		spec.Faults = append(spec.Faults, engine.Fault{At: at, Kind: []engine.FaultKind{engine.FaultCrash, engine.FaultFailover}[i%2]})
	}
	results := *keep
	if results == "" {
		results = filepath.Join(dir, "results.db")
	}
	var log bytes.Buffer
	env := engine.Env{Injector: localfault.Injector{Cluster: c}, Out: io.Discard, Log: &log,
		OpenStore: func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, results) }}
	fmt.Printf("PostgreSQL %s, a primary and a standby, TPC-B scale 50, %d clients for %s, %d faults\n", install.Version, *clients, *duration, len(spec.Faults))
	stop := sampleSelf(10*time.Second, *heaps)
	sum, err := engine.Run(ctx, spec, env)
	points := stop()
	if err != nil {
		return fmt.Errorf("%v\n%s", err, log.String())
	}
	return judge(ctx, sum, points, *every, results)
}

// point is the client process's memory and open files at one time.
type point struct {
	at     time.Duration
	rssKB  int64
	files  int
	liveKB int64 // the Go heap's live bytes at the last collection
	// The heap's pages as the runtime holds them: objects (live and not yet
	// collected), unused room in spans, and free pages not returned to the system.
	objectsKB, unusedKB, freeKB int64
	stacksKB                    int64 // goroutine stacks
	// goKB is all the memory the Go runtime holds and has not returned to the
	// system (heap, stacks, its own structures); RSS beyond it is someone
	// else's. anonKB and fileKB split RSS into anonymous and file-backed pages.
	goKB, anonKB, fileKB int64
	threads              int64
	// sqliteKB is what the results store's SQLite has allocated, through
	// modernc's C library; 0 unless built with -tags memory.counters.
	sqliteKB int64
}

// sampleSelf samples this process every interval until stop, which returns the
// samples; with heaps, it writes a heap profile there each minute.
func sampleSelf(interval time.Duration, heaps string) func() []point {
	var mu sync.Mutex
	var points []point
	done := make(chan struct{})
	start := time.Now()
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p := point{at: time.Since(start), files: openFiles()}
				p.rssKB, p.anonKB, p.fileKB, p.threads = status()
				p.liveKB, p.objectsKB, p.unusedKB, p.freeKB, p.stacksKB, p.goKB = heapKB()
				p.sqliteKB = int64(libc.MemStat().Bytes / 1024)
				if heaps != "" && len(points)%6 == 5 {
					writeHeap(filepath.Join(heaps, fmt.Sprintf("heap-%02d.pprof", (len(points)+1)/6)))
				}
				mu.Lock()
				points = append(points, p)
				mu.Unlock()
			}
		}
	}()
	return func() []point {
		close(done)
		mu.Lock()
		defer mu.Unlock()
		return points
	}
}

// judge prints what the run measured and fails when the client grew, a fault
// was not recovered from, or an interval is missing.
func judge(ctx context.Context, sum *engine.Summary, points []point, every time.Duration, results string) error {
	var problems []string
	for i, f := range sum.Faults {
		fmt.Printf("fault %d: %s at %.0f s: no commits %.0f ms, back to 90%% after %.0f ms, lost %d\n", i+1, f.Kind, f.AtS, f.NoCommitsMs, f.RecoveredMs, lost(f))
		if !f.Done || f.RecoveredMs < 0 {
			problems = append(problems, fmt.Sprintf("fault %d (%s) not recovered from", i+1, f.Kind))
		}
	}
	// A line a minute: where the memory went, should it grow.
	for i, p := range points {
		if i%6 == 5 {
			fmt.Printf("  at %4.0f s: RSS %6d kB (anon %d, file %d), Go holds %d kB, live heap %6d kB (objects %d, unused in spans %d, free %d), stacks %d kB, threads %d, SQLite %d kB, open files %d\n",
				p.at.Seconds(), p.rssKB, p.anonKB, p.fileKB, p.goKB, p.liveKB, p.objectsKB, p.unusedKB, p.freeKB, p.stacksKB, p.threads, p.sqliteKB, p.files)
		}
	}
	maxRSS, maxFiles := grown(points, every)
	if maxRSS > maxGrowth || maxFiles > maxGrowth {
		problems = append(problems, "the client grew")
	}
	st, err := store.Open(ctx, results)
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := st.Run(ctx, sum.RunID)
	if err != nil {
		return err
	}
	// Intervals are about a second each, longer when the client's tick was late:
	// stored, they cover the run without a gap.
	var covered time.Duration
	gaps := 0
	for i, iv := range d.Intervals {
		covered += iv.End.Sub(iv.Start)
		if i > 0 && iv.Start.Sub(d.Intervals[i-1].End) > 10*time.Millisecond {
			gaps++
		}
	}
	fmt.Printf("intervals stored: %d covering %.1f s for a %.0f s window and its warm-up, %d gaps\n", len(d.Intervals), covered.Seconds(), sum.DurationS, gaps)
	if gaps > 0 || covered.Seconds() < sum.DurationS-1 {
		problems = append(problems, "intervals are missing")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// grown is how much the client's RSS and open files grew, at most, from the
// first fault on: compared are the settled samples, the last before each fault
// and the run's last, against the one before the second fault. A fault's
// reconnection storm (every client connecting again at once) needs memory for
// the attempts under way, which the runtime hands back over the next minutes,
// and the first storm takes the heap to the size its collector lets it reach
// for good; a client that leaks grows from one settled sample to the next.
func grown(points []point, every time.Duration) (rss, files float64) {
	var settled []point
	for i, p := range points {
		next := i+1 == len(points) || points[i+1].at/every != p.at/every
		if p.at >= every && next {
			settled = append(settled, p)
		}
	}
	if len(settled) == 0 {
		return 0, 0
	}
	first, peak := points[0], points[0]
	for _, p := range points {
		if p.at < every {
			first = p
		}
		if p.rssKB > peak.rssKB {
			peak = p
		}
	}
	base := settled[0]
	for _, p := range settled {
		rss = max(rss, float64(p.rssKB)/float64(base.rssKB)-1)
		files = max(files, float64(p.files)/float64(base.files)-1)
	}
	fmt.Printf("RSS before the first fault %d kB; settled after it %d kB, grew at most %.1f%% from there; peak %d kB at %.0f s\n",
		first.rssKB, base.rssKB, 100*rss, peak.rssKB, peak.at.Seconds())
	fmt.Printf("open files settled after the first fault %d, grew at most %.1f%%\n", base.files, 100*files)
	return rss, files
}

func lost(f engine.FaultSummary) int64 {
	if f.Ledger == nil {
		return 0
	}
	return f.Ledger.Lost
}

// status is this process's resident memory in kB, all of it, anonymous and
// file-backed, and its threads.
func status() (rss, anon, file, threads int64) {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || len(strings.Fields(v)) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		switch name {
		case "VmRSS":
			rss = n
		case "RssAnon":
			anon = n
		case "RssFile":
			file = n
		case "Threads":
			threads = n
		}
	}
	return rss, anon, file, threads
}

// heapKB is the Go heap's live bytes as of its last collection, its objects,
// unused room in spans and free pages held, the goroutines' stacks, and all
// the runtime holds but the heap pages it returned to the system, in kB.
func heapKB() (live, objects, unused, free, stacks, held int64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	kb := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64() / 1024)
	}
	return kb(0), kb(1), kb(2), kb(3), kb(4), kb(5) - kb(6)
}

// writeHeap writes the heap profile as of the last collection to path.
func writeHeap(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
	}
}

// openFiles is how many files this process has open.
func openFiles() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}
