package cli

import (
	"fmt"

	"github.com/pgbakeoff/pgbakeoff/internal/metrics"
	"github.com/spf13/pflag"
)

// metricsFlag binds --metrics-listen, the address of the live metrics endpoint.
func metricsFlag(fs *pflag.FlagSet, addr *string) {
	fs.StringVar(addr, "metrics-listen", "", "serve live figures to Prometheus at http://`ADDR`/metrics (as :9187) while the command runs; "+
		"a run's final values stay there until pgbakeoff exits")
}

// listenMetrics starts the endpoint --metrics-listen asks for (nil for ""), so
// that an address it cannot listen on fails before anything runs.
func listenMetrics(addr string) (*metrics.Server, error) {
	if addr == "" {
		return nil, nil
	}
	srv, err := metrics.Listen(addr)
	if err != nil {
		return nil, usageError{fmt.Errorf("--metrics-listen: %w", err)}
	}
	return srv, nil
}
