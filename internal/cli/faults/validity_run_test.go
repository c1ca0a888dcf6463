package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// faultSummary is what these tests read of run --json.
type faultSummary struct {
	Status       string  `json:"status"`
	Transactions int64   `json:"transactions"`
	Reconnects   int     `json:"reconnects"`
	OutageS      float64 `json:"outage_s"`
	Outages      []struct {
		Cause     string `json:"cause"`
		Recovered bool   `json:"recovered"`
	} `json:"outages"`
	ConnectErrors []struct {
		Cause string `json:"cause"`
		Count int64  `json:"count"`
	} `json:"connect_errors"`
	Flags []struct {
		Name    string `json:"name"`
		Invalid bool   `json:"invalid"`
		Reason  string `json:"reason"`
	} `json:"flags"`
}

func (s faultSummary) flagged(name string) bool {
	for _, f := range s.Flags {
		if f.Name == name && f.Invalid {
			return true
		}
	}
	return false
}

// TestServerFaults: the server is killed or stopped in the middle of a run. The run
// goes on through a restart, records each outage with its cause and is flagged; a
// server that stays away ends the run early, marked incomplete, with what was
// measured kept.
func TestServerFaults(t *testing.T) {
	pgtest.Long(t)
	shared := pgtest.Server(t)
	tests := []struct {
		name    string
		fault   func(srv *localpg.Server) error
		restart bool
		args    []string
		code    int
		check   func(t *testing.T, sum faultSummary)
	}{
		{"stop and restart", func(srv *localpg.Server) error { return srv.Stop(context.Background()) }, true,
			[]string{"--duration", "6s"}, 0, func(t *testing.T, sum faultSummary) {
				if !sum.flagged("restarted") || sum.Status != "completed" {
					t.Errorf("want a completed run flagged restarted")
				}
			}},
		{"SIGKILL and restart", func(srv *localpg.Server) error { return srv.Signal(syscall.SIGKILL) }, true,
			[]string{"--duration", "6s"}, 0, func(t *testing.T, sum faultSummary) {
				if !sum.flagged("restarted") || len(sum.ConnectErrors) == 0 {
					t.Errorf("want a run flagged restarted, with failed connection attempts counted")
				}
			}},
		{"stopped for good", func(srv *localpg.Server) error { return srv.Stop(context.Background()) }, false,
			[]string{"--duration", "30s", "--outage-timeout", "1s"}, cli.ExitError, func(t *testing.T, sum faultSummary) {
				if sum.Status != "incomplete" || !sum.flagged("incomplete") {
					t.Errorf("want an incomplete run flagged incomplete")
				}
				for _, o := range sum.Outages {
					if o.Recovered {
						t.Errorf("an outage recovered from a server that never came back: %+v", o)
					}
				}
			}},
		// The outage timeout (2m by default) outlasts the window: the run still ends
		// on time, but incomplete, since its server never came back.
		{"stopped for good within the outage timeout", func(srv *localpg.Server) error { return srv.Stop(context.Background()) }, false,
			[]string{"--duration", "5s"}, cli.ExitError, func(t *testing.T, sum faultSummary) {
				if sum.Status != "incomplete" || !sum.flagged("incomplete") {
					t.Errorf("want an incomplete run flagged incomplete")
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Each case has a server of its own and spends its time waiting on
			// it: stopped, starting again, or gone for the outage timeout.
			t.Parallel()
			base, opts, srv := startLoadedServer(t, shared, "fault")
			t.Cleanup(func() { _ = srv.Stop(context.Background()) })
			dsn := srv.TCPDSN()
			type result struct {
				code        int
				out, errOut string
			}
			done := make(chan result, 1)
			start := time.Now()
			go func() {
				args := append([]string{"run", "tpcb", "--clients", "2", "--json", "--results", filepath.Join(base, "r.db"), "--dsn", dsn}, tc.args...)
				code, out, errOut := run(t, args...)
				done <- result{code, out, errOut}
			}()
			waitClients(t, dsn, 2, done)
			time.Sleep(time.Second) // into the run's window: the fault's place, not a wait for something
			if err := tc.fault(srv); err != nil {
				t.Fatal(err)
			}
			if tc.restart {
				time.Sleep(500 * time.Millisecond) // the outage's length: connections refused meanwhile
				opts.Port = srv.Port
				restarted, err := localpg.Start(t.Context(), opts)
				if err != nil {
					t.Fatal(err)
				}
				srv = restarted
			}
			r := <-done
			var sum faultSummary
			if err := json.Unmarshal([]byte(r.out), &sum); err != nil {
				t.Fatalf("exit %d, no JSON summary: %v\n%s%s", r.code, err, r.out, r.errOut)
			}
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.code, r.errOut)
			}
			if elapsed := time.Since(start); elapsed > 15*time.Second {
				t.Errorf("the run took %s", elapsed)
			}
			if sum.Transactions == 0 || sum.Reconnects == 0 || sum.OutageS <= 0 || len(sum.Outages) == 0 {
				t.Errorf("want transactions kept and the outages recorded: %+v", sum)
			}
			for _, o := range sum.Outages {
				if o.Cause == "" || strings.Contains(o.Cause, "other") {
					t.Errorf("outage without a known cause: %+v", o)
				}
			}
			tc.check(t, sum)
			if t.Failed() {
				t.Logf("summary: %+v\nstderr: %s", sum, r.errOut)
			}
		})
	}
}

