package pgbscript

import (
	"strings"
	"testing"
)

// evalOne compiles and evaluates src in env (a fresh one when nil).
func evalOne(t *testing.T, vs *Vars, env *Env, src string) (Value, error) {
	t.Helper()
	x, serr := compileExpr(src, vs)
	if serr != nil {
		t.Fatalf("%q: syntax error at %d: %s", src, serr.col, serr.msg)
	}
	if env == nil {
		env = NewEnv(vs)
	}
	env.grow()
	return x.Eval(env)
}

// The expected values are pgbench's, from its own tests and the script corpus
// (../shared/pgbench-scripts, cases 02-07), where they were observed with pgbench.
func TestExpressionValues(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"abs(-4)", "4"},
		{"greatest(5, 4, 3, 2)", "5"},
		{"11 + least(-5, -4, -3, -2)", "6"},
		{"int(7.3)", "7"},
		{"17 / (4|1) + ( 4 + (7 >> 2))", "8"},
		{"- (3 * 4 - (-(~ 1) + -(~ 0))) / -1 + 3 % -1", "9"},
		{"10 + (0 + 0 * 0 - 0 / 1)", "10"},
		{"64 % (((2 + 1 * 2 + (1 # 2) | 4 * (2 & 11)) - (1 << 2)) + 2)", "12"},
		{"10 + mod(13 * 7 + 12, 13) - mod(-19 * 11 - 17, 19)", "39"},
		{"-7 / 2", "-3"},
		{"-7 % 2", "-1"},
		{"int(-7.9)", "-8"},
		{"int(6.5)", "6"},
		{"int(7.5)", "8"},
		{"sqrt(+1.5 * 2.0) * abs(-0.8E1)", "13.856406460551"},
		{"pi() * 4.9", "15.39380400259"},
		{"greatest(4, 2, -1.17) * 4.0 * Ln(Exp(1.0))", "16"},
		{"least(-5.18, .0E0, 1.0/0) * -3.3", "17.094"},
		{"pow(-3,3)", "-27"},
		{"pow(2.0,10)", "1024"},
		{"pow(0,0)", "1"},
		{"pow(-2,-3)", "-0.125"},
		{"power(-5.0,-5.0)", "-0.00032"},
		{"pow(9223372036854775807, 2)", "8.50705917302346e+37"},
		{"pow(10,30)", "1e+30"},
		{"1 + 0.5", "1.5"},
		{"1.0 = 0.0 and 1.0 != 0.0", "false"},
		{"0 = 1 Or 1.0 = 1", "true"},
		{"case when 0 < 1 then 32 else 0 end", "32"},
		{"case when false THEN -1 when 1 = 1 then 13 + 19 + 2.0 end", "34"},
		{"case when (1 > 0) and (1 >= 0) and (0 < 1) and (0 <= 1) and (0 != 1) and (0 = 0) and (0 <> 1) then 35 else 0 end", "35"},
		{"CASE \\\n WHEN (1.0 > 0.0) AND (0.0 <> 1.0) \\\n THEN 36 \\\n ELSE 0 \\\n END", "36"},
		{"CASE WHEN NOT FALSE THEN 3 * 12.3333334 END", "37.0000002"},
		{"case when false then 0 when 1-1 <> 0 then 1 else 38 end", "38"},
		{"NOT (0 > 1) AND (1 <= 1) AND NOT (0 >= 1) AND (0 < 1) AND NOT (false and true) AND (false OR TRUE) AND (NOT FALSE) AND NOT (NOT TRUE)", "true"},
		{"case when false then 1 end", "NULL"},
		{"NULL + NULL * exp(NULL)", "NULL"},
		{"NULL IS NULL AND false IS NOT NULL AND false NOTNULL", "true"},
		{"NULL ISNULL AND NOT NULL IS TRUE AND NULL IS NOT FALSE", "true"},
		{"CASE WHEN 1 THEN TRUE END AND CASE WHEN 1.0 THEN TRUE END AND CASE WHEN NULL THEN NULL ELSE TRUE END", "true"},
		{"hash(10, 5432) = hash_murmur2(10, 5432)", "true"},
		{"permute(0, 2) + permute(1, 2) = 1", "true"},
		{"permute(0, 16) + permute(1, 16) + permute(2, 16) + permute(3, 16) + permute(4, 16) + permute(5, 16) + permute(6, 16) + permute(7, 16) + permute(8, 16) + permute(9, 16) + permute(10, 16) + permute(11, 16) + permute(12, 16) + permute(13, 16) + permute(14, 16) + permute(15, 16) = 120", "true"},
		{"permute(0, 2, 5431) = 0 and permute(1, 2, 5431) = 1 and permute(0, 2, 5433) = 1 and permute(1, 2, 5433) = 0", "true"},
		{"permute(9223372036854775797-1, 9223372036854775797, 5432)", "520382784483822430"},
		{"permute(9223372036854775797-7, 9223372036854775797, 5432)", "4542876852200565125"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"9223372036854775807 + 0", "9223372036854775807"},
		{"~ 1 + 2", "-4"},
		{"1 + 2 * 3 - 4 / 2", "5"},
		{"2 - 3 - 4", "-5"},
		{"5 # 3", "6"},
		{"5 & 3 | 8 # 1 << 1", "16"},
		{"1 | 2 + 3", "5"},
		{"1 << 2 + 1", "8"},
		{"not true and false", "false"},
		{"not false or true", "true"},
		{"1 is not true", "true"},
		{"null is not null", "false"},
		{"1 < 2 is true", "true"},
		{"1 isnull", "false"},
		{"1 notnull", "true"},
		{"1 isnull isnull", "false"},
		{"true is true is true", "true"},
		{"null and false", "NULL"},
		{"false and null", "false"},
		{"true or null", "true"},
		{"int(2.5)", "2"},
		{"least(1, 2.5)", "1"},
		{"greatest(3, 2.5, -1)", "3"},
		{"greatest(null, 1)", "NULL"},
		{"1 % 2.5", "1"},
		{"5.5 % 2", "0"},
		{"abs(,-5)", "5"},
		{"1 << 64", "1"},
		{"1 << 63", "-9223372036854775808"},
		{"-8 >> 65", "-4"},
		{"8 >> -1", "0"},
		{"exp(1)", "2.71828182845905"},
		{"pi()", "3.14159265358979"},
		{"123456.7890123456789", "123456.789012346"},
		{"1e15", "1e+15"},
		{"1.0/0", "Infinity"},
		{"0.0/0", "NaN"},
		{"0.0 * -1.0", "-0"},
		{"-0.0", "0"},
		{"0e-400", "0"},
		{"007", "7"},
		{"1.e3 + .5", "1000.5"},
		{"hash(10, 5432)", "-5817877081768721676"},
		{"hash_fnv1a(10, 5432)", "-7793829335365542153"},
		{"hash_fnv1a(-1, 0)", "-8289690350564177859"},
		{"permute(0, 10, 5432)", "6"},
		{"permute(1, 10, 5432)", "5"},
		{"permute(-1, 10, 5432)", "7"},
		{"permute(5, 3, 0)", "0"},
		{"permute(7, 1)", "0"},
		{"abs(-9223372036854775808)", "-9223372036854775808"},
		{"abs(true)", "4.94065645841247e-324"},
		{"case when 0.0/0 then 1 end", "1"},
		{"random(3, 3)", "3"},
		{"debug(null)", "NULL"},
	}
	vs := NewVars()
	env := NewEnv(vs)
	env.Set(vs.Slot("default_seed"), IntValue(0))
	for _, c := range cases {
		got, err := evalOne(t, vs, env, c.expr)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("%q = %s (%s), want %s", c.expr, got, got.Kind, c.want)
		}
	}
}

func TestExpressionErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"9223372036854775807 + 1", "bigint add out of range"},
		{"-9223372036854775808 - 1", "bigint sub out of range"},
		{"9223372036854775807 * 2", "bigint mul out of range"},
		{"-9223372036854775808 / -1", "bigint div out of range"},
		{"1 / 0", "division by zero"},
		{"1 % 0", "division by zero"},
		{"int(1E32)", "double to int overflow"},
		{"TRUE + 2", "cannot coerce boolean to int"},
		{"NOT 0.0", "cannot coerce double to boolean"},
		{"random(10, 1)", "empty range given to random"},
		{"random_gaussian(1, 10, 1.5)", "gaussian parameter must be at least 2.0"},
		{"random_exponential(1, 10, 0)", "exponential parameter must be greater than zero"},
		{"random_zipfian(1, 10, 1.0)", "zipfian parameter must be in range"},
		{"permute(1, 0)", "permute size parameter must be greater than zero"},
		{":nosuch + 1", `undefined variable "nosuch"`},
		{"true = true", "cannot coerce boolean to int"},
		{"1 and true", "cannot coerce int to boolean"},
		{"random(0, 9223372036854775807)", "random range is too large"},
		{"int(9223372036854775807.0)", "double to int overflow for 9223372036854775808.000000"},
		{"random_gaussian(1, 10, 1.9)", "gaussian parameter must be at least 2.000000 (not 1.900000)"},
		{"random_zipfian(1, 10, 0.5)", "zipfian parameter must be in range [1.001, 1000] (not 0.500000)"},
		{"greatest(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)", "too many function arguments, maximum is 16"},
	}
	vs := NewVars()
	env := NewEnv(vs)
	env.Set(vs.Slot("default_seed"), IntValue(0))
	for _, c := range cases {
		_, err := evalOne(t, vs, env, c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.expr, err, c.want)
		}
	}
}

