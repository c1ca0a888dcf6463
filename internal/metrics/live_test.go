package metrics_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/metrics"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/studyrun"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/spf13/pflag"
)

// secret is the password the runs' DSNs carry: no label or value may hold it.
const secret = "Sw0rdfish-metrics-7f3"

// withPassword is dsn with a password; the test server trusts its local
// connections, so it is sent nowhere but must show nowhere either.
func withPassword(t *testing.T, dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(u.User.Username(), secret)
		return u.String()
	}
	return dsn + " password=" + secret
}

// spec is a run of the named workload with its options given as flags.
func spec(t *testing.T, name, dsn string, clients int, opts ...string) engine.Spec {
	w, ok := workload.Find(name)
	if !ok {
		t.Fatalf("no workload %s", name)
	}
	s := engine.NewSpec()
	s.Workload = w.NewRun()
	s.Settings = workload.Settings(s.Workload)
	if o, ok := s.Workload.(workload.Options); ok {
		fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
		o.Flags(fs)
		if err := fs.Parse(opts); err != nil {
			t.Fatal(err)
		}
	}
	s.Clients, s.Warmup, s.Duration = clients, time.Second, 5*time.Second
	tgt, err := target.Parse(withPassword(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	s.Target = tgt
	return s
}

// scrape is one answer of the endpoint, as text and parsed.
type scrape struct {
	raw      []byte
	families map[string]*dto.MetricFamily
}

func get(t *testing.T, addr, accept string) ([]byte, expfmt.Format) {
	req, err := http.NewRequest("GET", "http://"+addr+metrics.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s %v\n%s", resp.Status, err, b)
	}
	return b, expfmt.ResponseFormat(resp.Header)
}

func scrapeText(t *testing.T, addr string) scrape {
	b, _ := get(t, addr, "text/plain;version=0.0.4")
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parse the scrape: %v\n%s", err, b)
	}
	return scrape{b, fams}
}

// value sums the samples of a family whose labels hold all of want.
func (s scrape) value(name string, want map[string]string) float64 {
	var v float64
	f := s.families[name]
	if f == nil {
		return math.NaN()
	}
next:
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if w, ok := want[l.GetName()]; ok && w != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		}
	}
	return v
}

// scrapeDuring runs fn while scraping addr every 300 ms, and returns the
// scrapes taken while it ran and one after it returned.
func scrapeDuring(t *testing.T, addr string, fn func()) []scrape {
	done := make(chan struct{})
	var got []scrape
	go func() {
		defer close(done)
		fn()
	}()
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return append(got, scrapeText(t, addr))
		case <-tick.C:
			got = append(got, scrapeText(t, addr))
		}
	}
}

