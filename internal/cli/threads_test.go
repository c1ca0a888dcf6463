package cli

import (
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/spf13/pflag"
)

// TestFitThreads: a workload's default of a thread per client gives way beyond the
// clients it allows, but an explicit --thread-per-client stays, for checkRunFlags to
// refuse.
func TestFitThreads(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		clients int
		want    bool
	}{
		{nil, 8, true},
		{nil, driver.MaxThreadClients + 1, false},
		{[]string{"--thread-per-client"}, driver.MaxThreadClients + 1, true},
		{[]string{"--thread-per-client=false"}, 8, false},
	} {
		fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
		var f runFlags
		addRunFlags(fl, &f, 1, true)
		if err := fl.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		f.clients = tc.clients
		f.fitThreads(fl)
		if f.threadPerClient != tc.want {
			t.Errorf("%v with %d clients: thread per client %v, want %v", tc.args, tc.clients, f.threadPerClient, tc.want)
		}
	}
}
