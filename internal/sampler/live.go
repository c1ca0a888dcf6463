package sampler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ValueNames are the names in Sample.Values, in the order reports show them.
// Rates are per second over the sample's interval.
//
//	commits, rollbacks     transactions ended in the current database (pg_stat_database),
//	                       without the sampler's own
//	blks_read, blks_hit    blocks read from the kernel / found in shared buffers (pg_stat_database)
//	read_iops              read operations: the sum of pg_stat_io.reads (16+; blocks through 17,
//	                       operations of one or more blocks from 18); before 16, blks_read
//	write_iops             write operations: pg_stat_io.writes + extends (16+; without WAL,
//	                       which 18 adds); before 16, the buffers written by the checkpointer,
//	                       the background writer and backends (pg_stat_bgwriter)
//	wal_bytes              WAL written: pg_stat_wal.wal_bytes (14+); before 14, the growth of
//	                       pg_current_wal_lsn(), or pg_last_wal_replay_lsn() in recovery
//	checkpoints            checkpoints completed in the interval, a count: pg_stat_checkpointer
//	                       num_done (18+), num_timed + num_requested (17), pg_stat_bgwriter
//	                       checkpoints_timed + checkpoints_req (before 17); before 18 skipped
//	                       timed checkpoints count too
//	autovacuums,           vacuums and analyzes by autovacuum of the current database's tables
//	autoanalyzes           (catalogs and TOAST included) that ended in the interval, counts:
//	                       pg_stat_all_tables autovacuum_count, autoanalyze_count
//	active_sessions        the benchmark's sessions seen active, averaged over the wait-event
//	                       polls (with an AppName only)
//	other_sessions         other client sessions seen active in the benchmark's database,
//	                       averaged over the same polls: work that competes with the benchmark's
//	server_cpu             cores busy running the postmaster and its descendants (Local only)
//	disk_read_iops,        operations and bytes of the block device holding the data
//	disk_write_iops,       directory, from /proc/diskstats (Local only)
//	disk_read_bytes,
//	disk_write_bytes
//	node_cpu               cores busy on the node_exporter's host: node_cpu_seconds_total of
//	                       every mode but idle and iowait
//	node_disk_read_iops,   summed over the host's disks, leaving out loop, ram, zram,
//	node_disk_write_iops,  device-mapper (dm-) and software RAID (md) devices, which
//	node_disk_read_bytes,  would count the same I/O twice or none at all
//	node_disk_write_bytes
//
// Counters reach the statistics views when backends report them, about once
// a second while they are busy (before 15 through the statistics collector,
// whose readings may be another half second old), so one sample's rate may
// hold part of the previous interval's work; rates over several samples are
// exact.
var ValueNames = []string{
	"commits", "rollbacks", "blks_read", "blks_hit", "read_iops", "write_iops", "wal_bytes",
	"checkpoints", "autovacuums", "autoanalyzes", "active_sessions", "other_sessions", "server_cpu",
	"disk_read_iops", "disk_write_iops", "disk_read_bytes", "disk_write_bytes",
	"node_cpu", "node_disk_read_iops", "node_disk_write_iops", "node_disk_read_bytes", "node_disk_write_bytes",
}

// Config says what to sample and how often.
type Config struct {
	// Connect opens a monitoring connection to the benchmark's database. The
	// sampler keeps two, one for the statistics and one for the wait-event
	// polls, opens them again when they are lost, and closes them on Stop.
	// Their application_name must not be AppName.
	Connect func(ctx context.Context) (*pgconn.PgConn, error)
	// AppName is the application_name of the benchmark's sessions; the wait
	// events are theirs only. "" = no wait events, and one connection.
	AppName string
	// Exclude, when set, names sessions of the caller's own that are not
	// another's work in the database, such as its control session.
	Exclude      func() []uint32
	Interval     time.Duration // between samples; 0 = 1 s
	WaitInterval time.Duration // between wait-event polls; 0 = 100 ms
	Local        *Local        // set for a server on this machine; nil for a remote one
	NodeExporter string        // URL of a Prometheus node_exporter's /metrics; "" = none
	// OnSample is called with each sample from the sampler's goroutine. It
	// should return quickly, since the next sample waits for it, and must
	// not call Stop.
	OnSample func(Sample)
}

// Local is a server on this machine, whose processes and disk can be read.
// After a failover the primary is another server: Sampler.Follow moves to it.
type Local struct {
	// PostmasterPID is used when DataDir has no readable postmaster.pid;
	// otherwise that file's, so a restarted server is followed.
	PostmasterPID int
	DataDir       string
}

