//go:build unix

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
)

// crasher crashes a test's own server and starts it again: a crash fault.
type crasher struct{ own *pgtest.Own }

func (c crasher) Can(kind engine.FaultKind) error {
	if kind != engine.FaultCrash {
		return errors.New("the test server only crashes")
	}
	return nil
}

func (c crasher) Inject(ctx context.Context, kind engine.FaultKind) (engine.ServerEvents, error) {
	var ev engine.ServerEvents
	if err := c.own.Kill(); err != nil {
		return ev, err
	}
	ev.Stopped = time.Now()
	err := c.own.Restart()
	ev.Ready = time.Now()
	return ev, err
}

// TestRecoveryFromCrash: a server killed 2 s into a TPC-B run and started again,
// then again 3 s later. The clients fail, go without commits for as long as the
// server is away, and come back to the throughput they had; the ledger's
// commits are all there, the server committing each before acknowledging it,
// each crash with its share of them; the run is flagged as one of recovery.
func TestRecoveryFromCrash(t *testing.T) {
	pgtest.Long(t)
	own := pgtest.OwnServer(t, localpgSetting("synchronous_commit", "on"))
	dsn := own.Server().TCPDSN()
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", dsn); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	tg, err := target.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	spec := engine.NewSpec()
	spec.Target, spec.Workload, spec.Clients = tg, tpcb.Workload{}.NewRun(), 4
	spec.Duration, spec.OutageTimeout = 8*time.Second, 30*time.Second
	spec.Faults = []engine.Fault{{At: 5 * time.Second, Kind: engine.FaultCrash}, {At: 2 * time.Second, Kind: engine.FaultCrash}}
	results := filepath.Join(t.TempDir(), "r.db")
	var log strings.Builder
	env := engine.Env{Injector: crasher{own}, Log: &log, Out: io.Discard,
		OpenStore: func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, results) }}
	sum, err := engine.Run(t.Context(), spec, env)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var text strings.Builder
	sum.WriteText(&text)
	t.Log(text.String())
	if len(sum.Faults) != 2 {
		t.Fatalf("faults %+v, want the two crashes", sum.Faults)
	}
	for i, f := range sum.Faults {
		switch {
		case !f.Done || f.Error != "" || f.ServerReadyMs == nil:
			t.Errorf("crash %d was not done: %+v", i+1, f)
		case f.FirstFailureMs < 0 || f.FirstFailureMs > 1000:
			t.Errorf("first failure %.0f ms after crash %d, want within a second", f.FirstFailureMs, i+1)
		case f.NoCommitsMs <= 0 || f.NoCommitsMs > *f.ServerReadyMs+2000:
			t.Errorf("no commits for %.0f ms, the server back after %.0f ms", f.NoCommitsMs, *f.ServerReadyMs)
		case f.RecoveredMs < f.NoCommitsMs-1000:
			t.Errorf("back to 90%% after %.0f ms, before the commits resumed (%.0f ms without)", f.RecoveredMs, f.NoCommitsMs)
		case f.BeforeTPS <= 0 || len(f.Errors) == 0 || f.InDoubt == 0:
			t.Errorf("before %.1f tps, errors %v, %d in doubt: want a throughput and the transactions lost with the server", f.BeforeTPS, f.Errors, f.InDoubt)
		}
	}
	// Each crash has its share of the ledger's commits: about 50 a second
	// before the first, and from it to the run's end for the second (the
	// summary keeps the faults in the order given).
	first, second := sum.Faults[1].Ledger, sum.Faults[0].Ledger
	if first == nil || second == nil || first.Lost != 0 || second.Lost != 0 || first.Acknowledged < 50 || second.Acknowledged < first.Acknowledged {
		t.Errorf("ledger shares %+v and %+v: want about 50 commits a second before the first crash, more after it, none lost", first, second)
	}
	if !hasFlag(sum.Flags, "fault") {
		t.Errorf("flags %+v: the run is not flagged as one with a fault", sum.Flags)
	}
	for _, want := range []string{"fault 1: crash at 5.0 s", "fault 2: crash at 2.0 s", "clients: first failure after", "ledger: "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	// The ledger's rows are counted and gone; its commits are not taken for
	// another session's.
	if n := pgtest.Query(t, own.Server().DSN(), "select count(*) from pgbakeoff_ledger"); n != "0" {
		t.Errorf("%s ledger rows left", n)
	}
	if hasFlag(sum.Flags, "contaminated") {
		t.Errorf("the ledger's commits were taken for another session's: %+v", sum.Flags)
	}
}

