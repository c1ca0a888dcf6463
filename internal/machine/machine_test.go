package machine

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	m := Describe(false)
	host, _ := os.Hostname()
	if m.LogicalCPUs != runtime.NumCPU() || m.Go != runtime.Version() || m.Hostname != host || m.Pgbakeoff == "" {
		t.Errorf("Describe = %+v", m)
	}
	if !strings.HasPrefix(m.OS, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("OS %q, want it to start with %s/%s", m.OS, runtime.GOOS, runtime.GOARCH)
	}
	if runtime.GOOS == "linux" && (m.CPU == "" || m.MemoryBytes <= 0 || m.Kernel == "") {
		t.Errorf("on Linux the CPU model, memory and kernel are read: %+v", m)
	}
	if a := Describe(true); a.Hostname != "" || strings.Contains(a.String(), host) {
		t.Errorf("anonymized machine %q names the host %q", a, host)
	}
	if s := m.String(); !strings.Contains(s, "logical CPUs") || !strings.Contains(s, "host "+host) {
		t.Errorf("String = %q", s)
	}
}
