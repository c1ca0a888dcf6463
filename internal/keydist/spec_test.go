package keydist

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		str  string
	}{
		{"uniform", Spec{}, "uniform"},
		{" uniform ", Spec{}, "uniform"},
		{"gaussian", Spec{Kind: Gaussian, Iter: 12}, "gaussian:12"},
		{"gaussian:3", Spec{Kind: Gaussian, Iter: 3}, "gaussian:3"},
		{"special", Spec{Kind: Special, Iter: 12, Pct: 1, Res: 75}, "special:12:1:75"},
		{"special:6", Spec{Kind: Special, Iter: 6, Pct: 1, Res: 75}, "special:6:1:75"},
		{"special:6:5", Spec{Kind: Special, Iter: 6, Pct: 5, Res: 75}, "special:6:5:75"},
		{"special:12:0:100", Spec{Kind: Special, Iter: 12, Pct: 0, Res: 100}, "special:12:0:100"},
		{"pareto", Spec{Kind: Pareto, Param: 0.2}, "pareto:0.2"},
		{"pareto:0.3", Spec{Kind: Pareto, Param: 0.3}, "pareto:0.3"},
		{"zipfian", Spec{Kind: Zipfian, Param: 0.8}, "zipfian:0.8"},
		{"zipfian:1.1", Spec{Kind: Zipfian, Param: 1.1}, "zipfian:1.1"},
		{"zipfian:0", Spec{Kind: Zipfian, Param: 0}, "zipfian:0"},
		{"exponential:5", Spec{Kind: Exponential, Param: 5}, "exponential:5"},
		{"exponential:1e-3", Spec{Kind: Exponential, Param: 0.001}, "exponential:0.001"},
		{"pgbench-gaussian:2.5", Spec{Kind: PgbenchGaussian, Param: 2.5}, "pgbench-gaussian:2.5"},
		{"pgbench-gaussian:2", Spec{Kind: PgbenchGaussian, Param: 2}, "pgbench-gaussian:2"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Parse = %+v, want %+v", got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Fatalf("String = %q, want %q", s, tt.str)
			}
			back, err := Parse(got.String())
			if err != nil || back != got {
				t.Fatalf("Parse(String()) = %+v, %v; want %+v", back, err, got)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string // the whole message
	}{
		{"", "empty distribution: use uniform, gaussian, special, pareto, zipfian, exponential:P or pgbench-gaussian:P"},
		{"foo", `unknown distribution "foo": use uniform, gaussian, special, pareto, zipfian, exponential:P or pgbench-gaussian:P`},
		{"Zipfian", `unknown distribution "Zipfian": use uniform, gaussian, special, pareto, zipfian, exponential:P or pgbench-gaussian:P`},
		{"uniform:1", `distribution "uniform:1": uniform takes no parameter`},
		{"gaussian:0", `distribution "gaussian:0": iterations must be from 1 to 1000, as gaussian:12`},
		{"gaussian:1.5", `distribution "gaussian:1.5": iterations "1.5" is not an integer`},
		{"gaussian:12:1", `distribution "gaussian:12:1": gaussian takes at most one parameter (iterations), as gaussian:12`},
		{"special:12:101", `distribution "special:12:101": pct must be from 0 to 100, as special:12:1:75`},
		{"special:12:1:-1", `distribution "special:12:1:-1": res must be from 0 to 100, as special:12:1:75`},
		{"special:12:x", `distribution "special:12:x": pct "x" is not an integer`},
		{"special:1:2:3:4", `distribution "special:1:2:3:4": special takes at most three parameters (iterations, pct, res), as special:12:1:75`},
		{"special:1001", `distribution "special:1001": iterations must be from 1 to 1000, as special:12`},
		{"pareto:1.5", `distribution "pareto:1.5": h must be in (0, 1), as pareto:0.2`},
		{"pareto:0", `distribution "pareto:0": h must be in (0, 1), as pareto:0.2`},
		{"pareto:NaN", `distribution "pareto:NaN": h must be in (0, 1), as pareto:0.2`},
		{"pareto:", `distribution "pareto:": h "" is not a number`},
		{"pareto:0.1:2", `distribution "pareto:0.1:2": pareto takes at most one parameter (h), as pareto:0.2`},
		{"zipfian:-0.1", `distribution "zipfian:-0.1": exponent must be in [0, 1000], as zipfian:0.8`},
		{"zipfian:abc", `distribution "zipfian:abc": exponent "abc" is not a number`},
		{"exponential", `distribution "exponential": exponential takes exactly one parameter, as exponential:5`},
		{"exponential:0", `distribution "exponential:0": parameter must be a finite number > 0, as exponential:5`},
		{"exponential:+Inf", `distribution "exponential:+Inf": parameter must be a finite number > 0, as exponential:5`},
		{"pgbench-gaussian", `distribution "pgbench-gaussian": pgbench-gaussian takes exactly one parameter, as pgbench-gaussian:2.5`},
		{"pgbench-gaussian:1.9", `distribution "pgbench-gaussian:1.9": parameter must be a finite number >= 2, as pgbench-gaussian:2.5`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); msg != tt.want {
				t.Fatalf("error\n got %s\nwant %s", msg, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		lo, hi int64
		want   string
	}{
		{"empty range", Spec{}, 5, 4, "uniform over [5, 4]: the range is empty, lo must be <= hi"},
		{"too wide", Spec{Kind: Pareto, Param: 0.2}, 0, 1 << 53,
			"pareto:0.2 over [0, 9007199254740992]: more than 2^53 keys; only uniform takes a range that wide"},
		{"no iterations", Spec{Kind: Gaussian}, 1, 10,
			"distribution gaussian:0: iterations must be from 1 to 1000, as gaussian:12"},
		{"unknown kind", Spec{Kind: 42}, 1, 10,
			"distribution kind(42):0: unknown distribution kind 42: use uniform, gaussian, special, pareto, zipfian, exponential:P or pgbench-gaussian:P"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.spec, tt.lo, tt.hi)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
	// The widest range a float-based distribution takes.
	if _, err := New(Spec{Kind: Pareto, Param: 0.2}, 1, 1<<53); err != nil {
		t.Fatal(err)
	}
}
