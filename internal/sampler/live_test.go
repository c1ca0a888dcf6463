package sampler_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// connector returns a Config.Connect for dsn whose sessions carry appName.
func connector(t *testing.T, dsn, appName string) func(context.Context) (*pgconn.PgConn, error) {
	t.Helper()
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	tg.Config.RuntimeParams["application_name"] = appName
	return tg.Connect
}

func connect(t *testing.T, dsn, appName string) *pgconn.PgConn {
	t.Helper()
	conn, err := connector(t, dsn, appName)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func execSQL(t *testing.T, conn *pgconn.PgConn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql).ReadAll(); err != nil {
		t.Errorf("%s: %v", sql, err)
	}
}

// local describes the test server to the sampler, or is nil when the tests
// run against a server elsewhere.
func local(t *testing.T) *sampler.Local {
	if os.Getenv(pgtest.DSNEnv) != "" {
		return nil
	}
	srv := pgtest.Server(t)
	return &sampler.Local{PostmasterPID: srv.PID, DataDir: srv.DataDir}
}

// recorder keeps the samples a sampler delivers.
type recorder struct {
	mu      sync.Mutex
	samples []sampler.Sample
	added   chan struct{} // closed as the next sample is added (see next)
}

func (r *recorder) add(s sampler.Sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, s)
	if r.added != nil {
		close(r.added)
		r.added = nil
	}
}

func (r *recorder) all() []sampler.Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.samples)
}

// next returns the samples so far and a channel closed once another is added.
func (r *recorder) next() ([]sampler.Sample, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.added == nil {
		r.added = make(chan struct{})
	}
	return slices.Clone(r.samples), r.added
}

// waitSamples waits until n of the samples delivered satisfy ok, and returns
// those that do.
func waitSamples(t *testing.T, rec *recorder, ok func(sampler.Sample) bool, n int) []sampler.Sample {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		samples, added := rec.next()
		var seen []sampler.Sample
		for _, sm := range samples {
			if ok(sm) {
				seen = append(seen, sm)
			}
		}
		if len(seen) >= n {
			return seen
		}
		select {
		case <-added:
		case <-timeout:
			t.Fatalf("%d samples of %d wanted after 30s", len(seen), n)
		}
	}
}

// queryOne runs sql on conn and returns the one value of its last result.
func queryOne(t *testing.T, conn *pgconn.PgConn, sql string) string {
	t.Helper()
	res, err := conn.Exec(context.Background(), sql).ReadAll()
	if err != nil || len(res) == 0 || len(res[len(res)-1].Rows) != 1 {
		t.Fatalf("%s: %v", sql, err)
	}
	return string(res[len(res)-1].Rows[0][0])
}

// waitGone waits until the backends with the given process IDs have exited:
// sessions report what is left of their statistics as they end.
func waitGone(t *testing.T, conn *pgconn.PgConn, pids ...uint32) {
	t.Helper()
	ids := make([]string, len(pids))
	for i, p := range pids {
		ids[i] = strconv.FormatUint(uint64(p), 10)
	}
	left := "select count(*) from pg_stat_activity where pid in (" + strings.Join(ids, ", ") + ")"
	for deadline := time.Now().Add(10 * time.Second); queryOne(t, conn, left) != "0"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("backends %v still there 10 s after their sessions were closed", pids)
		}
	}
}

// waitStatsShow waits until the statistics read from now on hold what every
// session has reported so far. From PostgreSQL 15 they do at once, kept in
// shared memory; before, reports travel to the statistics collector, whose
// file a reader may be given half a second old: this waits for a file written
// after now.
func waitStatsShow(t *testing.T, conn *pgconn.PgConn) {
	t.Helper()
	if queryOne(t, conn, "select current_setting('server_version_num')::int >= 150000") == "t" {
		return
	}
	newer := "select pg_stat_get_snapshot_timestamp() > '" + queryOne(t, conn, "select clock_timestamp()") + "'"
	for deadline := time.Now().Add(10 * time.Second); queryOne(t, conn, newer) != "t"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the statistics collector wrote no newer file in 10 s")
		}
	}
}

