package localpg

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// PortsEnv names the environment variable that confines the ports of servers
// started without a port of their own to a range, "56100-56199", for machines
// where only some ports may be used.
const PortsEnv = "PGBAKEOFF_PORTS"

// PortRange is an inclusive range of TCP ports; the zero value is any free port
// the kernel gives.
type PortRange struct{ Lo, Hi int }

func (r PortRange) String() string {
	if r.Lo == 0 {
		return ""
	}
	return fmt.Sprintf("%d-%d", r.Lo, r.Hi)
}

// ParsePortRange reads "56100-56199" (or one port, "56100"); "" is the zero range.
func ParsePortRange(s string) (PortRange, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return PortRange{}, nil
	}
	lo, hi, found := strings.Cut(s, "-")
	if !found {
		hi = lo
	}
	a, errA := strconv.Atoi(strings.TrimSpace(lo))
	b, errB := strconv.Atoi(strings.TrimSpace(hi))
	if errA != nil || errB != nil || a < 1 || b > 65535 || a > b {
		return PortRange{}, fmt.Errorf("port range %q: write two ports from 1 to 65535, the lower first, as 56100-56199", s)
	}
	return PortRange{a, b}, nil
}

// DefaultPorts is the range in $PGBAKEOFF_PORTS, or the zero range when it is
// not set.
func DefaultPorts() (PortRange, error) {
	r, err := ParsePortRange(os.Getenv(PortsEnv))
	if err != nil {
		return r, fmt.Errorf("$%s: %w", PortsEnv, err)
	}
	return r, nil
}

// free is a port of the range nobody listens on at 127.0.0.1, tried from a
// random place in the range so that servers started at once by several
// processes rarely try the same one first; the zero range asks the kernel.
func (r PortRange) free() (int, error) {
	if r.Lo == 0 {
		return freePort()
	}
	n := r.Hi - r.Lo + 1
	first := rand.IntN(n)
	for i := range n {
		if p := r.Lo + (first+i)%n; !portInUse(p) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port in %s: give a wider range or stop servers that use it", r)
}

// Set parses s into r, so that a *PortRange serves as a command-line flag.
func (r *PortRange) Set(s string) error {
	v, err := ParsePortRange(s)
	if err == nil {
		*r = v
	}
	return err
}

// Type names the flag's value in help.
func (r *PortRange) Type() string { return "lo-hi" }
