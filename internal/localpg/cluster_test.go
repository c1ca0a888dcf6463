package localpg_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// startCluster starts a cluster in a temporary directory and stops and
// removes it when the test ends.
func startCluster(t *testing.T, standbys int, sync string) *localpg.Cluster {
	t.Helper()
	in, err := installed()
	if err != nil {
		t.Fatal(err)
	}
	opts := localpg.ClusterOptions{Standbys: standbys, Synchronous: sync,
		Options: localpg.Options{Name: "ha", Install: in, BaseDir: baseDir(t), Log: tlog{t}}}
	c, err := localpg.StartCluster(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// waitFor polls query on dsn until it returns want, failing t after 30 s.
// Errors, such as a table not replicated yet, count as another answer.
func waitFor(t *testing.T, dsn, query, want string) {
	t.Helper()
	var got string
	var err error
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var conn *pgx.Conn
		if conn, err = pgx.Connect(ctx, dsn); err == nil {
			err = conn.QueryRow(ctx, query).Scan(&got)
			_ = conn.Close(ctx)
		}
		if err == nil && got == want {
			return
		}
	}
	t.Fatalf("%s on %s: %q (%v) after 30 s, want %q", query, dsn, got, err, want)
}

// reversed is the cluster's DSN with the nodes listed last first.
func reversed(c *localpg.Cluster) string {
	var hosts, ports []string
	for i := len(c.Nodes) - 1; i >= 0; i-- {
		hosts = append(hosts, c.Nodes[i].SocketDir)
		ports = append(ports, fmt.Sprint(c.Nodes[i].Port))
	}
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres target_session_attrs=read-write", strings.Join(hosts, ","), strings.Join(ports, ","))
}

// TestClusterStandby: a row committed on the primary reaches the standby,
// which is in recovery and streams through its slot; the cluster's DSN
// reaches the primary whichever node is listed first.
func TestClusterStandby(t *testing.T) {
	pgtest.Long(t)
	c := startCluster(t, 1, localpg.SyncOff)
	primary, standby := c.Nodes[0], c.Nodes[1]
	pgtest.Query(t, primary.DSN(), "create table t (v text); insert into t values ('hello')")
	waitFor(t, standby.DSN(), "select v from t", "hello")
	ctx := context.Background()
	if st, err := standby.State(ctx); err != nil || !st.Standby || st.Replayed == 0 {
		t.Errorf("standby State() = %+v, %v; want in recovery with WAL replayed", st, err)
	}
	if got := pgtest.Query(t, primary.DSN(), "select string_agg(slot_name || ':' || active, ',') from pg_replication_slots"); got != "pgbakeoff_ha_1:true" {
		t.Errorf("slots on the primary: %q, want pgbakeoff_ha_1:true", got)
	}
	reps, err := primary.Replication(ctx)
	if err != nil || len(reps) != 1 || reps[0].Name != "ha.1" || reps[0].State != "streaming" || reps[0].Sync != "async" {
		t.Errorf("Replication() = %+v, %v; want ha.1 streaming async", reps, err)
	}
	for _, dsn := range []string{c.DSN(), c.TCPDSN(), reversed(c)} {
		if got := pgtest.Query(t, dsn, "select current_setting('port') || ' ' || pg_is_in_recovery()"); got != fmt.Sprint(primary.Port, " false") {
			t.Errorf("%s reached %q, want the primary (port %d)", dsn, got, primary.Port)
		}
	}
	if p, err := c.Primary(ctx); err != nil || p != primary {
		t.Errorf("Primary() = %v, %v; want node 0", p, err)
	}
}

// commitWaits inserts a row on dsn and reports whether the commit was
// still waiting after three seconds; the insert is then cancelled, which leaves
// it committed on the primary alone.
func commitWaits(t *testing.T, dsn string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err = conn.Exec(short, "insert into t values ('x')")
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && short.Err() == nil {
		t.Fatal(err)
	}
	return err != nil
}

// TestClusterSynchronous: with synchronous on, a commit waits for the
// standby: while the standby is down it does not return; once the standby
// is back it returns at once.
func TestClusterSynchronous(t *testing.T) {
	pgtest.Long(t)
	c := startCluster(t, 1, localpg.SyncOn)
	primary, standby := c.Nodes[0], c.Nodes[1]
	pgtest.Query(t, primary.DSN(), "create table t (v text)")
	if commitWaits(t, primary.DSN()) {
		t.Fatal("a commit with the standby up waited past the timeout")
	}
	ctx := context.Background()
	if reps, err := primary.Replication(ctx); err != nil || len(reps) != 1 || reps[0].Sync != "quorum" {
		t.Errorf("Replication() = %+v, %v; want one quorum standby", reps, err)
	}
	if err := standby.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if !commitWaits(t, primary.DSN()) {
		t.Error("a commit with the standby down did not wait for it")
	}
	if err := standby.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.WaitStreaming(wait, standby, primary); err != nil {
		t.Fatal(err)
	}
	if commitWaits(t, primary.DSN()) {
		t.Error("a commit with the standby back waited past the timeout")
	}
	waitFor(t, standby.DSN(), "select count(*)::text from t", "3")
}

// TestClusterFailover: after the primary is killed, the standby is
// promoted and the cluster's DSN reaches it; the old primary comes back as
// its standby, following it or cloned again, and is cloned again anyway.
func TestClusterFailover(t *testing.T) {
	pgtest.Long(t)
	c := startCluster(t, 1, localpg.SyncOff)
	old, standby := c.Nodes[0], c.Nodes[1]
	pgtest.Query(t, old.DSN(), "create table t (v text); insert into t values ('before')")
	waitFor(t, standby.DSN(), "select count(*)::text from t", "1")
	ctx := context.Background()
	began := time.Now()
	if err := old.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.Promote(ctx, standby); err != nil {
		t.Fatal(err)
	}
	if got := pgtest.Query(t, c.DSN(), "insert into t values ('after'); select current_setting('port')"); got != fmt.Sprint(standby.Port) {
		t.Errorf("the cluster's DSN reached port %s after the failover, want the new primary's, %d", got, standby.Port)
	}
	if at, ok, err := standby.LoggedAt(localpg.LogReady, began); err != nil || !ok || at.Before(began.Add(-time.Second)) {
		t.Errorf("LoggedAt(ready) = %v, %v, %v; want a time after the failover began (%v)", at, ok, err, began)
	}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err := c.Follow(ctx, old, standby)
	if err == nil {
		err = c.WaitStreaming(wait, old, standby)
	}
	if err != nil {
		t.Logf("the old primary cannot follow (%v); cloning it again", err)
		again, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := c.Reclone(again, old, standby); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitStreaming(again, old, standby); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, old.DSN(), "select string_agg(v, ',' order by v) from t", "after,before")
	again, cancelAgain := context.WithTimeout(ctx, 60*time.Second)
	defer cancelAgain()
	if err := c.Reclone(again, old, standby); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitStreaming(again, old, standby); err != nil {
		t.Fatal(err)
	}
	pgtest.Query(t, c.DSN(), "insert into t values ('recloned')")
	waitFor(t, old.DSN(), "select string_agg(v, ',' order by v) from t", "after,before,recloned")
	if p, err := c.Primary(ctx); err != nil || p != standby {
		t.Errorf("Primary() = %v, %v; want node 1", p, err)
	}
}

// TestClusterOlderVersions: before 15 the backup functions have other names;
// a standby is cloned with them too.
func TestClusterOlderVersions(t *testing.T) {
	pgtest.Long(t)
	for _, version := range []string{"12", "14"} {
		t.Run("version="+version, func(t *testing.T) {
			in, err := localpg.FindBinaries(context.Background(), version, tlog{t})
			if err != nil {
				t.Skipf("no PostgreSQL %s: %v", version, err)
			}
			opts := localpg.ClusterOptions{Standbys: 1, Options: localpg.Options{Name: "old", Install: in, BaseDir: baseDir(t), Log: tlog{t}}}
			c, err := localpg.StartCluster(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := errors.Join(c.Stop(context.Background()), c.Remove()); err != nil {
					t.Error(err)
				}
			}()
			pgtest.Query(t, c.DSN(), "create table t (v text); insert into t values ('hello')")
			waitFor(t, c.Nodes[1].DSN(), "select v from t", "hello")
		})
	}
}

func TestCheckCluster(t *testing.T) {
	tests := []struct {
		version  string
		standbys int
		sync     string
		want     string // "" = no error
	}{
		{"16", 1, localpg.SyncOn, ""},
		{"", 2, localpg.SyncRemoteApply, ""},
		{"11", 0, "", ""},
		{"16", 0, localpg.SyncOff, ""},
		{"16", 0, localpg.SyncOn, "synchronous on needs standbys"},
		{"16", -1, "", "standbys -1: want 0 to 8"},
		{"16", 9, "", "standbys 9: want 0 to 8"},
		{"16", 1, "yes", `synchronous "yes": want off, on or remote_apply`},
		{"11", 1, "", "standbys need PostgreSQL 12 or later, not 11"},
		{"11.22", 1, "", "standbys need PostgreSQL 12 or later, not 11.22"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("version=%s/standbys=%d/sync=%s", tt.version, tt.standbys, tt.sync), func(t *testing.T) {
			err := localpg.CheckCluster(tt.version, tt.standbys, tt.sync)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckCluster = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRestartAfterCrash: a server whose postmaster was killed starts again
// on its port with its settings, once its old backends have let go.
func TestRestartAfterCrash(t *testing.T) {
	pgtest.Long(t)
	s := start(t, localpg.Options{Settings: []localpg.Setting{{Name: "work_mem", Value: "7MB"}}})
	port := s.Port
	pgtest.Query(t, s.DSN(), "create table t (v text); insert into t values ('kept')")
	if err := s.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := pgtest.Query(t, s.DSN(), "select v || ' ' || current_setting('work_mem') || ' ' || current_setting('port') from t"); got != fmt.Sprintf("kept 7MB %d", port) {
		t.Errorf("after the restart: %q, want the row, work_mem 7MB and port %d", got, port)
	}
}