// checkRun compares the final scrape with the run's summary and stored
// intervals: counts equal, the live throughput within 5% of the stored, and no
// secret in any label or value.
func checkRun(t *testing.T, scrapes []scrape, sum *engine.Summary, results string, labels map[string]string) {
	t.Helper()
	final := scrapes[len(scrapes)-1]
	measure := map[string]string{"phase": "measure"}
	for k, v := range labels {
		measure[k] = v
	}
	var rolledBack int64
	for _, s := range sum.Scripts {
		rolledBack += s.RolledBack
		one := map[string]string{"script": s.Name}
		for k, v := range measure {
			one[k] = v
		}
		if got := final.value("pgbakeoff_transactions_total", one); got != float64(s.Transactions) {
			t.Errorf("script %s: %v transactions scraped, the summary has %d", s.Name, got, s.Transactions)
		}
	}
	for name, want := range map[string]int64{
		"pgbakeoff_transactions_total":          sum.Transactions,
		"pgbakeoff_failed_transactions_total":   sum.Failed,
		"pgbakeoff_retries_total":               sum.Retries,
		"pgbakeoff_retried_transactions_total":  sum.Retried,
		"pgbakeoff_rolled_back_total":           rolledBack,
		"pgbakeoff_transaction_latency_seconds": sum.Transactions + rolledBack,
	} {
		if got := final.value(name, measure); got != float64(want) {
			t.Errorf("%s{phase=measure} %v, the summary has %d", name, got, want)
		}
	}
	if got := final.value("pgbakeoff_reconnects_total", labels); got != float64(sum.Reconnects) {
		t.Errorf("%v reconnects scraped, the summary has %d", got, sum.Reconnects)
	}
	if got := final.value("pgbakeoff_outage_seconds_total", labels); math.Abs(got-sum.OutageS) > 0.05 {
		t.Errorf("%v s of outage scraped, the summary has %v", got, sum.OutageS)
	}
	if got := final.value("pgbakeoff_run_active", labels); got != 0 {
		t.Errorf("run_active %v once the run ended, want 0", got)
	}
	if sum.Transactions == 0 {
		t.Fatal("the run committed nothing")
	}

	// The live throughput, scraped during the window, against the interval the
	// store holds for it.
	st, err := store.OpenReadOnly(t.Context(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.Run(t.Context(), sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int]store.Interval{}
	for _, iv := range d.Intervals {
		stored[iv.Seq] = iv
	}
	compared := 0
	for _, s := range scrapes[:len(scrapes)-1] {
		n := s.value("pgbakeoff_intervals_total", labels)
		iv, ok := stored[int(n)-1]
		if !ok || iv.Phase != store.PhaseMeasure {
			continue
		}
		live := s.value("pgbakeoff_throughput_tps", labels)
		if math.Abs(live-iv.TPS) > 0.05*iv.TPS {
			t.Errorf("interval %d: %.1f tps scraped, %.1f stored", iv.Seq, live, iv.TPS)
		}
		compared++
	}
	if compared < 2 {
		t.Errorf("%d scrapes fell in the window; want the live rate compared at least twice", compared)
	}

	for i, s := range scrapes {
		if bytes.Contains(s.raw, []byte(secret)) || bytes.Contains(bytes.ToLower(s.raw), []byte("password")) {
			t.Fatalf("scrape %d holds the password:\n%s", i, s.raw)
		}
		for _, f := range s.families {
			for _, m := range f.Metric {
				for _, l := range m.Label {
					if strings.Contains(l.GetValue(), "dbname=") || strings.Contains(l.GetValue(), "://") {
						t.Errorf("%s's label %s=%q is a DSN", f.GetName(), l.GetName(), l.GetValue())
					}
				}
			}
		}
	}
}

func listen(t *testing.T) *metrics.Server {
	srv, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func initData(t *testing.T, dsn string, args ...string) {
	if code, out, errOut := clitest.Run(t, append(append([]string{"init"}, args...), "--dsn", dsn)...); code != 0 {
		t.Fatalf("init %v: exit %d\n%s%s", args, code, out, errOut)
	}
}

func runWith(s engine.Spec, srv *metrics.Server, results string) (*engine.Summary, error) {
	open := func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, results) }
	return engine.Run(context.Background(), s, engine.Env{OpenStore: open, Metrics: srv})
}

// TestRunsScraped scrapes the endpoint during TPC-B and TPC-C runs whose DSN
// holds a password, and compares the figures with the runs' summaries.
func TestRunsScraped(t *testing.T) {
	pgtest.Long(t)
	for _, c := range []struct {
		name string
		init []string
		run  []string
	}{
		{"tpcb", []string{"tpcb", "--scale", "1"}, nil},
		{"tpcc", []string{"tpcc", "--warehouses", "1"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn := pgtest.NewDatabase(t)
			initData(t, dsn, c.init...)
			srv := listen(t)
			results := filepath.Join(t.TempDir(), "r.db")
			var sum *engine.Summary
			var err error
			s := spec(t, c.name, dsn, 4, c.run...)
			scrapes := scrapeDuring(t, srv.Addr(), func() { sum, err = runWith(s, srv, results) })
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, scrapes, sum, results, map[string]string{"workload": c.name, "clients": "4", "shard": ""})
			final := scrapes[len(scrapes)-1]
			if got := final.value("pgbakeoff_server_commits_total", nil); !(got > 0) {
				t.Errorf("server commits %v scraped; want the sampler's", got)
			}
			if got := final.value("pgbakeoff_server_wal_bytes_total", nil); !(got > 0) {
				t.Errorf("server WAL bytes %v scraped; want the sampler's", got)
			}
			checkNative(t, srv.Addr(), sum)
		})
	}
}

