package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
)

// TestSuggestions: a mistyped flag or command gets one line naming the closest
// one; one too far from any gets none.
func TestSuggestions(t *testing.T) {
	study := filepath.Join(t.TempDir(), "s.yaml")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"run flag", []string{"run", "tpcb", "--duraton", "5s"}, "unknown flag: --duraton (did you mean --duration?)"},
		{"run flag transposed", []string{"run", "sysbench", "--warmpu", "5"}, "unknown flag: --warmpu (did you mean --warmup?)"},
		{"run flag with value", []string{"run", "tpcc", "--client=4"}, "unknown flag: --client (did you mean --clients?)"},
		{"inherited flag", []string{"runs", "--result", "x.db"}, "unknown flag: --result (did you mean --results?)"},
		{"study flag", []string{"study", "run", study, "--progres", "5s"}, "unknown flag: --progres (did you mean --progress?)"},
		{"workload", []string{"run", "sysbnech"}, `unknown run "sysbnech" (did you mean sysbench?)`},
		{"command", []string{"rnu", "tpcb"}, `unknown command "rnu" (did you mean run?)`},
		{"far from any flag", []string{"run", "tpcb", "--frobnicate"}, "unknown flag: --frobnicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.args...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != cli.ExitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "pgbakeoff: ") || !strings.Contains(lines[0], c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and one line saying %q", code, errOut, cli.ExitUsage, c.want)
			}
			if strings.Contains(c.name, "far") && strings.Contains(errOut, "did you mean") {
				t.Errorf("suggested a flag for one unlike any: %q", errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}
