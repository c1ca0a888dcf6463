package pgbscript

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// compatExprs are evaluated by pgbench and here, in this order, by one client; the
// random functions draw from the client's generator in turn, so every value after the
// first draw also checks that the two generators stay in step.
var compatExprs = []string{
	"1 + 2 * 3", "-7 / 2", "-7 % 2", "7 % -1", "1 + 2.5", "-7 / 2.0", "1.0 / 0", "0.0 / 0",
	"2 - 3 - 4", "~1 + 2", "5 # 3", "5 & 3 | 8 # 1 << 1", "1 << 63", "-8 >> 65",
	"not true and false", "null and false", "false and null", "true or null", "null or true",
	"1 is not true", "1 < 2 is true", "1 isnull isnull", "null = null", "not null",
	"int(2.5)", "int(3.5)", "int(-2.5)", "least(1, 2.5)", "greatest(3, 2.5, -1)", "greatest(null, 1)",
	"least(1.0/0, 2, 0.0/0)", "greatest(0.0/0, 2)", "greatest(2, 0.0/0)",
	"abs(-9223372036854775808)", "abs(-0.0)", "abs(true)", "pi()", "exp(1)", "ln(10)", "sqrt(2)",
	"pow(2, 0.5)", "pow(-8, 1.0/3)", "123456.7890123456789", "1e15", "1e-5", "0.1 + 0.2",
	"double(7) / 3", "5.5 % 2", "abs(,-5)",
	"case when 0 then 1 else 3.5 end", "case when null then 1 end", "case when 0.0/0 then 1 end",
	":scale", ":client_id", ":random_seed", ":default_seed", ":dint + 1", ":ddouble * 2", ":dbool",
	":dnull is null", ":dplus + 0",
	"hash(10)", "hash(10, 5432)", "hash_fnv1a(10)", "hash_fnv1a(-1, 0)", "hash_murmur2(0)",
	"permute(3, 10)", "permute(0, 10, 5432)", "permute(-1, 10, 5432)",
	"permute(9223372036854775796, 9223372036854775797, 5432)",
	"random(1, 1000000000)", "random(-5, 5)", "random(3, 3)", "random(0, 9223372036854775806)",
	"random_exponential(1, 1000000, 3.5)", "random_exponential(-100, 100, 0.01)",
	"random_gaussian(1, 1000000, 2.5)", "random_gaussian(0, 10, 30)",
	"random_zipfian(1, 1000000, 1.07)", "random_zipfian(1, 10, 2.5)", "random_zipfian(5, 5, 1.5)",
	"random(1, 10) + random(1, 10) > random(1, 10)",
}

var debugLine = regexp.MustCompile(`^debug\(script=0,command=(\d+)\): (.*)$`)

// TestExpressionsMatchPgbench runs a script of \set ... debug(...) under pgbench and
// evaluates the same expressions here with the generator seeded as pgbench seeds its
// first client; every value must print the same.
func TestExpressionsMatchPgbench(t *testing.T) {
	pgbench := pgtest.Pgbench(t)
	dsn := pgtest.DSN(t)
	var src strings.Builder
	for i, e := range compatExprs {
		fmt.Fprintf(&src, "\\set v%d debug(%s)\n", i, e)
	}
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&src, "\\set r%d debug(random_zipfian(1, 100000, 1.%02d) + random_exponential(1, 100000, %d.5) * 0 + random_gaussian(1, 1000, 2.%d))\n", i, i%100+1, i%7+1, i%10)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "e.sql"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	defines := []string{"-D", "dint=41", "-D", "ddouble=1.25", "-D", "dbool=yes", "-D", "dnull=NULL", "-D", "dplus=+7"}
	code, stderr := pgbenchStderr(t, pgbench, dir, append(defines, "-n", "-t", "1", "-s", "3", "--random-seed=5432", "-f", "e.sql", dsn)...)
	if code != 0 {
		t.Fatalf("pgbench exited %d:\n%s", code, stderr)
	}
	var want []string
	for _, line := range strings.Split(stderr, "\n") {
		if m := debugLine.FindStringSubmatch(line); m != nil {
			want = append(want, m[2])
		}
	}

	vs := NewVars()
	s, err := Parse("e.sql", src.String(), vs)
	if err != nil {
		t.Fatal(err)
	}
	seeds := NewSeeder(5432)
	env := NewEnv(vs)
	env.Rand = seeds.Next()
	env.Set(vs.Slot("default_seed"), IntValue(int64(seeds.Uint64())))
	env.Set(vs.Slot("random_seed"), IntValue(5432))
	env.Set(vs.Slot("scale"), IntValue(3))
	env.Set(vs.Slot("client_id"), IntValue(0))
	for i := 0; i+1 < len(defines); i += 2 {
		name, value, _ := strings.Cut(defines[i+1], "=")
		env.SetText(vs.Slot(name), value)
	}
	var got []string
	env.Debug = func(line string) { got = append(got, line) }
	for _, c := range s.Commands {
		v, err := c.Expr.Eval(env)
		if err != nil {
			t.Fatalf("%s: %v", c.FirstLine, err)
		}
		env.Set(c.Var, v)
	}
	if len(got) != len(want) {
		t.Fatalf("%d debug lines, pgbench printed %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: %s, pgbench %s", s.Commands[i].FirstLine, got[i], want[i])
		}
	}
}
