package driver_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/histogram"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// kvTable creates the table readScript reads.
func kvTable(t *testing.T, dsn string) {
	t.Helper()
	pgtest.Query(t, dsn, "create table kv(k int primary key, v int); insert into kv select g, 0 from generate_series(1, 100) g")
}

func readScript() *driver.Script {
	return &driver.Script{Name: "read", Weight: 1, Vars: []driver.Var{{Name: "k", Min: 1, Max: 100}},
		Commands: []driver.Command{{SQL: "SELECT v FROM kv WHERE k = $1", Params: []int{0}}}}
}

// series collects the intervals a run reports.
type series struct {
	mu  sync.Mutex
	ivs []driver.Interval
}

func (s *series) add(iv driver.Interval) {
	s.mu.Lock()
	s.ivs = append(s.ivs, iv)
	s.mu.Unlock()
}

// committedAfter is what committed in the intervals that began at or after t.
func (s *series) committedAfter(t time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, iv := range s.ivs {
		if !iv.Start.Before(t) {
			n += iv.Committed
		}
	}
	return n
}

// sawDown reports whether an interval ended with clients down or counted failed
// attempts to connect.
func (s *series) sawDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.ivs, func(iv driver.Interval) bool { return iv.Down > 0 || iv.ConnectErrors > 0 })
}

// inWindow returns a Config.OnWindow that runs fault on a goroutine of its own as
// the run's window opens, and a channel closed once fault has returned. A fault
// placed from there falls at the same place in the window however long a loaded
// machine took to connect the clients.
func inWindow(fault func()) (onWindow func(open bool), done <-chan struct{}) {
	ch := make(chan struct{})
	return func(open bool) {
		if open {
			go func() {
				defer close(ch)
				fault()
			}()
		}
	}, ch
}

