package localpg_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestParsePortRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want localpg.PortRange
		err  bool
	}{
		{in: "", want: localpg.PortRange{}},
		{in: "56100-56199", want: localpg.PortRange{Lo: 56100, Hi: 56199}},
		{in: " 56100 - 56101 ", want: localpg.PortRange{Lo: 56100, Hi: 56101}},
		{in: "56100", want: localpg.PortRange{Lo: 56100, Hi: 56100}},
		{in: "56199-56100", err: true},
		{in: "0-10", err: true},
		{in: "1-65536", err: true},
		{in: "a-b", err: true},
		{in: "56100-", err: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("in=%q", tt.in), func(t *testing.T) {
			got, err := localpg.ParsePortRange(tt.in)
			if tt.err {
				if err == nil || !strings.Contains(err.Error(), "56100-56199") {
					t.Errorf("ParsePortRange(%q) = %v, %v; want an error that shows the form", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParsePortRange(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// A server started with a port range takes a free port of it, passing over one
// that is in use, and a range with none free is refused, naming the range.
func TestStartInPortRange(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	p := busy.Addr().(*net.TCPAddr).Port
	next, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
	if err != nil {
		t.Skipf("port %d, next to a free one, is taken: %v", p+1, err)
	}
	next.Close()

	s := start(t, localpg.Options{Ports: localpg.PortRange{Lo: p, Hi: p + 1}})
	if s.Port != p+1 {
		t.Errorf("server in range %d-%d took port %d, want %d (the one not in use)", p, p+1, s.Port, p+1)
	}
	if got := queryString(t, s.TCPDSN(), "SHOW port"); got != fmt.Sprint(p+1) {
		t.Errorf("SHOW port = %s, want %d", got, p+1)
	}

	in, err := installed()
	if err != nil {
		t.Fatal(err)
	}
	_, err = localpg.Start(context.Background(), localpg.Options{Install: in, BaseDir: baseDir(t), Ports: localpg.PortRange{Lo: p, Hi: p}})
	want := fmt.Sprintf("no free port in %d-%d", p, p)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("start in a range whose only port is in use: %v, want an error saying %q", err, want)
	}
}