// total adds up a value over the samples: a rate times each interval, or a count.
func total(samples []sampler.Sample, name string) float64 {
	var sum float64
	for _, s := range samples {
		v := s.Values[name]
		if name != "checkpoints" && name != "autovacuums" && name != "autoanalyzes" {
			v *= s.End.Sub(s.Start).Seconds()
		}
		sum += v
	}
	return sum
}

// nodeExporter serves node_exporter metrics whose counters grow at fixed
// rates, with stacked and virtual devices growing much faster, which the
// sampler must leave out.
func nodeExporter(t *testing.T) *httptest.Server {
	born := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := time.Since(born).Seconds()
		fmt.Fprintf(w, `# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} %g
node_cpu_seconds_total{cpu="0",mode="user"} %g
node_cpu_seconds_total{cpu="1",mode="system"} %g
node_cpu_seconds_total{cpu="1",mode="iowait"} %g
node_disk_reads_completed_total{device="vda"} %g
node_disk_reads_completed_total{device="loop0"} %g
node_disk_writes_completed_total{device="vda"} %g
node_disk_read_bytes_total{device="vda"} %g
node_disk_written_bytes_total{device="vda"} %g
node_disk_written_bytes_total{device="dm-0"} %g
`, 1e5+10*e, 1000+1.0*e, 500+0.5*e, 10+3*e, 5000+100*e, 1e6*e, 200*e, 409600*e, 1638400*e, 1e9*e)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSample runs a small workload under the sampler and checks what it saw.
//
// It runs alone, before the parallel tests: before PostgreSQL 15, the
// databases they create and drop come with checkpoints.
func TestSample(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	const appName = "sampler-test-bench"
	ctl := connect(t, dsn, "sampler-test-ctl")
	execSQL(t, ctl, "create table t (i int)")
	loc := local(t)
	node := nodeExporter(t)
	// Before 15, CREATE DATABASE makes two checkpoints, and the statistics
	// collector may show them half a second late.
	waitStatsShow(t, ctl)

	var rec recorder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := sampler.Start(ctx, sampler.Config{
		Connect:      connector(t, dsn, "sampler-test-monitor"),
		AppName:      appName,
		Interval:     500 * time.Millisecond,
		Local:        loc,
		NodeExporter: node.URL + "/metrics",
		OnSample:     rec.add,
	})
	if err != nil {
		t.Fatal(err)
	}

	// One session inserts in short transactions, another sleeps in a
	// query; a third, not the benchmark's, asks for a checkpoint. Each insert
	// keeps its server busy for milliseconds: with inserts of a thousand rows the
	// writer's session sat idle, waiting on this process, whenever the other
	// tests of the suite kept it from the CPU, and no poll saw it active.
	const rowsPerInsert = 10000
	var inserts, sleeps int
	var wg sync.WaitGroup
	deadline := time.Now().Add(2500 * time.Millisecond)
	writer, sleeper := connect(t, dsn, appName), connect(t, dsn, appName)
	wg.Go(func() {
		for time.Now().Before(deadline) {
			execSQL(t, writer, fmt.Sprintf("insert into t select generate_series(1, %d)", rowsPerInsert))
			inserts++
		}
	})
	wg.Go(func() {
		for time.Now().Before(deadline) {
			execSQL(t, sleeper, "select pg_sleep(0.2)")
			sleeps++
		}
	})
	time.Sleep(800 * time.Millisecond) // the checkpoint's place amid the workload
	execSQL(t, ctl, "checkpoint")
	wg.Wait()
	// Sessions that end report their statistics; before 15 these travel to
	// the statistics collector, which takes up to half a second. A sample begun
	// after they show has readings that hold them (as it stops, the sampler
	// reads again only if its last reading is not just past).
	for _, c := range []*pgconn.PgConn{writer, sleeper} {
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
	waitGone(t, ctl, writer.PID(), sleeper.PID())
	waitStatsShow(t, ctl)
	shown := time.Now()
	waitSamples(t, &rec, func(sm sampler.Sample) bool { return sm.Start.After(shown) }, 1)
	res := s.Stop()
	samples := rec.all()
	for _, sm := range samples {
		t.Logf("sample %d: %v waits %v", sm.Seq, sm.Values, sm.Waits)
	}
	t.Logf("%d inserts, %d sleeps; result %+v", inserts, sleeps, res)

	t.Run("samples", func(t *testing.T) {
		if res.Samples != len(samples) || len(samples) < 6 {
			t.Fatalf("Result.Samples = %d, delivered %d; want the same, at least 6 in 3.5s", res.Samples, len(samples))
		}
		for i, sm := range samples {
			if sm.Seq != i {
				t.Errorf("sample %d: Seq = %d", i, sm.Seq)
			}
			if i > 0 && !sm.Start.Equal(samples[i-1].End) {
				t.Errorf("sample %d starts at %v, the previous ended at %v", i, sm.Start, samples[i-1].End)
			}
			if d := sm.End.Sub(sm.Start); d <= 0 || d > time.Second {
				t.Errorf("sample %d lasts %v, want about 500ms", i, d)
			}
		}
		if res.Restarted || res.AddressChanged {
			t.Errorf("Result = %+v, want neither restarted nor address changed", res)
		}
		for _, e := range res.Errors {
			if !strings.HasPrefix(e, "disk: ") {
				t.Errorf("sampling error: %s", e)
			}
		}
	})

	t.Run("identity", func(t *testing.T) {
		var started float64
		var addr string
		rows, err := ctl.Exec(context.Background(), `select extract(epoch from pg_postmaster_start_time()),
			coalesce(host(inet_server_addr()) || ' ' || inet_server_port(), '')`).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		started, _ = strconv.ParseFloat(string(rows[0].Rows[0][0]), 64)
		if h, p, ok := strings.Cut(string(rows[0].Rows[0][1]), " "); ok {
			addr = net.JoinHostPort(h, p)
		}
		for _, sm := range samples {
			if got := float64(sm.ServerStarted.UnixMicro()) / 1e6; math.Abs(got-started) > 1e-5 || sm.ServerAddr != addr || sm.InRecovery {
				t.Fatalf("sample %d: server started %v at %q, in recovery %v; want %v at %q, not in recovery",
					sm.Seq, sm.ServerStarted, sm.ServerAddr, sm.InRecovery, time.UnixMicro(int64(started*1e6)), addr)
			}
		}
	})

	t.Run("statistics", func(t *testing.T) {
		for _, sm := range samples {
			for _, name := range []string{"commits", "rollbacks", "blks_read", "blks_hit", "read_iops", "write_iops", "wal_bytes", "checkpoints", "autovacuums", "autoanalyzes"} {
				if v, ok := sm.Values[name]; !ok || v < 0 {
					t.Errorf("sample %d: %s = %v (present %v), want a value ≥ 0", sm.Seq, name, v, ok)
				}
			}
		}
		// The sampler's own transactions are left out.
		want := float64(inserts + sleeps)
		if got := total(samples, "commits"); math.Abs(got-want) > 0.05*want+15 {
			t.Errorf("commits add up to %.1f, want the workload's %v", got, want)
		}
		if got, want := total(samples, "wal_bytes"), float64(inserts*rowsPerInsert*20); got < want {
			t.Errorf("wal_bytes add up to %.0f, want at least %.0f for %d rows", got, want, inserts*rowsPerInsert)
		}
		if got := total(samples, "checkpoints"); got < 1 || got > 2 {
			t.Errorf("checkpoints add up to %v, want the one requested (and perhaps a timed one)", got)
		}
		if got := total(samples, "blks_hit"); got <= 0 {
			t.Errorf("blks_hit adds up to %v, want > 0", got)
		}
	})

	t.Run("waits", func(t *testing.T) {
		classes := map[string]bool{}
		var maxActive float64
		polled := 0
		for _, sm := range samples {
			var sum float64
			for c, share := range sm.Waits {
				classes[c] = true
				sum += share
			}
			if sm.Waits != nil && math.Abs(sum-1) > 1e-9 {
				t.Errorf("sample %d: wait shares %v add up to %v, want 1", sm.Seq, sm.Waits, sum)
			}
			// A sample without a wait-event poll in it (a short last one, or a poll
			// held up on a loaded machine) has no figure rather than a zero.
			a, ok := sm.Values["active_sessions"]
			if ok {
				polled++
			}
			if a > 2 {
				t.Errorf("sample %d: active_sessions = %v, want at most the workload's 2", sm.Seq, a)
			}
			maxActive = max(maxActive, a)
		}
		if polled < len(samples)/2 {
			t.Errorf("active_sessions in %d samples of %d, want most", polled, len(samples))
		}
		if !classes["Timeout:PgSleep"] || len(classes) < 2 {
			t.Errorf("wait classes %v, want Timeout:PgSleep and the writer's", classes)
		}
		if maxActive < 1 {
			t.Errorf("at most %v active sessions seen, want at least the sleeper", maxActive)
		}
	})

	t.Run("local", func(t *testing.T) {
		if loc == nil {
			t.Skip("the server is not on this machine")
		}
		var busiest float64
		for _, sm := range samples {
			cpu, ok := sm.Values["server_cpu"]
			if !ok || cpu > float64(runtime.NumCPU())+0.5 {
				t.Errorf("sample %d: server_cpu = %v (present %v), want at most %d cores", sm.Seq, cpu, ok, runtime.NumCPU())
			}
			busiest = max(busiest, cpu)
		}
		if busiest <= 0 {
			t.Errorf("server_cpu is never above 0")
		}
		noted := slices.ContainsFunc(res.Errors, func(e string) bool { return strings.HasPrefix(e, "disk: ") })
		for _, sm := range samples {
			for _, name := range []string{"disk_read_iops", "disk_write_iops", "disk_read_bytes", "disk_write_bytes"} {
				if _, ok := sm.Values[name]; ok == noted {
					t.Errorf("sample %d: %s present %v, errors %q", sm.Seq, name, ok, res.Errors)
				}
			}
		}
	})

	t.Run("node_exporter", func(t *testing.T) {
		want := map[string]float64{"node_cpu": 1.5, "node_disk_read_iops": 100, "node_disk_write_iops": 200,
			"node_disk_read_bytes": 409600, "node_disk_write_bytes": 1638400}
		for _, sm := range samples {
			for name, w := range want {
				if got := sm.Values[name]; math.Abs(got-w) > 0.2*w {
					t.Errorf("sample %d: %s = %v, want %v", sm.Seq, name, got, w)
				}
			}
		}
	})
}

// TestAutovacuum checks that autovacuums and autoanalyzes count what autovacuum
// finished on the sampled database. Autovacuum is woken every second for the test:
// table v is vacuumed twice (two rounds of deletes) and never analyzed, table a
// analyzed once and never vacuumed, so that counts swapped between the two values
// would show. It runs alone: autovacuum's naptime is the whole server's.
func TestAutovacuum(t *testing.T) {
	pgtest.Long(t)
	pgtest.Server(t) // sets the server's autovacuum_naptime: not on a server elsewhere
	dsn := pgtest.NewDatabase(t)
	ctl := connect(t, dsn, "sampler-test-ctl")
	if got := pgtest.Query(t, dsn, "show autovacuum"); got != "on" {
		t.Skipf("autovacuum is %s on the test server", got)
	}
	never := "autovacuum_%s_threshold = 2000000000, autovacuum_%s_scale_factor = 0"
	execSQL(t, ctl, "create table v (i int) with (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0, "+
		fmt.Sprintf(never, "analyze", "analyze")+")")
	execSQL(t, ctl, "create table a (i int) with (autovacuum_analyze_threshold = 0, autovacuum_analyze_scale_factor = 0, "+
		fmt.Sprintf(never, "vacuum", "vacuum")+")")
	if pgtest.Query(t, dsn, "select current_setting('server_version_num')::int >= 130000") == "t" {
		execSQL(t, ctl, "alter table v set (autovacuum_vacuum_insert_threshold = 2000000000)")
		execSQL(t, ctl, "alter table a set (autovacuum_vacuum_insert_threshold = 2000000000)")
	}
	sums := func() (vacuums, analyzes float64) {
		row := pgtest.Query(t, dsn, "select sum(autovacuum_count) || ' ' || sum(autoanalyze_count) from pg_stat_all_tables")
		if _, err := fmt.Sscan(row, &vacuums, &analyzes); err != nil {
			t.Fatalf("autovacuum counts %q: %v", row, err)
		}
		return vacuums, analyzes
	}
	count := func(table, column string) int {
		got := pgtest.Query(t, dsn, fmt.Sprintf("select %s from pg_stat_all_tables where relid = '%s'::regclass", column, table))
		n, err := strconv.Atoi(got)
		if err != nil {
			t.Fatalf("%s of %s: %q", column, table, got)
		}
		return n
	}
	vacuums0, analyzes0 := sums()

	var rec recorder
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := sampler.Start(ctx, sampler.Config{Connect: connector(t, dsn, "sampler-test-monitor"), Interval: 200 * time.Millisecond, OnSample: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			s.Stop()
		}
	}
	t.Cleanup(stop)
	admin := pgtest.DSN(t)
	setNaptime := func(sql string) {
		pgtest.Query(t, admin, sql)
		pgtest.Query(t, admin, "select pg_reload_conf()")
	}
	setNaptime("alter system set autovacuum_naptime = '1s'")
	reset := func() { setNaptime("alter system reset autovacuum_naptime") }
	t.Cleanup(reset)
	waitFor := func(table, column string, n int) {
		t.Helper()
		for deadline := time.Now().Add(40 * time.Second); count(table, column) < n; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("autovacuum did not reach %s %d of %s in 40 s", column, n, table)
			}
		}
	}
	execSQL(t, ctl, "insert into v select generate_series(1, 1000); insert into a select generate_series(1, 1000); delete from v where i <= 500")
	waitFor("v", "autovacuum_count", 1)
	execSQL(t, ctl, "delete from v")
	waitFor("v", "autovacuum_count", 2)
	waitFor("a", "autoanalyze_count", 1)
	reset()
	// A worker already started finishes; the last sample, as the sampler stops,
	// sees what it did.
	working := "select count(*) from pg_stat_activity where datname = current_database() and backend_type = 'autovacuum worker'"
	for deadline := time.Now().Add(30 * time.Second); pgtest.Query(t, dsn, working) != "0"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("an autovacuum worker still in the database 30 s after the naptime was reset")
		}
	}
	stop()
	vacuums1, analyzes1 := sums()
	samples := rec.all()

	vacuums, analyzes := total(samples, "autovacuums"), total(samples, "autoanalyzes")
	t.Logf("%d samples: %v autovacuums, %v autoanalyzes; the database's counts grew by %v and %v",
		len(samples), vacuums, analyzes, vacuums1-vacuums0, analyzes1-analyzes0)
	if vacuums < 2 || vacuums > vacuums1-vacuums0 {
		t.Errorf("autovacuums add up to %v, want from 2 (table v's) to %v (the database's)", vacuums, vacuums1-vacuums0)
	}
	if analyzes < 1 || analyzes > analyzes1-analyzes0 {
		t.Errorf("autoanalyzes add up to %v, want from 1 (table a's) to %v (the database's)", analyzes, analyzes1-analyzes0)
	}
}

