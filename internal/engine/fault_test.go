package engine

import (
	"strings"
	"testing"
	"time"
)

// TestParseFault: --fault as written, a command taking the rest of the text,
// and its password never shown.
func TestParseFault(t *testing.T) {
	f, err := ParseFault("at=90s,kind=command,command=psql postgres://admin:s3cret@db/x -c 'select 1, 2'")
	if err != nil || f.At != 90*time.Second || f.Kind != FaultCommand || f.Command != "psql postgres://admin:s3cret@db/x -c 'select 1, 2'" {
		t.Fatalf("%+v, %v", f, err)
	}
	if s := f.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "postgres://admin:xxxxx@db/x") {
		t.Errorf("String() = %q", s)
	}
	for _, cmd := range []string{"x password=s3cret y", "x --password s3cret", `x PASSWORD="s3cret"`} {
		if got := RedactCommand(cmd); strings.Contains(got, "s3cret") {
			t.Errorf("RedactCommand(%q) = %q", cmd, got)
		}
	}
	for _, bad := range []string{"at=1s,kind", "when=1s,kind=crash", "at=soon,kind=crash"} {
		if _, err := ParseFault(bad); err == nil || !strings.HasPrefix(err.Error(), "--fault ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	s := DefaultSettings()
	s.Duration = 10 * time.Second
	for _, f := range []Fault{{At: 0, Kind: FaultCrash}, {At: 10 * time.Second, Kind: FaultCrash}, {At: time.Second, Kind: "melt"},
		{At: time.Second, Kind: FaultCommand}, {At: time.Second, Kind: FaultCrash, Command: "x"}} {
		if err := f.Check(&s); err == nil {
			t.Errorf("%+v was taken", f)
		}
	}
}
