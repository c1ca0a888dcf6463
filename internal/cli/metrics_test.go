package cli_test

import (
	"net"
	"strings"
	"testing"
)

// TestMetricsListenRefused: an address --metrics-listen cannot listen on, a port
// in use or one malformed, is one line naming the flag, before anything
// connects (the DSNs name no server) or any file is read.
func TestMetricsListenRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	nowhere := "host=/nonexistent/socket dbname=x"
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"run/port-in-use", []string{"run", "tpcb", "--metrics-listen", busy, "--dsn", nowhere}, 2, "address already in use"},
		{"run/malformed", []string{"run", "tpcb", "--metrics-listen", "no-port", "--dsn", nowhere}, 2, "missing port"},
		{"study-run/port-in-use", []string{"study", "run", "missing.yaml", "--metrics-listen", busy}, 2, "address already in use"},
		{"pgbench/port-in-use", []string{"pgbench", "-n", "-T", "1", "--metrics-listen", busy, nowhere}, 1, "address already in use"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.args...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != c.code || len(lines) != 1 || !strings.Contains(errOut, "--metrics-listen") || !strings.Contains(errOut, c.want) ||
				strings.Contains(errOut, "missing.yaml") || strings.Contains(errOut, "/nonexistent") {
				t.Errorf("exit %d, want %d and one line naming --metrics-listen and %q:\n%s%s", code, c.code, c.want, out, errOut)
			}
		})
	}
}
