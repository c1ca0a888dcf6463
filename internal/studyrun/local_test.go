//go:build unix

package studyrun

import (
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localfault"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestLocalFollowsPrimary: after a failover in one of a study's runs, the
// later runs sample the processes of the new primary, not of the old one,
// which is a standby now.
func TestLocalFollowsPrimary(t *testing.T) {
	pgtest.Long(t)
	c := pgtest.OwnCluster(t, 1, localpg.SyncOff)
	st := &studyTarget{srv: c.Nodes[0], cluster: c}
	if l := st.local(t.Context()); l == nil || l.DataDir != c.Nodes[0].DataDir {
		t.Fatalf("before the failover the sampler reads %+v, want the first primary's", l)
	}
	in := localfault.Injector{Cluster: c, Log: t.Logf}
	ev, err := in.Inject(t.Context(), engine.FaultFailover)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Primary == nil || ev.Primary.DataDir != c.Nodes[1].DataDir {
		t.Errorf("the failover says the primary is now %+v, want %s", ev.Primary, c.Nodes[1].DataDir)
	}
	if l := st.local(t.Context()); l == nil || l.DataDir != c.Nodes[1].DataDir {
		t.Errorf("after the failover the sampler reads %+v, want the new primary's, %s", l, c.Nodes[1].DataDir)
	}
}