// Sample is what the server did in one interval.
type Sample struct {
	Seq        int // 0 for the first
	Start, End time.Time
	// Values holds the figures named in ValueNames. A name is missing when
	// it does not apply (server_cpu of a remote server) or when its source
	// could not be read at both ends of the interval.
	Values map[string]float64
	// Waits is the share of the benchmark's active-session observations in
	// each class: "CPU" for no wait event, else "<wait_event_type>:<wait_event>"
	// such as "LWLock:WALWrite" or "IO:DataFileRead". The shares sum to 1; the
	// map is nil when no active session was seen.
	Waits map[string]float64

	// The server's identity at the end of the interval; zero when it could
	// not be read.
	ServerStarted time.Time // pg_postmaster_start_time()
	ServerAddr    string    // inet_server_addr() and inet_server_port() as host:port, "" over a Unix socket
	InRecovery    bool
}

// Result is what the sampler saw over the whole run.
type Result struct {
	Samples   int
	Restarted bool // pg_postmaster_start_time() changed: a restart, or another server at the address
	// Reset is set when the server's statistics were reset: a stats_reset of the
	// Epoch changed, or the database's commit counter went backwards under the
	// same postmaster. A crash and recovery does it, and so does pg_stat_reset().
	// ResetAt is when, as the server says; zero when it does not.
	Reset   bool
	ResetAt time.Time
	// Crashed is set when the shared statistics were reset under the same
	// postmaster, as a crash and recovery does (Epoch.Crashed).
	Crashed bool
	// Down is the first error by which the server told a session of the
	// sampler that it was not running normally: 57P02 (another server process
	// crashed) or 57P03 (starting up, in recovery, shutting down); nil if none.
	Down           *pgconn.PgError
	AddressChanged bool // the server's address changed (a failover) or it entered or left recovery
	// Others are the other client sessions seen active in the benchmark's
	// database, as "application_name (pid N)", the most often seen first.
	Others []string
	// PIDs are the backends of every session the sampler opened: they report
	// their last counts as they exit, after Stop closed them.
	PIDs []uint32
	// Errors are the sampling problems, each once, with a count when it
	// happened more than once: a query that failed, a connection lost, a
	// source that cannot be read. They never stop sampling.
	Errors []string
}

// Sampler samples a server until Stop.
type Sampler struct {
	cfg     Config
	version int // server_version_num
	query   string
	client  *http.Client
	next    atomic.Pointer[Local] // the server to read from the next sample on (Follow)

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	errs     errorLog
	waits    waitCounts
	pidsMu   sync.Mutex
	pids     []uint32      // of every session opened
	own      atomic.Int64  // transactions the sampler has run in the database
	statsPID atomic.Uint32 // backend of the statistics connection, left out of the wait-event polls
	down     atomic.Pointer[pgconn.PgError]

	// Owned by the sampling goroutine.
	local  *Local         // the server whose processes and disk are read; nil for none
	disk   *device        // local's; nil when its data directory's device has no counters
	conn   *pgconn.PgConn // nil until (re)connected
	seq    int
	last   time.Time  // end of the previous interval
	prev   readings   // at the end of the previous interval
	known  *dbReading // the last reading that succeeded, to notice a restart, a reset or a failover
	owed   float64    // own commits not yet left out of commits
	result Result
}

// readings are the sources read at one instant; nil when unreadable. cpu and
// disk are local's, and compare only with readings of the same local.
type readings struct {
	db    *dbReading
	local *Local
	cpu   *cpuReading
	disk  *diskReading
	node  *nodeReading
}

const (
	connectTimeout = 10 * time.Second
	queryTimeout   = 10 * time.Second
	closeTimeout   = 2 * time.Second
)

// connectCommits is what opening a session adds to xact_commit: the
// transactions of its own start.
const connectCommits = 1

// Start connects, reads the server's version and a first reading of every
// source, and starts sampling in the background. It fails only when it cannot
// connect or read the version; a caller may then run without a sampler.
// Sampling ends with Stop or when ctx is cancelled.
func Start(ctx context.Context, cfg Config) (*Sampler, error) {
	if cfg.Connect == nil {
		return nil, fmt.Errorf("start sampler: no Connect function")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.WaitInterval <= 0 {
		cfg.WaitInterval = 100 * time.Millisecond
	}
	s := &Sampler{cfg: cfg, stop: make(chan struct{}), client: &http.Client{Timeout: nodeTimeout}}
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("start sampler: %w", err)
	}
	if s.version, err = serverVersion(ctx, conn); err != nil {
		closeConn(conn)
		return nil, fmt.Errorf("start sampler: %w", err)
	}
	s.own.Add(1) // the query's transaction
	if s.version < 100000 {
		closeConn(conn)
		return nil, fmt.Errorf("start sampler: PostgreSQL %d.%d is older than 10, which the sampler needs", s.version/10000, s.version/100%100)
	}
	s.conn = conn
	s.statsPID.Store(conn.PID())
	s.query = statsQuery(s.version)
	var waitConn *pgconn.PgConn
	if cfg.AppName != "" {
		if waitConn, err = s.connectWaits(ctx); err != nil {
			closeConn(conn)
			return nil, fmt.Errorf("start sampler: %w", err)
		}
	}
	s.setLocal(cfg.Local)
	s.last = time.Now()
	s.prev = s.read(ctx)
	s.known = s.prev.db
	s.wg.Add(1)
	go s.run(ctx)
	if waitConn != nil {
		s.wg.Add(1)
		go s.pollWaits(ctx, waitConn)
	}
	return s, nil
}

