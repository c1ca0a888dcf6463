package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// runMonitor gathers, while a run goes on, what its validity is judged from. The
// driver and the sampler call it from their own goroutines.
type runMonitor struct {
	mu        sync.Mutex
	intervals []monitorInterval
	samples   []monitorSample
	firstErr  error
}

// A long run keeps an interval and a server sample a second, so the monitor keeps
// of each only what the evidence needs, its instants in Unix nanoseconds: 32 and
// 40 bytes.

// monitorInterval is what the evidence needs of an interval.
type monitorInterval struct {
	start, end int64
	committed  int64
	lag        time.Duration
}

// monitorSample is what the evidence needs of a server sample.
type monitorSample struct {
	start, end                             int64
	checkpoints, autovacuums, autoanalyzes float32 // counts in the sample
	others                                 float32 // other sessions active, on average
	polled                                 bool    // others was read
}

func (m *runMonitor) interval(iv driver.Interval) {
	m.mu.Lock()
	m.intervals = append(m.intervals, monitorInterval{iv.Start.UnixNano(), iv.End.UnixNano(), iv.Committed, iv.Lag})
	m.mu.Unlock()
}

func (m *runMonitor) sample(sm sampler.Sample) {
	o, polled := sm.Values["other_sessions"]
	ms := monitorSample{start: sm.Start.UnixNano(), end: sm.End.UnixNano(), checkpoints: float32(sm.Values["checkpoints"]),
		autovacuums: float32(sm.Values["autovacuums"]), autoanalyzes: float32(sm.Values["autoanalyzes"]), others: float32(o), polled: polled}
	m.mu.Lock()
	m.samples = append(m.samples, ms)
	m.mu.Unlock()
}

func (m *runMonitor) storeErr(err error) {
	m.mu.Lock()
	if m.firstErr == nil {
		m.firstErr = err
	}
	m.mu.Unlock()
}

func (m *runMonitor) err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.firstErr
}

// evidence picks what lies inside the measured window: the throughput of each
// interval wholly inside it, and the checkpoints and autovacuum's work of the samples
// whose middle lies in it.
func (m *runMonitor) evidence(res *driver.Result) evidence {
	m.mu.Lock()
	defer m.mu.Unlock()
	var e evidence
	const slack = 50 * time.Millisecond
	for _, iv := range m.intervals {
		start, end := time.Unix(0, iv.start), time.Unix(0, iv.end)
		secs := end.Sub(start).Seconds()
		if start.Before(res.WindowStart.Add(-slack)) || end.After(res.WindowEnd.Add(slack)) || secs < 0.5 {
			continue
		}
		e.rates = append(e.rates, rate{at: end.Sub(res.WindowStart).Round(time.Second), tps: float64(iv.committed) / secs, lag: iv.lag})
	}
	// A sample counts when its middle lies in the window: the last one may run on
	// while the clients disconnect.
	var others, polled float64 // other sessions' active seconds, and the seconds polled
	for _, sm := range m.samples {
		// Autovacuum's work over the whole run, for the commits it adds to the span.
		e.autovacuumWork += int(sm.autovacuums + sm.autoanalyzes)
		start, end := time.Unix(0, sm.start), time.Unix(0, sm.end)
		mid := start.Add(end.Sub(start) / 2)
		if mid.Before(res.WindowStart) || !mid.Before(res.WindowEnd) {
			continue
		}
		if n := int(sm.checkpoints); n > 0 {
			e.checkpoints += n
			e.checkpointsAt = append(e.checkpointsAt, end.Sub(res.WindowStart))
		}
		e.autovacuums += int(sm.autovacuums)
		e.autoanalyzes += int(sm.autoanalyzes)
		if sm.polled {
			secs := end.Sub(start).Seconds()
			others += float64(sm.others) * secs
			polled += secs
		}
	}
	if polled > 0 {
		e.others = others / polled
	}
	return e
}

// storeSample turns a sampler's interval into the store's, its wait-event shares
// under names beginning with "wait:".
func storeSample(sm sampler.Sample) store.Sample {
	v := make(map[string]float64, len(sm.Values)+len(sm.Waits))
	for k, x := range sm.Values {
		v[k] = x
	}
	for k, x := range sm.Waits {
		v["wait:"+k] = x
	}
	return store.Sample{Seq: sm.Seq, Start: sm.Start, End: sm.End, Values: v}
}

func sameAddrs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Where a run's data lives, as PostgreSQL and this machine see it.
const (
	fitSharedBuffers = "in-memory"             // the database fits in shared_buffers
	fitOSCache       = "os-cache"              // larger than shared_buffers, smaller than the machine's memory
	fitStorage       = "storage-bound"         // larger than the machine's memory
	fitBeyondBuffers = "beyond-shared-buffers" // larger than shared_buffers; the server machine's memory is unknown
)

// fit is the size of a run's database against the memory that could hold it.
type fit struct {
	Bytes         int64  `json:"bytes"`
	SharedBuffers int64  `json:"shared_buffers_bytes"`
	MemoryBytes   int64  `json:"memory_bytes,omitempty"` // local servers: this machine's memory
	Class         string `json:"class"`
}

func (f fit) String() string {
	s := fmt.Sprintf("%s, %s (shared_buffers %s", FormatBytes(f.Bytes), f.Class, FormatBytes(f.SharedBuffers))
	if f.MemoryBytes > 0 {
		s += ", memory " + FormatBytes(f.MemoryBytes)
	}
	return s + ")"
}

func (f fit) params() map[string]any {
	if f.Bytes == 0 {
		return nil
	}
	return map[string]any{"dataset_bytes": f.Bytes, "shared_buffers_bytes": f.SharedBuffers, "dataset_fit": f.Class}
}

// Classify names where data of the given size lives; memory is 0 when unknown.
func Classify(bytes, sharedBuffers, memory int64) string {
	switch {
	case bytes <= sharedBuffers:
		return fitSharedBuffers
	case memory == 0:
		return fitBeyondBuffers
	case bytes <= memory:
		return fitOSCache
	}
	return fitStorage
}

// datasetFit reads the database's size and shared_buffers; for a server on this
// machine it also weighs them against the machine's memory. A failure leaves the
// fit empty: it informs, it does not stop a run.
func datasetFit(ctx context.Context, conn *pgconn.PgConn, local *sampler.Local) fit {
	rows, err := target.Query(ctx, conn, "select pg_database_size(current_database()), pg_size_bytes(current_setting('shared_buffers'))")
	if err != nil || len(rows) == 0 {
		return fit{}
	}
	var f fit
	f.Bytes, _ = strconv.ParseInt(rows[0][0], 10, 64)
	f.SharedBuffers, _ = strconv.ParseInt(rows[0][1], 10, 64)
	if local != nil {
		f.MemoryBytes = machine.Memory()
	}
	f.Class = Classify(f.Bytes, f.SharedBuffers, f.MemoryBytes)
	return f
}

// autovacuumNaptime is how often autovacuum visits each database, or 0 when it
// is off or the setting cannot be read.
func autovacuumNaptime(ctx context.Context, conn *pgconn.PgConn) time.Duration {
	rows, err := target.Query(ctx, conn, "select current_setting('autovacuum')::bool, extract(epoch from current_setting('autovacuum_naptime')::interval)")
	if err != nil || len(rows) != 1 || rows[0][0] != "t" {
		return 0
	}
	secs, err := strconv.ParseFloat(rows[0][1], 64)
	if err != nil || secs <= 0 {
		return 0
	}
	return time.Duration(secs * float64(time.Second))
}
