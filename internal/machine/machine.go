// Package machine describes the machine a benchmark's client runs on, so that
// every stored run says what measured it and reports can tell runs made from
// different machines apart.
//
//	m := machine.Describe(false)
//	fmt.Println(m) // "Intel(R) Xeon(R) ..., 2 logical CPUs, 23.5 GiB, Debian GNU/Linux 12 (Linux 6.1.0), host bench1"
package machine

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Machine is what a run records of its client machine.
type Machine struct {
	CPU         string `json:"cpu,omitempty"` // model name, "" where it cannot be read
	LogicalCPUs int    `json:"logical_cpus"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	OS          string `json:"os"`               // GOOS/GOARCH, and the distribution where known
	Kernel      string `json:"kernel,omitempty"` // release
	Go          string `json:"go"`
	Pgbakeoff   string `json:"pgbakeoff"` // module version, or the commit it was built from
	Hostname    string `json:"hostname,omitempty"`
}

// Describe reads this machine. With anonymize the hostname is left out.
func Describe(anonymize bool) Machine {
	m := Machine{CPU: cpuModel(), LogicalCPUs: runtime.NumCPU(), MemoryBytes: Memory(), Go: runtime.Version(), Pgbakeoff: Version()}
	m.OS = runtime.GOOS + "/" + runtime.GOARCH
	if d := distribution(); d != "" {
		m.OS += ", " + d
	}
	m.Kernel = kernelRelease()
	if !anonymize {
		m.Hostname, _ = os.Hostname()
	}
	return m
}

// String is the machine for people, on one line.
func (m Machine) String() string {
	var parts []string
	if m.CPU != "" {
		parts = append(parts, m.CPU)
	}
	parts = append(parts, fmt.Sprintf("%d logical CPUs", m.LogicalCPUs))
	if m.MemoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB", float64(m.MemoryBytes)/(1<<30)))
	}
	os := m.OS
	if m.Kernel != "" {
		os += ", kernel " + m.Kernel
	}
	parts = append(parts, os, "pgbakeoff "+m.Pgbakeoff+" ("+m.Go+")")
	if m.Hostname != "" {
		parts = append(parts, "host "+m.Hostname)
	}
	return strings.Join(parts, ", ")
}

// Version is pgbakeoff's version: the module's when installed with go install
// at a version, else the commit it was built from, else "devel".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "devel-" + rev
}
