package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localfault"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// localInjector does faults to the local server, or cluster, the target names:
// the running registered server whose port the target connects to over a Unix
// socket or the loopback address. nil when there is none, for which the run
// refuses faults other than command ones.
func localInjector(ctx context.Context, reg localpg.Registry, t *target.Target, log io.Writer) (engine.Injector, error) {
	statuses, err := reg.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, st := range statuses {
		if !st.Running || !connectsTo(t, st.Port) {
			continue
		}
		name := st.Name
		if st.Cluster != "" {
			name = st.Cluster
		}
		c, err := reg.Cluster(name)
		if err != nil {
			return nil, err
		}
		return localfault.Injector{Cluster: c, Log: func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }}, nil
	}
	return nil, nil
}

// connectsTo tells whether the target connects to port on this machine.
func connectsTo(t *target.Target, port int) bool {
	hosts := []struct {
		host string
		port uint16
	}{{t.Config.Host, t.Config.Port}}
	for _, f := range t.Config.Fallbacks {
		hosts = append(hosts, struct {
			host string
			port uint16
		}{f.Host, f.Port})
	}
	for _, h := range hosts {
		local := strings.HasPrefix(h.host, "/") || h.host == "localhost"
		if ip := net.ParseIP(h.host); ip != nil && ip.IsLoopback() {
			local = true
		}
		if local && int(h.port) == port {
			return true
		}
	}
	return false
}