// TestServerGone takes a server away mid-run. Killed with SIGKILL and started again,
// the clients reconnect and the run ends on time; stopped for good, the run ends
// early once no client has had a connection for the outage timeout.
func TestServerGone(t *testing.T) {
	pgtest.Long(t)
	s := pgtest.OwnServer(t)
	dsn := s.Server().TCPDSN()
	kvTable(t, dsn)
	known := []string{"57P01", "57P02", "57P03", "EOF", "connection reset", "connection refused", "broken pipe"}

	t.Run("sigkill/restart", func(t *testing.T) {
		var ivs series
		var restarted atomic.Int64
		errc := make(chan error, 1)
		onWindow, _ := inWindow(func() {
			time.Sleep(time.Second) // into the window: the fault's place, not a wait for something
			if err := s.Kill(); err != nil {
				errc <- err
				return
			}
			time.Sleep(300 * time.Millisecond) // refused for a while
			err := s.Restart()
			restarted.Store(time.Now().UnixNano())
			errc <- err
		})
		start := time.Now()
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{readScript()},
			Clients: 3, Duration: 5 * time.Second, MaxBackoff: 200 * time.Millisecond,
			TxTimeout: 5 * time.Second, ConnectTimeout: 2 * time.Second, OutageTimeout: 20 * time.Second, Interval: 250 * time.Millisecond, OnInterval: ivs.add,
			OnWindow: onWindow})
		if err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		if err := <-errc; err != nil {
			t.Fatalf("kill and restart the server: %v", err)
		}
		if elapsed > 7*time.Second {
			t.Errorf("run took %s, want about 5s", elapsed)
		}
		if res.Incomplete || res.Interrupted {
			t.Errorf("incomplete %v (%s), interrupted %v; want a complete run", res.Incomplete, res.IncompleteReason, res.Interrupted)
		}
		clients := map[int]bool{}
		for _, o := range res.Outages {
			clients[o.Client] = true
			if !slices.Contains(known, o.Cause) {
				t.Errorf("client %d: outage cause %q (%s), want one of %q", o.Client, o.Cause, o.Error, known)
			}
			if !o.Recovered {
				t.Errorf("client %d: outage %+v not recovered", o.Client, o)
			}
		}
		if len(clients) != 3 {
			t.Errorf("outages of clients %v, want all 3: %+v", clients, res.Outages)
		}
		if len(res.ConnectErrors) == 0 {
			t.Error("no failed attempt to connect while the server was down")
		}
		for _, e := range res.ConnectErrors {
			if !slices.Contains(known, e.Cause) || e.Count < 1 {
				t.Errorf("connect error %+v, want a cause among %q", e, known)
			}
		}
		t.Logf("outages %.2fs: %+v; connect errors %+v", res.OutageSeconds(), res.Outages, res.ConnectErrors)
		if n := ivs.committedAfter(time.Unix(0, restarted.Load())); n == 0 {
			t.Error("no transaction committed after the restart")
		}
		if !ivs.sawDown() {
			t.Error("no interval shows clients down")
		}
	})

	t.Run("stopped/outage-timeout=3s", func(t *testing.T) {
		var ivs series
		onWindow, stopped := inWindow(func() {
			time.Sleep(time.Second) // into the window: the fault's place, not a wait for something
			if err := s.Server().Stop(context.Background()); err != nil {
				t.Error(err)
			}
		})
		start := time.Now()
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{readScript()},
			Clients: 2, Duration: 30 * time.Second, MaxBackoff: 200 * time.Millisecond, OutageTimeout: 3 * time.Second, Interval: 250 * time.Millisecond, OnInterval: ivs.add,
			OnWindow: onWindow})
		if err != nil {
			t.Fatal(err)
		}
		<-stopped
		// The outage timeout leaves time for attempts refused once the postmaster has
		// exited, which a loaded machine takes a while to reach.
		if elapsed := time.Since(start); elapsed > 7*time.Second {
			t.Errorf("run took %s, want it to end about 3s after the server stopped", elapsed)
		}
		if !res.Incomplete || !strings.Contains(res.IncompleteReason, "outage timeout") {
			t.Errorf("incomplete %v (%q), want an incomplete run for the outage timeout", res.Incomplete, res.IncompleteReason)
		}
		if res.Committed == 0 || ivs.committedAfter(start) != res.Committed {
			t.Errorf("%d committed in the result, %d in the intervals; want the same, before the stop", res.Committed, ivs.committedAfter(start))
		}
		if res.WindowEnd.Sub(res.WindowStart) > 6*time.Second {
			t.Errorf("window %s, want it closed as the run stopped", res.WindowEnd.Sub(res.WindowStart))
		}
		if len(res.Outages) != 2 {
			t.Errorf("outages %+v, want one per client", res.Outages)
		}
		for _, o := range res.Outages {
			if o.Recovered || o.Cause != "57P01" && o.Cause != "EOF" {
				t.Errorf("client %d: outage %+v, want 57P01 (fast shutdown), not recovered", o.Client, o)
			}
		}
		if !slices.ContainsFunc(res.ConnectErrors, func(e driver.ConnectErrorCount) bool { return e.Cause == "connection refused" }) {
			t.Errorf("connect errors %+v, want connection refused", res.ConnectErrors)
		}
	})

	// Stopped for good with an outage timeout longer than what is left of the window,
	// the run still ends on time, but incomplete: its server did not come back.
	t.Run("stopped/outage-timeout=2m", func(t *testing.T) {
		_ = s.Server().Stop(context.Background()) // running when the subtests before were skipped
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
		onWindow, stopped := inWindow(func() {
			time.Sleep(time.Second) // into the window: the fault's place, not a wait for something
			if err := s.Server().Stop(context.Background()); err != nil {
				t.Error(err)
			}
		})
		res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{readScript()},
			Clients: 2, Duration: 3 * time.Second, MaxBackoff: 200 * time.Millisecond, OutageTimeout: 2 * time.Minute, Interval: 250 * time.Millisecond,
			OnWindow: onWindow})
		if err != nil {
			t.Fatal(err)
		}
		<-stopped
		if !res.Incomplete || !strings.Contains(res.IncompleteReason, "had not come back") {
			t.Errorf("incomplete %v (%q), want an incomplete run: the server did not come back", res.Incomplete, res.IncompleteReason)
		}
		if res.Committed == 0 {
			t.Error("nothing committed before the server stopped")
		}
	})
}

// faultProxy runs a toxiproxy TCP proxy in the test process in front of the shared
// server and returns it with a target database reached through it.
func faultProxy(t *testing.T) (*toxiproxy.Proxy, *target.Target, string) {
	t.Helper()
	srv := pgtest.Server(t)
	dsn := pgtest.NewDatabase(t)
	kvTable(t, dsn)
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(api, "pg", "127.0.0.1:0", net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port)))
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	_, port, err := net.SplitHostPort(p.Listen)
	if err != nil {
		t.Fatal(err)
	}
	tg := parse(t, dsn+" host=127.0.0.1 port="+port+" sslmode=disable")
	return p, tg, dsn
}