// TestFaultCommand: a command fault runs the user's command at its time, here one
// that ends the run's sessions, and keeps its output and exit code with the run.
func TestFaultCommand(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", dsn); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	results := filepath.Join(t.TempDir(), "r.db")
	kill := fmt.Sprintf(`psql -X -A -t "%s" -c "select count(pg_terminate_backend(pid)) > 0 from pg_stat_activity where application_name like 'pgbakeoff-run-%%' and pid <> pg_backend_pid()"`, dsn)
	code, out, errOut := run(t, "run", "tpcb", "--clients", "2", "--duration", "4s", "--dsn", dsn, "--results", results,
		"--fault", "at=2s,kind=command,command="+kill)
	if code != 0 || !strings.Contains(out, "fault 1: command at 2.0 s") || !strings.Contains(out, "INVALID (fault)") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, js, _ := run(t, "show", "1", "--json", "--results", results)
	if code != 0 || !strings.Contains(js, `"output": "t\n"`) || !strings.Contains(js, `"kind": "command"`) {
		t.Errorf("show: exit %d, the command's output not kept\n%s", code, js)
	}
	// A command that fails is recorded so, and the run goes on.
	code, out, errOut = run(t, "run", "tpcb", "--clients", "1", "--duration", "2s", "--dsn", dsn, "--results", results,
		"--fault", "at=1s,kind=command,command=echo no; exit 3")
	if code != 0 || !strings.Contains(out, "failed: the command exited with 3") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

func hasFlag(flags []engine.Flag, name string) bool {
	for _, f := range flags {
		if f.Name == name {
			return true
		}
	}
	return false
}

func localpgSetting(name, value string) localpg.Setting {
	return localpg.Setting{Name: name, Value: value}
}

// TestFaultSlots: a run with faults needs a connection slot for its ledger
// beside the clients' and pgbakeoff's monitoring sessions. Clients that fill
// every free slot but those are refused before anything connects when the run
// has a fault, and fit when it has none.
func TestFaultSlots(t *testing.T) {
	pgtest.Long(t)
	own := pgtest.OwnServer(t, localpgSetting("max_connections", "12"))
	tg, err := target.Parse(own.Server().TCPDSN())
	if err != nil {
		t.Fatal(err)
	}
	info, err := tg.Inspect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	clients := info.FreeSlots() - target.MonitorConns
	spec := engine.NewSpec()
	spec.Target, spec.Workload, spec.Clients, spec.Duration = tg, tpcb.Workload{}.NewRun(), clients, 5*time.Second
	spec.Faults = []engine.Fault{{At: time.Second, Kind: engine.FaultCommand, Command: "true"}}
	results := filepath.Join(t.TempDir(), "r.db")
	env := engine.Env{Out: io.Discard, Log: io.Discard,
		OpenStore: func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, results) }}
	want := fmt.Sprintf("%d clients need %d connection slots (%d more for pgbakeoff's own sessions)", clients, clients+target.MonitorConns+1, target.MonitorConns+1)
	if _, err := engine.Run(t.Context(), spec, env); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a run with a fault and %d clients on %d free slots: %v; want %q", clients, info.FreeSlots(), err, want)
	}
	// Without the fault they fit: the run goes on past the slots, to the data
	// this server lacks. A session that holds a slot when the run begins and
	// closes soon after, as the last run's may, is waited for.
	spec.Faults = nil
	held, err := pgconn.Connect(t.Context(), own.Server().TCPDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close(context.Background())
	waiting := make(chan struct{})
	env.Log = &lineWatch{want: "waiting up to", seen: waiting}
	go func() {
		select {
		case <-waiting: // the run found the slot taken: its owner is done with it now
			held.Close(context.Background())
		case <-t.Context().Done():
		}
	}()
	if _, err := engine.Run(t.Context(), spec, env); err == nil || strings.Contains(err.Error(), "connection slots") {
		t.Errorf("a run without a fault and %d clients on %d free slots, one held until the run waits for it: %v; want the slots to suffice", clients, info.FreeSlots(), err)
	}
	select {
	case <-waiting:
	default:
		t.Error("the run did not say it waited for a slot")
	}
}

// lineWatch closes seen the first time a write holds want.
type lineWatch struct {
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWatch) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}