// With --random-seed=5432 pgbench's first client draws these four values; the
// client's generator is seeded with the first draw of the generator seeded with
// 5432 (pgbench's TAP test 'pgbench expressions').
func TestRandomDrawsMatchPgbench(t *testing.T) {
	var base PRNG
	base.Seed(5432)
	vs := NewVars()
	env := NewEnv(vs)
	env.Rand.Seed(base.Uint64())
	want := []struct{ expr, want string }{
		{"random(10, 19)", "17"},
		{"random_exponential(100, 199, 10.0)", "104"},
		{"random_gaussian(1000, 1999, 10.0)", "1498"},
		{"random_zipfian(1, 9, 1.3)", "3"},
	}
	for _, w := range want {
		got, err := evalOne(t, vs, env, w.expr)
		if err != nil || got.String() != w.want {
			t.Errorf("%s = %v, %v; want %s", w.expr, got, err, w.want)
		}
	}
}

func TestVariableText(t *testing.T) {
	cases := []struct{ text, want string }{
		{"+3", "3"}, {"-10.1", "-10.1"}, {"false", "false"}, {"t", "true"}, {"of", "false"},
		{"1.0", "1"}, {"null", "NULL"}, {"NULL", "NULL"}, {"ye", "true"}, {"n", "false"},
		{" 12", "12"}, {"1e3", "1000"}, {"0x10", "16"}, {"-0x1p4", "-16"}, {"inf", "Infinity"}, {"0e-400", "0"},
	}
	for _, c := range cases {
		v, ok := ParseText(c.text)
		if !ok || v.String() != c.want {
			t.Errorf("ParseText(%q) = %v, %v; want %s", c.text, v, ok, c.want)
		}
	}
	for _, bad := range []string{"", "bla", "trueXXX", "o", "9223372036854775808", "12 ", "1e-400", "1e400", "+"} {
		if v, ok := ParseText(bad); ok {
			t.Errorf("ParseText(%q) = %v, want malformed", bad, v)
		}
	}
}

// Syntax errors point where pgbench's caret does: at the last character of the token
// that was found wrong, or where the line ends.
func TestExpressionSyntaxErrors(t *testing.T) {
	cases := []struct {
		expr, msg, near string
		col             int
	}{
		{"1 2", "syntax error", "", 2},
		{"1 +", "syntax error", "", 3},
		{"random(1)", "unexpected number of arguments", "random", 8},
		{"power(1)", "unexpected number of arguments", "pow", 7},
		{"least()", "at least one argument expected", "least", 6},
		{"foo(2)", "unexpected function name", "foo", 2},
		{"pi", "syntax error", "", 2},
		{"1 < 2 < 3", "syntax error", "", 6},
		{"1 is 2", "syntax error", "", 5},
		{"abs(1,)", "syntax error", "", 6},
		{"9223372036854775808", "syntax error", "", 18},
		{"-(9223372036854775808)", "syntax error", "", 20},
		{"99999999999999999999", "bigint constant overflow", "99999999999999999999", 19},
		{"1e400", "double constant overflow", "1e400", 4},
		{"1e-400", "double constant overflow", "1e-400", 5},
		{"1 -- comment", "unexpected function name", "comment", 11},
		{"1 ^ 2", "unexpected character", "^", 2},
		{":x.y", "unexpected character", ".", 2},
	}
	for _, c := range cases {
		_, err := compileExpr(c.expr, NewVars())
		if err == nil {
			t.Errorf("%q compiled", c.expr)
			continue
		}
		if err.msg != c.msg || err.near != c.near || err.col != c.col {
			t.Errorf("%q: %q (%s) at %d, want %q (%s) at %d", c.expr, err.msg, err.near, err.col, c.msg, c.near, c.col)
		}
	}
}

// pgbench seeds each client's generator, then :default_seed, from the base generator
// in that order; the values are pgbench 17's with --random-seed=5432.
func TestSeedingMatchesPgbench(t *testing.T) {
	s := NewSeeder(5432)
	c0 := s.Next()
	if got := int64(s.Uint64()); got != 7590783070443337668 {
		t.Errorf("default_seed with one client = %d", got)
	}
	_ = c0
	s = NewSeeder(5432)
	want := []int64{876805472, 519106182, 325869999}
	for i, w := range want {
		r := s.Next()
		if got, _ := r.random(1, 1000000000); got != w {
			t.Errorf("client %d: random(1, 1000000000) = %d, want %d", i, got, w)
		}
	}
	if got := int64(s.Uint64()); got != -1082569615652803502 {
		t.Errorf("default_seed with three clients = %d", got)
	}
	if got := hashMurmur2(10, 7590783070443337668); got != 4313776982099445391 {
		t.Errorf("hash(10) under the default seed = %d", got)
	}
}

// A variable's text that cannot be typed fails as pgbench says it does.
func TestVariableTextErrors(t *testing.T) {
	vs := NewVars()
	env := NewEnv(vs)
	for text, want := range map[string]string{
		"bla":                 `malformed variable "v" value: "bla"`,
		"+":                   `invalid input syntax for type bigint: "+"`,
		"9223372036854775808": `value "9223372036854775808" is out of range for type bigint`,
		"":                    "",
	} {
		env.SetText(vs.Slot("v"), text)
		_, err := evalOne(t, vs, env, ":v + 1")
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