// TestServerShuttingDownAtRunStart: a run that begins while the server refuses
// connections with 57P03 (a smart shutdown waiting for a session) waits for it up to
// --outage-timeout, says so, and then fails with one line naming the cause.
func TestServerShuttingDownAtRunStart(t *testing.T) {
	pgtest.Long(t)
	base, _, srv := startLoadedServer(t, pgtest.Server(t), "shutdown")
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	dsn := srv.TCPDSN()
	held, err := pgconn.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close(context.Background())
	if err := srv.Signal(syscall.SIGTERM); err != nil { // smart shutdown
		t.Fatal(err)
	}
	pgtest.WaitRefused(t, dsn, "57P03")
	start := time.Now()
	code, out, errOut := run(t, "run", "tpcb", "--duration", "1s", "--outage-timeout", "1s", "--results", filepath.Join(base, "r.db"), "--dsn", dsn)
	if code == 0 || !strings.Contains(errOut, "waiting up to 1s") || !strings.Contains(errOut, "57P03") || !strings.Contains(errOut, "times over") {
		t.Errorf("run against a server shutting down: exit %d, want a wait and then an error naming 57P03\n%s%s", code, out, errOut)
	}
	if took := time.Since(start); took < time.Second || took > 10*time.Second {
		t.Errorf("gave up after %s, want about the 1s outage timeout", took)
	}
	if strings.Contains(errOut, "goroutine ") {
		t.Errorf("stack trace in the output:\n%s", errOut)
	}
}