// TestOwnCommits checks that Commits accounts for every transaction the
// sampler adds to pg_stat_database, that commits leaves them out, and that
// Control's settled readings leave out its own.
func TestOwnCommits(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	ctl, err := sampler.NewControl(ctx, connector(t, dsn, "sampler-test-ctl"))
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	before, err := ctl.Settled(ctx, 5*time.Second)
	if err != nil || !before.Settled {
		t.Fatalf("settled reading %+v: %v", before, err)
	}
	var rec recorder
	s, err := sampler.Start(ctx, sampler.Config{
		Connect:  connector(t, dsn, "sampler-test-monitor"),
		AppName:  "sampler-test-nobody",
		Interval: 300 * time.Millisecond,
		OnSample: rec.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // sampling an idle database: the span measured, not a wait for something
	res := s.Stop()
	if len(res.Errors) > 0 {
		t.Errorf("sampling errors: %q", res.Errors)
	}
	if len(res.PIDs) != 2 {
		t.Errorf("sampler sessions %v, want its two", res.PIDs)
	}
	if err := ctl.WaitGone(ctx, "sampler-test-nobody", res.PIDs, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	after, err := ctl.Settled(ctx, 5*time.Second)
	if err != nil || !after.Settled {
		t.Fatalf("settled reading %+v: %v", after, err)
	}
	// Exact but for a visit of autovacuum's to the database (two commits) now and then.
	if got, want := after.Commits(0)-before.Commits(0), s.Commits(); got < want || got > want+3 {
		t.Errorf("xact_commit grew by %d besides the control's own, Commits = %d", got, want)
	}
	// Without the sampler's own, about 13 a second, they would add up to
	// about 26. The server may not yet have counted the few the sampler ran
	// as it started when it took its first reading.
	if got := total(rec.all(), "commits"); got > 8 {
		t.Errorf("commits of an idle database add up to %v, want the sampler's own left out", got)
	}
}

// TestRestart restarts a server of its own under the sampler.
func TestRestart(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	own := pgtest.OwnServer(t)
	srv := own.Server()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var rec recorder
	s, err := sampler.Start(ctx, sampler.Config{
		Connect:  connector(t, srv.TCPDSN(), "sampler-test-monitor"),
		AppName:  "sampler-test-nobody",
		Interval: 200 * time.Millisecond,
		Local:    &sampler.Local{PostmasterPID: srv.PID, DataDir: srv.DataDir},
		OnSample: rec.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Two samples of the first postmaster; then the server is down until a sample
	// has failed.
	first := waitSamples(t, &rec, func(sm sampler.Sample) bool { return !sm.ServerStarted.IsZero() }, 2)[0].ServerStarted
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	waitSamples(t, &rec, func(sm sampler.Sample) bool { return sm.End.After(stopped) && sm.ServerStarted.IsZero() }, 1)
	if err := own.Restart(); err != nil {
		t.Fatal(err)
	}
	srv = own.Server()
	// Two samples of the new postmaster, which give rates again.
	after := waitSamples(t, &rec, func(sm sampler.Sample) bool {
		return !sm.ServerStarted.IsZero() && !sm.ServerStarted.Equal(first)
	}, 2)
	res := s.Stop()
	if !res.Restarted || res.AddressChanged {
		t.Errorf("Result = %+v, want restarted at the same address", res)
	}
	if len(res.Errors) == 0 {
		t.Errorf("no sampling errors while the server was down")
	}
	t.Logf("errors while the server restarted: %q", res.Errors)
	last := after[len(after)-1]
	for _, name := range []string{"commits", "wal_bytes", "server_cpu"} {
		if _, ok := last.Values[name]; !ok {
			t.Errorf("after the restart, sample %d has no %s: %v", last.Seq, name, last.Values)
		}
	}
	if want := net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port)); last.ServerAddr != want {
		t.Errorf("ServerAddr = %q, want %q", last.ServerAddr, want)
	}
}

// TestFollow: a sampler reading the processes of one server follows another,
// as after a failover: once the first is stopped, the samples still have the
// server's CPU, now the second's, and the first's absence is never an error.
func TestFollow(t *testing.T) {
	pgtest.Long(t)
	next := local(t)
	if next == nil {
		t.Skip("the test server is not on this machine")
	}
	old := pgtest.OwnServer(t).Server()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rec recorder
	s, err := sampler.Start(ctx, sampler.Config{
		Connect:  connector(t, pgtest.DSN(t), "sampler-test-monitor"),
		Interval: 200 * time.Millisecond,
		Local:    &sampler.Local{PostmasterPID: old.PID, DataDir: old.DataDir},
		OnSample: rec.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	hasCPU := func(sm sampler.Sample) bool { _, ok := sm.Values["server_cpu"]; return ok }
	waitSamples(t, &rec, hasCPU, 2)
	s.Follow(*next)
	if err := old.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	waitSamples(t, &rec, func(sm sampler.Sample) bool { return sm.Start.After(stopped) && hasCPU(sm) }, 2)
	res := s.Stop()
	gone := fmt.Sprintf("postmaster (pid %d) is not running", old.PID)
	for _, e := range res.Errors {
		if strings.Contains(e, gone) {
			t.Errorf("the old server was still read after Follow: %s", e)
		}
	}
	// No interval compares one server's processes with the other's.
	for _, sm := range rec.all() {
		if v, ok := sm.Values["server_cpu"]; ok && v > float64(runtime.NumCPU()) {
			t.Errorf("sample %d: server_cpu %.1f cores, more than the machine's %d", sm.Seq, v, runtime.NumCPU())
		}
	}
}

// TestHiddenSessions samples as a user who may not see the benchmark's
// sessions, which is reported, not taken for CPU time.
func TestHiddenSessions(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	const appName = "sampler-test-hidden"
	ctl := connect(t, dsn, "sampler-test-ctl")
	execSQL(t, ctl, "drop role if exists sampler_test_monitor; create role sampler_test_monitor login")
	t.Cleanup(func() { execSQL(t, connect(t, pgtest.DSN(t), "sampler-test-ctl"), "drop role sampler_test_monitor") })
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	tg.Config.User = "sampler_test_monitor"
	var rec recorder
	s, err := sampler.Start(context.Background(), sampler.Config{
		Connect:  tg.Connect,
		AppName:  appName,
		Interval: 300 * time.Millisecond,
		OnSample: rec.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	execSQL(t, connect(t, dsn, appName), "select pg_sleep(0.7)")
	res := s.Stop()
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "pg_read_all_stats") {
		t.Errorf("errors %q, want one about pg_read_all_stats", res.Errors)
	}
	for _, sm := range rec.all() {
		if sm.Waits != nil {
			t.Errorf("sample %d: waits %v, want none seen", sm.Seq, sm.Waits)
		}
	}
}

// TestStopAfterCancel ends sampling by cancelling its context. Without an
// AppName the sampler polls no wait events and keeps one session.
func TestStopAfterCancel(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	const monitor = "sampler-test-cancelled"
	ctl := connect(t, dsn, "sampler-test-ctl")
	sessions := func() string {
		rows, err := ctl.Exec(context.Background(), "select count(*) from pg_stat_activity where application_name = '"+monitor+"'").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return string(rows[0].Rows[0][0])
	}
	ctx, cancel := context.WithCancel(context.Background())
	var rec recorder
	s, err := sampler.Start(ctx, sampler.Config{
		Connect:  connector(t, dsn, monitor),
		Interval: 100 * time.Millisecond,
		OnSample: rec.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	waitSamples(t, &rec, func(sampler.Sample) bool { return true }, 2)
	if n := sessions(); n != "1" {
		t.Errorf("%s sampler sessions, want 1", n)
	}
	cancel()
	done := make(chan sampler.Result)
	go func() { done <- s.Stop() }()
	select {
	case res := <-done:
		if res.Samples < 2 || len(res.Errors) > 0 {
			t.Errorf("Result = %+v, want about 3 samples and no errors", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Stop after cancel has not returned after 5s")
	}
	for _, sm := range rec.all() {
		if _, ok := sm.Values["active_sessions"]; ok || sm.Waits != nil {
			t.Errorf("sample %d has wait events without an AppName: %v %v", sm.Seq, sm.Values, sm.Waits)
		}
	}
	for i := 0; sessions() != "0"; i++ {
		if i == 50 {
			t.Fatal("sampler sessions still open 1s after Stop")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
