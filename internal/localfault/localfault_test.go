//go:build unix

package localfault_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localfault"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/recovery"
	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// ledgerOn starts a ledger on the cluster's read-write DSN, which follows the
// primary.
func ledgerOn(t *testing.T, c *localpg.Cluster) *recovery.Ledger {
	t.Helper()
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, c.DSN()) }
	l, err := recovery.StartLedger(t.Context(), connect, "test", 100)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// walSender is the primary's WAL sender process, streaming to its standby.
func walSender(t *testing.T, primary *localpg.Server) int {
	t.Helper()
	pid, err := strconv.Atoi(pgtest.Query(t, primary.DSN(), "select pid from pg_stat_replication"))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitAcked waits until the ledger has n more acknowledged commits than before.
func waitAcked(t *testing.T, l *recovery.Ledger, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := l.WaitCommits(ctx, l.Commits()+n); err != nil {
		t.Fatal(err)
	}
}

// failoverWithSenderStopped stops the primary's WAL sender, so that what the
// primary writes from then on reaches no standby, lets the ledger go on for a
// while (wait), kills the primary, and promotes the standby with the injector's
// own steps. It returns when the sender stopped and when the primary was gone.
func failoverWithSenderStopped(t *testing.T, c *localpg.Cluster, wait func()) (stopped, killed time.Time) {
	t.Helper()
	primary := c.Nodes[0]
	sender := walSender(t, primary)
	if err := syscall.Kill(sender, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped = time.Now()
	wait()
	in := localfault.Injector{Cluster: c, Log: t.Logf}
	done := make(chan error, 1)
	go func() {
		_, err := in.Inject(t.Context(), engine.FaultFailover)
		done <- err
	}()
	// Killed with its postmaster, the sender goes once it may run again.
	for deadline := time.Now().Add(10 * time.Second); primary.Running(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the primary was not killed")
		}
	}
	killed = time.Now()
	if err := syscall.Kill(sender, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return stopped, killed
}

// TestLossWithAsyncStandby: with an asynchronous standby whose primary's WAL
// sender is stopped, the commits acknowledged meanwhile are on the primary
// alone; killed and failed over, exactly those are missing (but for one whose
// WAL left as the sender stopped), and the ledger finds them.
func TestLossWithAsyncStandby(t *testing.T) {
	pgtest.Long(t)
	t.Parallel() // a paced ledger on a cluster of its own: the test waits on it and on the failover
	c := pgtest.OwnCluster(t, 1, localpg.SyncOff)
	l := ledgerOn(t, c)
	waitAcked(t, l, 20)
	// The standby has everything so far before its receiver stops.
	waitCaughtUp(t, c)
	stopped, killed := failoverWithSenderStopped(t, c, func() { waitAcked(t, l, 30) })
	after := l.AckedAfter(stopped) - l.AckedAfter(killed)
	waitAcked(t, l, 20) // on the new primary
	// The old primary, whose WAL went past the promotion, was brought back as
	// a standby that receives what the new primary writes, not one that
	// streams the old timeline for a moment and stops, over and over.
	wctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := c.WaitStreaming(wctx, c.Nodes[0], c.Nodes[1]); err != nil {
		t.Errorf("the old primary does not follow the new one: %v", err)
	}
	l.Stop()
	r, err := l.Reckon(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// At the edge, one commit either way: the one whose answer was on its way
	// as the sender stopped may have had its WAL sent already and survive; the
	// one acknowledged just before may not have had it sent yet and be lost
	// (the ledger commits every 10 ms, so no more than one).
	if r.Lost < 30 || r.Lost > after+1 || r.Lost < after-1 || r.LostFrom.Before(stopped.Add(-r.Every)) || r.RPO() <= 0 {
		t.Errorf("reckoning %+v: want the %d commits acknowledged after the sender stopped at %s (one more or fewer at the edge), and no other", r, after, stopped.Format("15:04:05.000"))
	}
}

// TestNoLossWithSyncStandby: with a synchronous standby the same sequence loses
// nothing acknowledged: commits wait for the standby, and the one waiting when
// the primary died was never acknowledged.
func TestNoLossWithSyncStandby(t *testing.T) {
	pgtest.Long(t)
	t.Parallel() // a paced ledger on a cluster of its own: the test waits on it and on the failover
	c := pgtest.OwnCluster(t, 1, localpg.SyncOn)
	l := ledgerOn(t, c)
	waitAcked(t, l, 20)
	var during int64
	stopped, _ := failoverWithSenderStopped(t, c, func() {
		before := l.Commits()
		time.Sleep(time.Second) // the scenario: a second in which commits wait for the standby
		during = l.Commits() - before
	})
	waitAcked(t, l, 20)
	l.Stop()
	r, err := l.Reckon(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost != 0 || during > 1 || r.InDoubt+r.Unknown < 1 {
		t.Errorf("reckoning %+v, %d acknowledged while the standby was stopped at %s: want none lost, a commit in flight",
			r, during, stopped.Format("15:04:05.000"))
	}
}

// waitCaughtUp waits until every standby has received all the primary's WAL.
func waitCaughtUp(t *testing.T, c *localpg.Cluster) {
	t.Helper()
	ctx := t.Context()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		reps, err := c.Nodes[0].Replication(ctx)
		if err == nil && len(reps) == len(c.Nodes)-1 {
			caught := true
			for _, r := range reps {
				caught = caught && r.LagBytes == 0
			}
			if caught {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standbys did not catch up in 30 s: %+v, %v", reps, err)
		}
	}
}

// TestFaultsOnCluster: TPC-B runs on a primary with a standby, each with one
// fault 2 s in: a failover, a switchover back, a crash and a restart. The
// clients follow the primary through its DSN, every run ends once its window
// and its fault are over, with the recovery measured, and nothing acknowledged
// is lost but what the asynchronous standby had not received when its primary
// was killed; the run's sampler follows the primary. The window outlasts a
// promotion that waits out wal_retrieve_retry_interval (docs/design.md), and
// the fault may take as long as re-cloning the old primary does.
func TestFaultsOnCluster(t *testing.T) {
	pgtest.Long(t)
	c := pgtest.OwnCluster(t, 1, localpg.SyncOff)
	if code, out, errOut := clitest.Run(t, "init", "tpcb", "--scale", "1", "--dsn", c.DSN()); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	tg, err := target.Parse(c.DSN())
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(t.TempDir(), "r.db")
	var log strings.Builder
	in := localfault.Injector{Cluster: c, Log: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }}
	for _, kind := range []engine.FaultKind{engine.FaultFailover, engine.FaultSwitchover, engine.FaultCrash, engine.FaultRestart} {
		t.Run(string(kind), func(t *testing.T) {
			spec := engine.NewSpec()
			spec.Target, spec.Workload, spec.Clients = tg, tpcb.Workload{}.NewRun(), 4
			spec.Duration, spec.OutageTimeout = 9*time.Second, time.Minute
			spec.Faults = []engine.Fault{{At: 2 * time.Second, Kind: kind}}
			// The run samples the primary's processes, and follows a new one.
			primary, err := c.Primary(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			spec.Local = &sampler.Local{PostmasterPID: primary.PID, DataDir: primary.DataDir}
			logged := log.Len()
			env := engine.Env{Injector: in, Log: &log, Out: io.Discard,
				OpenStore: func(ctx context.Context) (*store.Store, error) { return store.Open(ctx, results) }}
			start := time.Now()
			sum, err := engine.Run(t.Context(), spec, env)
			if err != nil {
				var text strings.Builder
				if sum != nil {
					sum.WriteText(&text)
				}
				t.Fatalf("%v\n%s\n%s", err, text.String(), log.String())
			}
			f := sum.Faults[0]
			// The run ends after its window and the fault under way, and
			// shortly after both.
			if took, due := time.Since(start), spec.Duration+time.Duration(f.TookMs)*time.Millisecond; took > due+20*time.Second {
				t.Errorf("the run took %s, its window and fault %s", took, due)
			}
			if !f.Done || f.Error != "" || f.ServerReadyMs == nil || f.NoCommitsMs <= 0 || f.ResumedMs < 0 || sum.Transactions == 0 {
				t.Errorf("%s: %+v, %d transactions\n%s", kind, f, sum.Transactions, log.String())
			}
			// The commits resume; whether the throughput is back to 90% of what
			// it was within the window depends on what else loads the machine (a
			// node cloned again, other tests), so it is logged below, not judged:
			// internal/recovery tests it on fixed timelines.
			// A failover kills an asynchronous primary with its WAL sender: the
			// commits the standby had not received yet are lost, at most the
			// ledger's last moment's. The other faults lose nothing.
			maxLost := int64(0)
			if kind == engine.FaultFailover {
				maxLost = 10
			}
			if l := f.Ledger; l == nil || l.Lost < 0 || l.Lost > maxLost || l.Acknowledged < 100 {
				t.Errorf("%s: ledger %+v, want at most %d lost", kind, l, maxLost)
			}
			if (kind == engine.FaultFailover || kind == engine.FaultSwitchover) && f.ServerPromotedMs == nil {
				t.Errorf("%s: no promotion seen in the new primary's log", kind)
			}
			now, err := c.Primary(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			followed := strings.Contains(log.String()[logged:], "sampling the processes of the new primary, in "+now.DataDir+"\n")
			if moved := now != primary; moved != followed {
				t.Errorf("%s: the primary moved %v, the sampler followed it %v:\n%s", kind, moved, followed, log.String()[logged:])
			}
			if f.ServerReadyMs != nil {
				t.Logf("%s: no commits %.0f ms, back to 90%% after %.0f ms, server ready after %.0f ms", kind, f.NoCommitsMs, f.RecoveredMs, *f.ServerReadyMs)
			}
		})
	}
}

// TestSyncCommitWaitsForStandby: a synchronous cluster's commit waits for its
// standby, an asynchronous one's does not. With the standby stopped, a commit
// on the asynchronous cluster returns at once, and one on the synchronous
// cluster waits until a cancel request ends the wait, with the server's
// warning that it committed locally only. (Timing commits with the
// standby up tells the two apart on a quiet machine only: the standby's round
// trip is a fraction of a millisecond.)
func TestSyncCommitWaitsForStandby(t *testing.T) {
	pgtest.Long(t)
	ctx := t.Context()
	const timeout = 1500 * time.Millisecond
	commit := func(c *localpg.Cluster) (took time.Duration, warned bool) {
		cfg, err := pgconn.ParseConfig(c.DSN())
		if err != nil {
			t.Fatal(err)
		}
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			warned = warned || strings.Contains(n.Message, "synchronous replication")
		}
		conn, err := pgconn.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "create table if not exists c (v int)").ReadAll(); err != nil {
			t.Fatal(err)
		}
		// A commit's wait for its standby ignores statement_timeout, which ends
		// before the commit: a cancel request ends the wait.
		cancel := time.AfterFunc(timeout, func() { _ = conn.CancelRequest(context.Background()) })
		defer cancel.Stop()
		t0 := time.Now()
		if _, err := conn.Exec(ctx, "insert into c values (1)").ReadAll(); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0), warned
	}
	stopStandby := func(c *localpg.Cluster) {
		primary, err := c.Primary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.Nodes {
			if s != primary {
				if err := s.Stop(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, tc := range []struct {
		sync string
		wait bool
	}{{localpg.SyncOff, false}, {localpg.SyncOn, true}} {
		c := pgtest.OwnCluster(t, 1, tc.sync)
		if took, warned := commit(c); took >= timeout || warned {
			t.Errorf("%s, standby up: a commit took %s, warned %v", tc.sync, took, warned)
		}
		stopStandby(c)
		took, warned := commit(c)
		t.Logf("%s, standby stopped: a commit took %s, warned %v", tc.sync, took, warned)
		if waited := took >= timeout; waited != tc.wait || warned != tc.wait {
			t.Errorf("%s, standby stopped: a commit took %s (cancelled after %s), warned of synchronous replication %v; want a wait %v",
				tc.sync, took, timeout, warned, tc.wait)
		}
	}
}