// Stop takes a last sample, unless the last interval is shorter than a tenth
// of Interval or ctx was cancelled, ends sampling and closes the connections.
// It may be called after ctx was cancelled, and more than once.
func (s *Sampler) Stop() Result {
	s.stopOnce.Do(func() { close(s.stop) })
	s.wg.Wait()
	r := s.result
	r.Down = s.down.Load()
	r.Errors = s.errs.list()
	r.Others = s.waits.seenOthers()
	s.pidsMu.Lock()
	r.PIDs = slices.Clone(s.pids)
	s.pidsMu.Unlock()
	return r
}

// Commits is the number of transactions the sampler has committed in the
// database so far: each connection's start, each query and the preparing of
// one, about 11 a second with the default intervals. They count in
// pg_stat_database's xact_commit, so whoever reads it around a run (as
// Database does) can leave them out; Sample.Values' commits already does.
func (s *Sampler) Commits() int64 { return s.own.Load() }

// run samples once an interval.
func (s *Sampler) run(ctx context.Context) {
	defer s.wg.Done()
	defer func() {
		if s.conn != nil {
			closeConn(s.conn)
		}
	}()
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			if time.Since(s.last) >= s.cfg.Interval/10 && ctx.Err() == nil {
				s.sample(ctx)
			}
			return
		case <-t.C:
			s.sample(ctx)
		}
	}
}

// sample reads every source and passes the interval's figures to OnSample.
func (s *Sampler) sample(ctx context.Context) {
	end := time.Now()
	cur := s.read(ctx)
	waits, active, others, polled := s.waits.take()
	sm := Sample{Seq: s.seq, Start: s.last, End: end, Values: map[string]float64{}, Waits: waits}
	if polled {
		sm.Values["active_sessions"] = active
		sm.Values["other_sessions"] = others
	}
	if db := cur.db; db != nil {
		sm.ServerStarted, sm.ServerAddr, sm.InRecovery = db.epoch.Started, db.addr, db.inRecovery
		if k := s.known; k != nil {
			s.compare(k, db)
		}
		s.known = db
		// Rates come from two readings in a row of one Epoch: the counters of
		// another postmaster were restored from its last clean shutdown, or
		// reset, as those of a crash and recovery or a pg_stat_reset() are.
		if p := s.prev.db; p != nil && p.epoch.Same(db.epoch) {
			s.owed = dbValues(p, db, float64(db.own-p.own)+s.owed, sm.Values)
		}
	}
	// After Follow, the previous reading is another server's processes and
	// perhaps another disk's.
	sameLocal := s.prev.local == cur.local
	if p, c := s.prev.cpu, cur.cpu; p != nil && c != nil && sameLocal {
		if secs := c.at.Sub(p.at).Seconds(); secs > 0 {
			sm.Values["server_cpu"] = float64(busyTicks(p, c)) / userHZ / secs
		}
	}
	if p, c := s.prev.disk, cur.disk; p != nil && c != nil && sameLocal {
		diskValues(p, c, sm.Values)
	}
	if p, c := s.prev.node, cur.node; p != nil && c != nil {
		nodeValues(p, c, sm.Values)
	}
	s.prev, s.last = cur, end
	s.seq++
	s.result.Samples++
	if s.cfg.OnSample != nil {
		s.cfg.OnSample(sm)
	}
}

// compare notes what changed between the last reading that succeeded and db,
// however many failed in between: the samples taken while a crashed server
// recovers fail, and must not hide the crash.
func (s *Sampler) compare(known, db *dbReading) {
	k, e := known.epoch, db.epoch
	if !e.Started.Equal(k.Started) {
		s.result.Restarted = true
	}
	if db.addr != known.addr || db.inRecovery != known.inRecovery {
		s.result.AddressChanged = true
	}
	reset, at := e.ResetSince(k)
	// Under one postmaster the commits only grow until a reset; another restores
	// them from its last clean shutdown.
	if e.Started.Equal(k.Started) && db.counters["xact_commit"] < known.counters["xact_commit"] {
		reset = true
	}
	if reset {
		s.result.Reset = true
		if at.After(s.result.ResetAt) {
			s.result.ResetAt = at
		}
	}
	if e.Crashed(k) {
		s.result.Crashed = true
	}
}