// checkNative asks for the protocol buffer format, as a Prometheus with native
// histograms does: the latency histograms carry native buckets that add up to
// their counts, beside the classic ones.
func checkNative(t *testing.T, addr string, sum *engine.Summary) {
	b, format := get(t, addr, string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	if format.FormatType() != expfmt.TypeProtoDelim {
		t.Fatalf("asked for the protocol buffer format, got %s", format)
	}
	dec := expfmt.NewDecoder(bytes.NewReader(b), format)
	seen := 0
	for {
		var f dto.MetricFamily
		if err := dec.Decode(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if f.GetName() != "pgbakeoff_transaction_latency_seconds" {
			continue
		}
		for _, m := range f.Metric {
			h := m.Histogram
			var n int64
			var count int64
			for _, d := range h.PositiveDelta {
				count += d
				n += count
			}
			if h.GetSchema() != 3 || uint64(n)+h.GetZeroCount() != h.GetSampleCount() || len(h.Bucket) == 0 {
				t.Errorf("%v: schema %d, native buckets hold %d, count %d, %d classic buckets", m.Label, h.GetSchema(), n, h.GetSampleCount(), len(h.Bucket))
			}
			if h.GetSampleCount() > 0 {
				seen++
			}
		}
	}
	if seen == 0 {
		t.Errorf("no latency histogram with transactions in the protocol buffer scrape (summary: %d transactions)", sum.Transactions)
	}
}

// TestShardsScraped: two shards of one run in one process share the endpoint,
// told apart by their shard label; each one's figures are its summary's.
func TestShardsScraped(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	initData(t, dsn, "tpcb", "--scale", "1")
	srv := listen(t)
	dir := t.TempDir()
	start := time.Now().Add(3 * time.Second)
	sums := make([]*engine.Summary, 2)
	errs := make([]error, 2)
	specs := make([]engine.Spec, 2)
	for i := range specs {
		specs[i] = spec(t, "tpcb", dsn, 4, "--script", "select-only")
		specs[i].Shard, specs[i].StartAt, specs[i].ShardGroup = engine.Shard{Index: i, Count: 2}, start, "scraped"
	}
	scrapes := scrapeDuring(t, srv.Addr(), func() {
		var wg sync.WaitGroup
		for i := range sums {
			wg.Go(func() { sums[i], errs[i] = runWith(specs[i], srv, filepath.Join(dir, fmt.Sprintf("shard%d.db", i))) })
		}
		wg.Wait()
	})
	for i := range sums {
		if errs[i] != nil {
			t.Fatalf("shard %d: %v", i, errs[i])
		}
		t.Run(fmt.Sprintf("shard=%d", i), func(t *testing.T) {
			checkRun(t, scrapes, sums[i], filepath.Join(dir, fmt.Sprintf("shard%d.db", i)),
				map[string]string{"workload": "tpcb", "clients": "4", "shard": fmt.Sprintf("%d/2", i)})
		})
	}
	final := scrapes[len(scrapes)-1]
	// Shard 0 alone samples the server.
	if got := final.value("pgbakeoff_server_commits_total", map[string]string{"shard": "1/2"}); got != 0 {
		t.Errorf("shard 1 has %v server commits; only shard 0 samples the server", got)
	}
	if got := final.value("pgbakeoff_server_commits_total", map[string]string{"shard": "0/2"}); !(got > 0) {
		t.Errorf("shard 0 has %v server commits; want the sampler's", got)
	}
}

// TestStudyScraped: a study's load, its progress and its run, scraped as it goes:
// the load's rows all copied, every run of the plan made, and the run's figures
// under the study's target and workload names.
func TestStudyScraped(t *testing.T) {
	pgtest.Long(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "scraped.yaml")
	name := fmt.Sprintf("scraped-%d", time.Now().UnixNano())
	clitest.WriteFile(t, file, fmt.Sprintf(`name: %s
targets:
  - name: here
    dsn: %q
workloads:
  - name: rw
    kind: tpcb
    load: {scale: 1}
matrix: {clients: [2], warmup: 0s, duration: 3s, repeat: 1}
`, name, pgtest.DSN(t)))
	results := filepath.Join(dir, "results.db")
	srv := listen(t)
	var out bytes.Buffer
	sr := &studyrun.Runner{Results: results, Metrics: srv, Out: &out, Log: &out, Now: time.Now,
		OpenStore:   func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, results) },
		OpenReading: func(ctx context.Context) (*store.Store, error) { return store.OpenReadOnly(ctx, results) }}
	var err error
	scrapes := scrapeDuring(t, srv.Addr(), func() { err = sr.Run(context.Background(), file) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	final := scrapes[len(scrapes)-1]
	study := map[string]string{"study": name}
	if p, m, f := final.value("pgbakeoff_study_runs_planned", study), final.value("pgbakeoff_study_runs_made", study),
		final.value("pgbakeoff_study_runs_failed", study); p != 1 || m != 1 || f != 0 {
		t.Errorf("study progress: %v planned, %v made, %v failed; want 1, 1, 0", p, m, f)
	}
	cell := map[string]string{"target": "here", "workload": "rw"}
	if done, total := final.value("pgbakeoff_load_done", cell), final.value("pgbakeoff_load_total", cell); !(done > 0) || done != total {
		t.Errorf("load: %v of %v rows; want every row copied", done, total)
	}
	active := false
	for _, s := range scrapes {
		active = active || s.value("pgbakeoff_run_active", cell) == 1
	}
	measure := map[string]string{"target": "here", "workload": "rw", "clients": "2", "phase": "measure"}
	if got := final.value("pgbakeoff_transactions_total", measure); !active || !(got > 0) {
		t.Errorf("the study's run: active in a scrape %v, %v transactions; want it seen running and committing", active, got)
	}
}

// TestLoadsScraped: `init` and `pgbench -i` serve their load's progress while
// they copy: the rows done never above the total, under the target's address
// and database, never its DSN or password.
func TestLoadsScraped(t *testing.T) {
	pgtest.Long(t)
	for _, c := range []struct {
		name string
		args func(dsn, addr string) []string
	}{
		{"init", func(dsn, addr string) []string {
			return []string{"init", "tpcb", "--scale", "3", "--metrics-listen", addr, "--dsn", dsn}
		}},
		{"pgbench-i", func(dsn, addr string) []string {
			return []string{"pgbench", "-i", "-s", "3", "-q", "--metrics-listen", addr, dsn}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn := pgtest.NewDatabase(t)
			tg, err := target.Parse(dsn)
			if err != nil {
				t.Fatal(err)
			}
			addr := freeAddr(t)
			done := make(chan struct{})
			var code int
			var out, errOut string
			go func() {
				defer close(done)
				code, out, errOut = clitest.Run(t, c.args(withPassword(t, dsn), addr)...)
			}()
			cell := map[string]string{"target": tg.Address() + "/" + tg.Config.Database, "workload": "tpcb"}
			var seen []float64 // the rows done, scrape by scrape, once planned
			for running := true; running; {
				select {
				case <-done:
					running = false
				case <-time.After(50 * time.Millisecond):
				}
				b, ok := tryScrape(addr)
				if !ok {
					continue // not listening yet, or gone
				}
				if bytes.Contains(b, []byte(secret)) {
					t.Fatalf("a scrape holds the password:\n%s", b)
				}
				var p expfmt.TextParser
				fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("parse the scrape: %v\n%s", err, b)
				}
				s := scrape{b, fams}
				// The total is 0 until the load has planned its copies.
				if d, total := s.value("pgbakeoff_load_done", cell), s.value("pgbakeoff_load_total", cell); total > 0 {
					if total != 300033 || d > total {
						t.Errorf("%v of %v rows; want at most the 300,033 of scale 3 (its accounts, tellers and branches)", d, total)
					}
					seen = append(seen, d)
				}
			}
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if len(seen) == 0 {
				t.Fatalf("no scrape during the load showed it under %v", cell)
			}
		})
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// tryScrape is one text answer of the endpoint at addr, if it answers.
func tryScrape(addr string) ([]byte, bool) {
	resp, err := http.Get("http://" + addr + metrics.Path)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, err == nil && resp.StatusCode == http.StatusOK
}
