package findmax

import (
	"testing"
	"time"
)

func TestParseObjective(t *testing.T) {
	for _, c := range []struct {
		slo, errs string
		want      Objective
	}{
		{"p99<10ms", "", Objective{99, 10 * time.Millisecond, -1}},
		{"p99.9 < 50ms", "<0.1%", Objective{99.9, 50 * time.Millisecond, 0.001}},
		{"p50<=2ms", "<= 1%", Objective{50, 2 * time.Millisecond, 0.01}},
	} {
		got, err := ParseObjective(c.slo, c.errs)
		if err != nil || got != c.want {
			t.Errorf("%q %q: %+v, %v; want %+v", c.slo, c.errs, got, err, c.want)
		}
	}
	for _, c := range [][2]string{{"", ""}, {"99<10ms", ""}, {"p0<1s", ""}, {"p101<1s", ""}, {"p99<-1s", ""}, {"p99<soon", ""},
		{"p99<1s", "0.1%"}, {"p99<1s", "<0.1"}, {"p99<1s", "<200%"}, {"p99<1s", "<x%"}} {
		if _, err := ParseObjective(c[0], c[1]); err == nil {
			t.Errorf("%q %q: accepted", c[0], c[1])
		}
	}
}