// Follow makes the sampler read the processes and disk of l from its next
// sample on: the server that is the primary after a failover, which the
// target's address follows but Config.Local does not. The sample that spans
// the change has no server_cpu or disk values, since its two ends are two
// servers'. It may be called while sampling.
func (s *Sampler) Follow(l Local) { s.next.Store(&l) }

// setLocal makes l the server whose processes and disk are read, and finds
// the device holding its data.
func (s *Sampler) setLocal(l *Local) {
	s.local, s.disk = l, nil
	if l != nil && l.DataDir != "" {
		d, err := findDevice(procRoot, l.DataDir)
		if err != nil {
			s.errs.add("disk: %v", err)
		} else {
			s.disk = &d
		}
	}
}

// noteDown keeps the first error that says the server is not running normally.
func (s *Sampler) noteDown(err error) {
	if pe := DownError(err); pe != nil {
		s.down.CompareAndSwap(nil, pe)
	}
}

// read reads every source, noting the ones that fail.
func (s *Sampler) read(ctx context.Context) readings {
	var r readings
	r.db = s.readDB(ctx)
	if l := s.next.Swap(nil); l != nil {
		s.setLocal(l)
	}
	r.local = s.local
	if l := s.local; l != nil {
		pid := postmasterPID(l)
		c, err := readServerCPU(procRoot, pid)
		if err != nil {
			s.errs.add("server_cpu: %v", err)
		} else {
			r.cpu = c
		}
		if s.disk != nil {
			d, err := readDisk(procRoot, *s.disk)
			if err != nil {
				s.errs.add("disk: %v", err)
			} else {
				r.disk = d
			}
		}
	}
	if s.cfg.NodeExporter != "" {
		n, err := readNode(ctx, s.client, s.cfg.NodeExporter)
		if err != nil && ctx.Err() == nil {
			s.errs.add("node_exporter %s: %v", redactURL(s.cfg.NodeExporter), err)
		}
		r.node = n
	}
	return r
}

// readDB runs the statistics query, connecting first if needed. A connection
// found broken is replaced at once, so that a server that restarted between
// two samples loses none.
func (s *Sampler) readDB(ctx context.Context) *dbReading {
	for range 2 {
		if s.conn == nil {
			conn, err := s.connect(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.errs.add("statistics: %v", err)
				}
				return nil
			}
			s.conn = conn
			s.statsPID.Store(conn.PID())
		}
		own := s.own.Load()
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		r, err := queryStats(qctx, s.conn, s.query, s.version)
		cancel()
		if err == nil {
			s.own.Add(1)
			r.own = own
			return r
		}
		if ctx.Err() != nil {
			return nil
		}
		s.noteDown(err)
		s.errs.add("statistics query: %v", err)
		if !broken(s.conn, err) {
			return nil
		}
		closeConn(s.conn)
		s.conn = nil
		s.statsPID.Store(0)
	}
	return nil
}

// connect opens a monitoring connection.
func (s *Sampler) connect(ctx context.Context) (*pgconn.PgConn, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := s.cfg.Connect(ctx)
	if err != nil {
		s.noteDown(err)
		return nil, err
	}
	s.own.Add(connectCommits)
	s.pidsMu.Lock()
	s.pids = append(s.pids, conn.PID())
	s.pidsMu.Unlock()
	return conn, nil
}

// broken tells whether conn is of no further use after err.
func broken(conn *pgconn.PgConn, err error) bool {
	if conn.IsClosed() {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
	}
	// A network error or a timeout leaves the protocol in an unknown state.
	return true
}

func closeConn(conn *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = conn.Close(ctx) // a monitoring session: the server ends it either way
}

// errorLog keeps each sampling problem once, with how often it happened.
type errorLog struct {
	mu    sync.Mutex
	order []string
	count map[string]int
}

func (l *errorLog) add(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == nil {
		l.count = map[string]int{}
	}
	if l.count[msg] == 0 {
		l.order = append(l.order, msg)
	}
	l.count[msg]++
}

func (l *errorLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, msg := range l.order {
		if n := l.count[msg]; n > 1 {
			msg = fmt.Sprintf("%s (%d times)", msg, n)
		}
		out = append(out, msg)
	}
	return out
}

// redactURL hides a password in the URL's user information; the HTTP client's
// errors repeat the URL, so they pass through it too.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	return u.Redacted()
}