func addToxic(t *testing.T, p *toxiproxy.Proxy, name, kind string, attrs string) {
	t.Helper()
	js := fmt.Sprintf(`{"name": %q, "type": %q, "stream": "downstream", "attributes": %s}`, name, kind, attrs)
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
		t.Errorf("add toxic %s: %v", name, err)
	}
}

func removeToxic(t *testing.T, p *toxiproxy.Proxy, name string) {
	t.Helper()
	if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		t.Errorf("remove toxic %s: %v", name, err)
	}
}

// TestFaultyNetwork puts a fault-injecting TCP proxy between the clients and the
// server: added latency and cut bandwidth show in the latencies, a reset connection is
// reconnected, and a black-holed one is abandoned by the transaction timeout.
func TestFaultyNetwork(t *testing.T) {
	t.Run("latency=20ms", func(t *testing.T) {
		t.Parallel()
		p, tg, _ := faultProxy(t)
		addToxic(t, p, "slow", "latency", `{"latency": 20}`)
		res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{readScript()},
			Clients: 2, Duration: time.Second, TxTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s := histogram.Summarize(res.Scripts[0].Latency)
		if s.Count < 10 || s.P50 < 20 || s.P50 > 200 {
			t.Errorf("%d transactions, p50 %.1f ms; want p50 of at least the 20 ms added", s.Count, s.P50)
		}
		if len(res.Outages) != 0 || res.Failed != 0 {
			t.Errorf("outages %+v, %d failed; want none", res.Outages, res.Failed)
		}
	})

	t.Run("bandwidth=8KB/s", func(t *testing.T) {
		t.Parallel()
		p, tg, _ := faultProxy(t)
		addToxic(t, p, "thin", "bandwidth", `{"rate": 8}`)
		// About 4 KB of answer: half a second at 8 KB/s.
		script := &driver.Script{Name: "wide", Weight: 1, Commands: []driver.Command{{SQL: "SELECT repeat('x', 4000)"}}}
		res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{script},
			Clients: 1, Duration: 1500 * time.Millisecond, TxTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if s := histogram.Summarize(res.Scripts[0].Latency); s.Count < 1 || s.P50 < 300 {
			t.Errorf("%d transactions, p50 %.1f ms; want about 500 ms for 4 KB at 8 KB/s", s.Count, s.P50)
		}
	})

	for _, perClient := range []bool{false, true} {
		t.Run(threadsName("reset", perClient), func(t *testing.T) {
			t.Parallel()
			testReset(t, perClient)
		})
		t.Run(threadsName("black-hole/tx-timeout=500ms", perClient), func(t *testing.T) {
			t.Parallel()
			testBlackHole(t, perClient)
		})
	}
}

// threadsName names a subtest run with and without a thread per client.
func threadsName(name string, perClient bool) string {
	if perClient {
		return name + "/thread-per-client"
	}
	return name
}

// testReset resets every connection for half a second: each client loses its
// transaction in flight, reconnects, and commits again once the network heals.
func testReset(t *testing.T, perClient bool) {
	p, tg, _ := faultProxy(t)
	var ivs series
	var healed atomic.Int64
	onWindow, done := inWindow(func() {
		time.Sleep(time.Second) // into the window: the fault's place, not a wait for something
		addToxic(t, p, "reset", "reset_peer", `{"timeout": 0}`)
		time.Sleep(500 * time.Millisecond) // the fault's length
		removeToxic(t, p, "reset")
		healed.Store(time.Now().UnixNano())
	})
	start := time.Now()
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{readScript()},
		Clients: 2, Duration: 3 * time.Second, MaxBackoff: 100 * time.Millisecond, TxTimeout: 5 * time.Second, Interval: 250 * time.Millisecond, OnInterval: ivs.add,
		ThreadPerClient: perClient, OnWindow: onWindow})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("run took %s, want about 3s", elapsed)
	}
	if len(res.Outages) < 2 {
		t.Errorf("outages %+v, want at least one per client", res.Outages)
	}
	for _, o := range res.Outages {
		if o.Cause != "connection reset" && o.Cause != "EOF" || !o.Recovered || o.FailedTx != 1 {
			t.Errorf("client %d: outage %+v, want connection reset, recovered, one transaction lost", o.Client, o)
		}
	}
	if res.Failed < 2 {
		t.Errorf("%d failed, want the transactions in flight", res.Failed)
	}
	if ivs.committedAfter(time.Unix(0, healed.Load())) == 0 {
		t.Error("no transaction committed after the network healed")
	}
	t.Logf("outages %+v; connect errors %+v", res.Outages, res.ConnectErrors)
}