// waitClients waits until at least n clients of a run are connected to the server
// at dsn, or the run has ended (done holds its result then, put back).
func waitClients[T any](t *testing.T, dsn string, n int, done chan T) {
	t.Helper()
	connected := fmt.Sprintf("select count(*) >= %d from pg_stat_activity where application_name like 'pgbakeoff-run-%%'", n)
	for deadline := time.Now().Add(time.Minute); pgtest.Query(t, dsn, connected) != "t"; {
		if time.Now().After(deadline) {
			t.Fatal("the run's clients did not connect within a minute")
		}
		select {
		case r := <-done:
			done <- r
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startLoadedServer starts a server of the test's own, under a fresh directory
// (returned, with the options that start it again), loaded with TPC-B scale 1.
func startLoadedServer(t *testing.T, shared *localpg.Server, name string) (string, localpg.Options, *localpg.Server) {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := localpg.Options{Name: name, BaseDir: base,
		Install:  &localpg.Install{BinDir: shared.BinDir, Version: shared.Version, Major: shared.Major},
		Settings: []localpg.Setting{{Name: "fsync", Value: "off"}}}
	srv, err := localpg.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", srv.TCPDSN()); code != 0 {
		_ = srv.Stop(context.Background())
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	return base, opts, srv
}

// TestContaminatedRuns: two runs on one database at once each measure about half of
// what one would. Both are invalid, for the commits the server counted beyond their
// own and for the other's sessions seen at work in the database.
func TestContaminatedRuns(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	results := filepath.Join(t.TempDir(), "r.db")
	type result struct {
		code        int
		out, errOut string
	}
	// Each in a process of its own, as two users' runs would be: in one process they
	// would share its GOMAXPROCS, and the sessions would mostly wait for their clients.
	// Windows long enough that the two overlap however late one process starts.
	args := []string{"run", "tpcb", "--script", "select-only", "--clients", "2", "--duration", "6s",
		"--json", "--results", results, "--dsn", dsn}
	done := make(chan result, 2)
	for range 2 {
		cmd := clitest.Command(t, args)
		go func() {
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			done <- result{code, stdout.String(), stderr.String()}
		}()
	}
	for range 2 {
		r := <-done
		clitest.FitsSchema(t, "run", []byte(r.out))
		var sum faultSummary
		if err := json.Unmarshal([]byte(r.out), &sum); err != nil {
			t.Fatalf("exit %d, no JSON summary: %v\n%s%s", r.code, err, r.out, r.errOut)
		}
		if !sum.flagged("contaminated") {
			t.Errorf("a run sharing its database with another is not flagged contaminated: %+v", sum.Flags)
		}
		var reasons []string
		for _, f := range sum.Flags {
			reasons = append(reasons, f.Reason)
		}
		all := strings.Join(reasons, "\n")
		// The other run's sessions are named, as active throughout or now and then:
		// how much the two windows overlapped is up to the processes' start.
		for _, want := range []string{"more than the clients made", "other sessions were", "pgbakeoff-run-"} {
			if !strings.Contains(all, want) {
				t.Errorf("flags do not say %q:\n%s\n%s%s", want, all, r.out, r.errOut)
			}
		}
	}
	// Neither counts in a comparison.
	code, out, errOut := run(t, "compare", "1", "2", "--results", results)
	if code == 0 && !strings.Contains(out+errOut, "contaminated") {
		t.Errorf("compare of two contaminated runs does not say so: exit %d\n%s%s", code, out, errOut)
	}
}

// TestControlSessionLost: every session in the database is terminated mid-run, the
// control session's too. The clients reconnect, the control session is opened again,
// and the server's commits are read and agree; never "server 0".
func TestControlSessionLost(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	results := filepath.Join(t.TempDir(), "r.db")
	// Half a second after the run's two clients are connected, however long a loaded
	// machine takes to prepare the run.
	db := pgtest.Query(t, dsn, "select current_database()")
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for pgtest.Query(t, pgtest.DSN(t), "select count(*) >= 2 from pg_stat_activity where datname = '"+db+"' and application_name like 'pgbakeoff-run-%'") != "t" {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		time.Sleep(500 * time.Millisecond) // the fault's place in the run
		pgtest.Query(t, pgtest.DSN(t), "select pg_terminate_backend(pid) from pg_stat_activity where datname = '"+db+"'")
	}()
	code, out, errOut := run(t, "run", "tpcb", "--script", "select-only", "--clients", "2", "--duration", "4s", "--results", results, "--dsn", dsn)
	close(stop)
	<-done
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "reconnects:") {
		t.Fatalf("the clients' sessions were not terminated:\n%s", out)
	}
	if strings.Contains(out, "server 0 ") || strings.Contains(out, "not read") {
		t.Errorf("the server's commits were not read after the control session was lost:\n%s%s", out, errOut)
	}
	if strings.Contains(out, "contaminated") {
		t.Errorf("a run whose sessions were terminated is called contaminated:\n%s", out)
	}
}
