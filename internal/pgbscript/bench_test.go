package pgbscript

import "testing"

// compiledSets is a script's \set lines as the interpreter evaluates them for each
// transaction: draws, arithmetic, a CASE, a hash and a permute.
var compiledSets = []string{
	"random(1, 100000 * :scale)",
	"random_gaussian(1, 100000, 2.5)",
	"random_zipfian(1, 1000, 1.1)",
	"(:aid * 3 + :bid) % 1000 + abs(-5) * greatest(1, 2.5, :tid)",
	"case when :aid > 500 then hash(:aid) else permute(:aid, 1000) end",
}

func setup(tb testing.TB) (*Env, []*Expr, []int) {
	vs := NewVars()
	var xs []*Expr
	var slots []int
	for i, src := range compiledSets {
		x, err := compileExpr(src, vs)
		if err != nil {
			tb.Fatalf("%s: %s", src, err.msg)
		}
		xs = append(xs, x)
		slots = append(slots, vs.Slot([]string{"aid", "bid", "tid", "x", "y"}[i]))
	}
	env := NewEnv(vs)
	env.Rand.Seed(1)
	env.Set(vs.Slot("scale"), IntValue(10))
	env.Set(vs.Slot("default_seed"), IntValue(7))
	env.SetText(vs.Slot("tid"), "12") // typed on first use, as a -D value
	return env, xs, slots
}

func runSets(env *Env, xs []*Expr, slots []int) error {
	for i, x := range xs {
		v, err := x.Eval(env)
		if err != nil {
			return err
		}
		env.Set(slots[i], v)
		env.Text(slots[i]) // as SQL would send it
	}
	return nil
}

// Evaluating compiled expressions and writing their values as text allocates
// nothing once the buffers have grown.
func TestEvaluationDoesNotAllocate(t *testing.T) {
	env, xs, slots := setup(t)
	if err := runSets(env, xs, slots); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() { runSets(env, xs, slots) }); n != 0 {
		t.Errorf("%.1f allocations per transaction's \\set lines, want 0", n)
	}
}

func BenchmarkSet(b *testing.B) {
	env, xs, slots := setup(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := runSets(env, xs, slots); err != nil {
			b.Fatal(err)
		}
	}
}