// testBlackHole drops every answer from 1 s into the window on: each client
// abandons its transaction after the transaction timeout and keeps failing to
// connect, and the run still ends on time.
func testBlackHole(t *testing.T, perClient bool) {
	p, tg, _ := faultProxy(t)
	var ivs series
	var holed atomic.Int64
	onWindow, done := inWindow(func() {
		time.Sleep(time.Second) // into the window: the fault's place, not a wait for something
		// Answers are dropped from now until the run ends: reads wait forever.
		holed.Store(time.Now().UnixNano())
		addToxic(t, p, "hole", "timeout", `{"timeout": 0}`)
	})
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{readScript()},
		Clients: 2, Duration: 4 * time.Second, MaxBackoff: 100 * time.Millisecond,
		TxTimeout: 500 * time.Millisecond, ConnectTimeout: 800 * time.Millisecond, Interval: 250 * time.Millisecond, OnInterval: ivs.add,
		ThreadPerClient: perClient, OnWindow: onWindow})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	hole := time.Unix(0, holed.Load())
	if late := res.End.Sub(res.WindowEnd); late > time.Second {
		t.Errorf("the run ended %s after its window: no client may hang", late)
	}
	if len(res.Outages) != 2 {
		t.Errorf("outages %+v, want one per client", res.Outages)
	}
	for _, o := range res.Outages {
		if o.Cause != "timeout" || o.Recovered || o.FailedTx != 1 {
			t.Errorf("client %d: outage %+v, want timeout, not recovered, one transaction lost", o.Client, o)
		}
		// Abandoned 0.5 to 0.75 s after the transaction began: one that began
		// just before the hole and was still waiting for its answer is abandoned
		// sooner after it than one that began inside it.
		if at := o.Start.Sub(hole); at < 0 || at > 1200*time.Millisecond {
			t.Errorf("client %d: outage began %s after the hole, want 0-0.75s", o.Client, at)
		}
	}
	if !slices.ContainsFunc(res.ConnectErrors, func(e driver.ConnectErrorCount) bool { return e.Cause == "timeout" && e.Count > 1 }) {
		t.Errorf("connect errors %+v, want timeouts", res.ConnectErrors)
	}
	if !slices.ContainsFunc(res.Errors, func(e driver.ErrorCount) bool { return e.Cause == "timeout" && e.Count == 2 }) {
		t.Errorf("errors %+v, want the 2 transactions lost to the timeout", res.Errors)
	}
	if !ivs.sawDown() {
		t.Error("no interval shows clients down")
	}
}

// lookups wraps a target's name resolution: it counts the lookups, answers for name
// with 127.0.0.1, and fails as "no such host" while broken is set.
type lookups struct {
	name   string
	n      atomic.Int64
	broken atomic.Bool
}

func (l *lookups) lookup(ctx context.Context, host string) ([]string, error) {
	l.n.Add(1)
	if l.broken.Load() || host != l.name {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []string{"127.0.0.1"}, nil
}

func tcpTarget(t *testing.T, dsn, host string) *target.Target {
	t.Helper()
	srv := pgtest.Server(t)
	return parse(t, fmt.Sprintf("%s host=%s port=%d sslmode=disable", dsn, host, srv.Port))
}

// TestResolveOnce connects every client, reconnections included, to the address
// "localhost" resolved to at the start, and records it.
func TestResolveOnce(t *testing.T) {
	pgtest.Long(t)
	t.Run("reconnect", func(t *testing.T) {
		dsn := pgtest.NewDatabase(t)
		kvTable(t, dsn)
		tg := tcpTarget(t, dsn, "localhost")
		tg.Config.RuntimeParams["application_name"] = "resolve-once-test"
		system := tg.Config.LookupFunc
		var n atomic.Int64
		tg.Config.LookupFunc = func(ctx context.Context, host string) ([]string, error) {
			n.Add(1)
			return system(ctx, host)
		}
		// The backends are terminated once the clients run, however long a loaded
		// machine took to connect them.
		terminated := make(chan struct{})
		res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{readScript()},
			Clients: 3, Duration: 3 * time.Second, ResolveOnce: true,
			OnWindow: func(open bool) {
				if open {
					go func() {
						defer close(terminated)
						time.Sleep(300 * time.Millisecond) // into the window: the fault's place
						pgtest.Query(t, dsn, "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = 'resolve-once-test'")
					}()
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		<-terminated
		host, port, err := net.SplitHostPort(res.Address)
		if err != nil || (host != "127.0.0.1" && host != "::1") || port != strconv.Itoa(pgtest.Server(t).Port) {
			t.Errorf("address %q, want localhost's: 127.0.0.1 or ::1, port %d", res.Address, pgtest.Server(t).Port)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("%d name lookups for 3 clients and their reconnections, want 1", got)
		}
		if len(res.Outages) != 3 || res.Committed == 0 {
			t.Errorf("%d outages, %d committed; want 3 reconnections and transactions", len(res.Outages), res.Committed)
		}
		if tg.Config.Host != "localhost" {
			t.Errorf("the caller's target was changed: host %q", tg.Config.Host)
		}
	})

	t.Run("tls-name", func(t *testing.T) {
		// The pinned target still names the host, so TLS verifies the name, not the address.
		tg := parse(t, fmt.Sprintf("host=localhost port=%d sslmode=verify-full sslrootcert=system", pgtest.Server(t).Port))
		pinned, err := tg.ResolveOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if pinned.Config.Host != "localhost" || pinned.Config.TLSConfig == nil || pinned.Config.TLSConfig.ServerName != "localhost" {
			t.Errorf("pinned host %q, TLS server name %v; want localhost for both", pinned.Config.Host, pinned.Config.TLSConfig)
		}
		addrs, err := pinned.Config.LookupFunc(context.Background(), "localhost")
		if err != nil || len(addrs) != 1 || net.ParseIP(addrs[0]) == nil || !net.ParseIP(addrs[0]).IsLoopback() {
			t.Errorf("pinned lookup of localhost: %q, %v; want one loopback address", addrs, err)
		}
	})
}

// TestDNSFailureOnReconnect: name resolution fails while clients reconnect; the
// attempts are retried, counted as "dns: no such host", and the clients come back.
func TestDNSFailureOnReconnect(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	kvTable(t, dsn)
	tg := tcpTarget(t, dsn, "db.pgbakeoff.test")
	tg.Config.RuntimeParams["application_name"] = "dns-test"
	l := &lookups{name: "db.pgbakeoff.test"}
	tg.Config.LookupFunc = l.lookup
	var ivs series
	var healed atomic.Int64
	healedCh := make(chan struct{})
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{readScript()},
		Clients: 2, Duration: 3 * time.Second, MaxBackoff: 100 * time.Millisecond, Interval: 250 * time.Millisecond, OnInterval: ivs.add,
		OnWindow: func(open bool) {
			if !open {
				return
			}
			// Once the clients run, however long a loaded machine took to connect them.
			go func() {
				defer close(healedCh)
				time.Sleep(300 * time.Millisecond) // into the window: the fault's place
				l.broken.Store(true)
				pgtest.Query(t, dsn, "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = 'dns-test'")
				time.Sleep(500 * time.Millisecond) // the fault's length
				l.broken.Store(false)
				healed.Store(time.Now().UnixNano())
			}()
		}})
	if err != nil {
		t.Fatal(err)
	}
	<-healedCh
	dns := slices.IndexFunc(res.ConnectErrors, func(e driver.ConnectErrorCount) bool { return e.Cause == "dns: no such host" })
	if dns < 0 || res.ConnectErrors[dns].Count < 2 {
		t.Errorf("connect errors %+v, want repeated dns: no such host", res.ConnectErrors)
	}
	if len(res.Outages) != 2 {
		t.Errorf("outages %+v, want one per client", res.Outages)
	}
	for _, o := range res.Outages {
		if o.Cause != "57P01" || !o.Recovered || o.Attempts < 2 {
			t.Errorf("client %d: outage %+v, want 57P01, recovered after failed attempts", o.Client, o)
		}
	}
	if ivs.committedAfter(time.Unix(0, healed.Load())) == 0 {
		t.Error("no transaction committed after name resolution came back")
	}
}

// TestTooManyConnections: while the server refuses the clients' role any connection
// (SQLSTATE 53300), reconnection attempts are retried and counted apart from the
// transactions, and the clients come back once it admits them again.
func TestTooManyConnections(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	kvTable(t, dsn)
	role := "limited_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	pgtest.Query(t, dsn, "create role "+role+" login; grant select on kv to "+role)
	t.Cleanup(func() { pgtest.Query(t, dsn, "drop owned by "+role+"; drop role "+role) })
	tg := parse(t, dsn+" user="+role)
	var ivs series
	var admitted atomic.Int64
	// The refusal starts half a second into the run's window and lasts half a
	// second; the window is long enough for it on a busy machine, and the test
	// waits for it to end before it looks.
	limited := make(chan error, 1)
	limit := func() error {
		time.Sleep(500 * time.Millisecond) // the refusal's place
		// Two statements: in one, both share an implicit transaction, so a
		// terminated client could reconnect before the limit commits.
		for _, sql := range []string{"alter role " + role + " connection limit 0",
			"select count(pg_terminate_backend(pid)) from pg_stat_activity where usename = '" + role + "'"} {
			if err := exec(dsn, sql); err != nil {
				return err
			}
		}
		time.Sleep(500 * time.Millisecond) // the refusal's length
		err := exec(dsn, "alter role "+role+" connection limit -1")
		admitted.Store(time.Now().UnixNano())
		return err
	}
	res, err := driver.Run(context.Background(), driver.Config{Target: tg, Scripts: []*driver.Script{readScript()},
		Clients: 2, Duration: 4 * time.Second, MaxBackoff: 100 * time.Millisecond, Interval: 250 * time.Millisecond, OnInterval: ivs.add,
		OnWindow: func(open bool) {
			if open {
				go func() { limited <- limit() }()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-limited; err != nil {
		t.Fatal(err)
	}
	if len(res.ConnectErrors) != 1 || res.ConnectErrors[0].Cause != "53300" || res.ConnectErrors[0].Count < 2 {
		t.Errorf("connect errors %+v, want only 53300, repeatedly", res.ConnectErrors)
	}
	for _, e := range res.Errors {
		if e.SQLState == "53300" {
			t.Errorf("error %+v: a refused connection counted as a transaction", e)
		}
	}
	if len(res.Outages) != 2 {
		t.Errorf("outages %+v, want one per client", res.Outages)
	}
	for _, o := range res.Outages {
		if !o.Recovered || o.Attempts < 2 {
			t.Errorf("client %d: outage %+v, want recovered after refused attempts", o.Client, o)
		}
	}
	if ivs.committedAfter(time.Unix(0, admitted.Load())) == 0 {
		t.Error("no transaction committed after the role was admitted again")
	}
}

// TestServerShuttingDownAtStart: a server that refuses connections with 57P03 (here
// in a smart shutdown that waits for a session) is tried again before the run
// starts, for the outage timeout, and the error then says so; a missing database
// fails at once.
func TestServerShuttingDownAtStart(t *testing.T) {
	pgtest.Long(t)
	s := pgtest.OwnServer(t)
	dsn := s.Server().TCPDSN()
	kvTable(t, dsn)
	ctx := context.Background()
	missing := parse(t, dsn+" dbname=no_such_database")
	start := time.Now()
	_, err := driver.Run(ctx, driver.Config{Target: missing, Scripts: []*driver.Script{readScript()},
		Clients: 1, Duration: time.Second, OutageTimeout: 5 * time.Second})
	if err == nil || connfail.Cause(err) != "3D000" || time.Since(start) > 2*time.Second {
		t.Errorf("missing database: %v after %s, want 3D000 at once", err, time.Since(start))
	}

	held, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	srv := s.Server()
	if err := srv.Signal(syscall.SIGTERM); err != nil { // smart shutdown
		t.Fatal(err)
	}
	t.Cleanup(func() {
		held.Close(ctx)
		for deadline := time.Now().Add(10 * time.Second); srv.Running() && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		}
		if err := s.Restart(); err != nil { // for the cleanup's stop
			t.Error(err)
		}
	})
	pgtest.WaitRefused(t, dsn, "57P03")
	start = time.Now()
	_, err = driver.Run(ctx, driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{readScript()},
		Clients: 2, Duration: time.Second, OutageTimeout: time.Second, MaxBackoff: 100 * time.Millisecond})
	took := time.Since(start)
	if err == nil || connfail.Cause(err) != "57P03" || !strings.Contains(err.Error(), "tried ") {
		t.Fatalf("server shutting down: %v, want 57P03 after retries", err)
	}
	if took < time.Second || took > 5*time.Second {
		t.Errorf("gave up after %s, want about the 1s outage timeout", took)
	}
}

// exec runs one statement on its own connection, for goroutines that may not fail
// the test themselves.
func exec(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql).ReadAll()
	return err
}
