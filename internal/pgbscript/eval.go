package pgbscript

import (
	"math"
	"math/bits"
)

// Eval evaluates the expression for a client.
func (x *Expr) Eval(env *Env) (Value, error) { return env.eval(x.root) }

func (e *Env) eval(n *node) (Value, error) {
	switch n.f {
	case fConst:
		return n.val, nil
	case fVar:
		return e.Get(n.slot)
	case fAnd, fOr:
		return e.evalAndOr(n)
	case fCase:
		last := len(n.args) - 1
		for i := 0; i < last; i += 2 {
			c, err := e.eval(n.args[i])
			if err != nil {
				return Value{}, err
			}
			if c.Truth() {
				return e.eval(n.args[i+1])
			}
		}
		return e.eval(n.args[last])
	}
	// Every other function takes its arguments evaluated. At most three are kept
	// on the stack; greatest and least fold theirs as they go.
	switch n.f {
	case fGreatest, fLeast:
		return e.evalExtreme(n)
	case fPi:
		return DoubleValue(math.Pi), nil
	}
	var a [3]Value
	null := false
	for i, arg := range n.args {
		v, err := e.eval(arg)
		if err != nil {
			return Value{}, err
		}
		a[i] = v
		null = null || v.Kind == Null
	}
	if null && n.f != fIs && n.f != fDebug {
		return NullValue(), nil // a null argument makes the result null
	}
	switch len(n.args) {
	case 1:
		return e.unaryFunc(n.f, a[0])
	case 2:
		return e.binaryFunc(n.f, a[0], a[1])
	}
	return e.ternaryFunc(n.f, a[0], a[1], a[2])
}

// evalAndOr is pgbench's lazy AND and OR on booleans: a null left side makes the
// result null (null AND false is null, unlike SQL), and the right side is evaluated
// only when the left does not decide.
func (e *Env) evalAndOr(n *node) (Value, error) {
	l, err := e.eval(n.args[0])
	if err != nil {
		return Value{}, err
	}
	if l.Kind == Null {
		return NullValue(), nil
	}
	lt, err := l.toBool()
	if err != nil {
		return Value{}, err
	}
	if n.f == fAnd && !lt {
		return BoolValue(false), nil
	}
	if n.f == fOr && lt {
		return BoolValue(true), nil
	}
	r, err := e.eval(n.args[1])
	if err != nil {
		return Value{}, err
	}
	if r.Kind == Null {
		return NullValue(), nil
	}
	rt, err := r.toBool()
	return BoolValue(rt), err
}

// maxArgs is the most arguments pgbench evaluates for one function call.
const maxArgs = 16

// evalExtreme is greatest and least: doubles when any argument is one, else ints.
func (e *Env) evalExtreme(n *node) (Value, error) {
	var vals [maxArgs]Value
	double, null := false, false
	for i, arg := range n.args {
		if i == maxArgs {
			return Value{}, errorf("too many function arguments, maximum is %d", maxArgs)
		}
		v, err := e.eval(arg)
		if err != nil {
			return Value{}, err
		}
		vals[i] = v
		null = null || v.Kind == Null
		double = double || v.Kind == Double
	}
	if null {
		return NullValue(), nil
	}
	args := vals[:len(n.args)]
	// Folded as pgbench does, which decides where a NaN ends up:
	// greatest keeps the running value only while it is greater than the next.
	if double {
		ext, err := args[0].toDouble()
		if err != nil {
			return Value{}, err
		}
		for _, v := range args[1:] {
			d, err := v.toDouble()
			if err != nil {
				return Value{}, err
			}
			if n.f == fGreatest && !(ext > d) || n.f == fLeast && !(ext < d) {
				ext = d
			}
		}
		return DoubleValue(ext), nil
	}
	ext, err := args[0].toInt()
	if err != nil {
		return Value{}, err
	}
	for _, v := range args[1:] {
		d, err := v.toInt()
		if err != nil {
			return Value{}, err
		}
		if n.f == fGreatest && d > ext || n.f == fLeast && d < ext {
			ext = d
		}
	}
	return IntValue(ext), nil
}

func (e *Env) unaryFunc(f fn, a Value) (Value, error) {
	switch f {
	case fNot:
		b, err := a.toBool()
		if err != nil {
			return Value{}, err
		}
		return BoolValue(!b), nil
	case fAbs:
		switch a.Kind {
		case Int:
			if a.I < 0 {
				return IntValue(-a.I), nil
			}
			return a, nil
		case Double:
			if a.F < 0 {
				return DoubleValue(-a.F), nil
			}
			return a, nil
		}
		// pgbench reads a boolean's storage as a double here: true is the
		// smallest subnormal, false zero.
		return DoubleValue(math.Float64frombits(uint64(a.I))), nil
	case fDebug:
		if e.Debug != nil {
			e.Debug(debugText(a))
		}
		return a, nil
	case fDouble:
		d, err := a.toDouble()
		return DoubleValue(d), err
	case fInt:
		i, err := a.toInt()
		return IntValue(i), err
	case fExp, fLn, fSqrt:
		d, err := a.toDouble()
		if err != nil {
			return Value{}, err
		}
		switch f {
		case fExp:
			return DoubleValue(math.Exp(d)), nil
		case fLn:
			return DoubleValue(math.Log(d)), nil
		}
		return DoubleValue(math.Sqrt(d)), nil
	}
	return Value{}, errorf("unexpected function")
}

// debugText is what debug() prints for a value.
func debugText(v Value) string {
	switch v.Kind {
	case Int:
		return "int " + v.String()
	case Double:
		return "double " + v.String()
	case Bool:
		return "boolean " + v.String()
	}
	return "null"
}

func (e *Env) binaryFunc(f fn, a, b Value) (Value, error) {
	switch f {
	case fAdd, fSub, fMul, fDiv:
		if a.Kind != Double && b.Kind != Double {
			x, y, err := ints(a, b)
			if err != nil {
				return Value{}, err
			}
			return intArith(f, x, y)
		}
		x, y, err := doubles(a, b)
		if err != nil {
			return Value{}, err
		}
		switch f {
		case fAdd:
			return DoubleValue(x + y), nil
		case fSub:
			return DoubleValue(x - y), nil
		case fMul:
			return DoubleValue(x * y), nil
		}
		return DoubleValue(x / y), nil // by zero: an infinity, as in C
	case fEq, fNe, fLt, fLe:
		return compare(f, a, b)
	case fIs:
		return BoolValue(a.Kind == b.Kind && (a.Kind == Null || a.I == b.I)), nil
	case fPow:
		x, y, err := doubles(a, b)
		if err != nil {
			return Value{}, err
		}
		return DoubleValue(math.Pow(x, y)), nil
	}
	x, y, err := ints(a, b)
	if err != nil {
		return Value{}, err
	}
	switch f {
	case fMod, fModFunc:
		if y == 0 {
			return Value{}, errorf("division by zero")
		}
		if y == -1 {
			return IntValue(0), nil // INT64_MIN % -1 would trap
		}
		return IntValue(x % y), nil
	case fBitAnd:
		return IntValue(x & y), nil
	case fBitOr:
		return IntValue(x | y), nil
	case fBitXor:
		return IntValue(x ^ y), nil
	case fShl:
		return IntValue(x << (uint64(y) & 63)), nil
	case fShr:
		return IntValue(x >> (uint64(y) & 63)), nil
	case fHash, fHashMurmur2:
		return IntValue(hashMurmur2(x, uint64(y))), nil
	case fHashFNV1a:
		return IntValue(hashFNV1a(x, uint64(y))), nil
	case fRandom:
		r, err := e.Rand.random(x, y)
		return IntValue(r), err
	}
	return Value{}, errorf("unexpected function")
}

func (e *Env) ternaryFunc(f fn, a, b, c Value) (Value, error) {
	lo, hi, err := ints(a, b)
	if err != nil {
		return Value{}, err
	}
	if f == fPermute {
		seed, err := c.toInt()
		if err != nil {
			return Value{}, err
		}
		r, err := permute(lo, hi, seed)
		return IntValue(r), err
	}
	if err := checkRange(lo, hi); err != nil {
		return Value{}, err
	}
	param, err := c.toDouble()
	if err != nil {
		return Value{}, err
	}
	var r int64
	switch f {
	case fRandomExponential:
		r, err = e.Rand.exponential(lo, hi, param)
	case fRandomGaussian:
		r, err = e.Rand.gaussian(lo, hi, param)
	case fRandomZipfian:
		r, err = e.Rand.zipfian(lo, hi, param)
	default:
		return Value{}, errorf("unexpected function")
	}
	return IntValue(r), err
}

// intArith is +, -, * and / on integers, with pgbench's overflow errors.
func intArith(f fn, x, y int64) (Value, error) {
	switch f {
	case fAdd:
		r := x + y
		if (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
			return Value{}, errorf("bigint add out of range")
		}
		return IntValue(r), nil
	case fSub:
		r := x - y
		if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
			return Value{}, errorf("bigint sub out of range")
		}
		return IntValue(r), nil
	case fMul:
		hi, lo := bits.Mul64(uint64(abs64(x)), uint64(abs64(y)))
		neg := (x < 0) != (y < 0)
		limit := uint64(math.MaxInt64)
		if neg {
			limit++
		}
		if hi != 0 || lo > limit {
			return Value{}, errorf("bigint mul out of range")
		}
		if neg {
			return IntValue(int64(-lo)), nil
		}
		return IntValue(int64(lo)), nil
	}
	if y == 0 {
		return Value{}, errorf("division by zero")
	}
	if y == -1 {
		if x == math.MinInt64 {
			return Value{}, errorf("bigint div out of range")
		}
		return IntValue(-x), nil
	}
	return IntValue(x / y), nil
}

// abs64 is |x| as an unsigned magnitude (so that |MinInt64| fits).
func abs64(x int64) uint64 {
	if x < 0 {
		return uint64(-x)
	}
	return uint64(x)
}

// compare is =, <>, < and <=: on doubles when either side is one, else on integers.
func compare(f fn, a, b Value) (Value, error) {
	if a.Kind != Double && b.Kind != Double {
		x, y, err := ints(a, b)
		if err != nil {
			return Value{}, err
		}
		return BoolValue(compared(f, x, y)), nil
	}
	x, y, err := doubles(a, b)
	if err != nil {
		return Value{}, err
	}
	return BoolValue(compared(f, x, y)), nil
}

func compared[T int64 | float64](f fn, x, y T) bool {
	switch f {
	case fEq:
		return x == y
	case fNe:
		return x != y
	case fLt:
		return x < y
	}
	return x <= y
}

// ints coerces both operands to integers, doubles to doubles.
func ints(a, b Value) (int64, int64, error) {
	x, err := a.toInt()
	if err != nil {
		return 0, 0, err
	}
	y, err := b.toInt()
	return x, y, err
}

func doubles(a, b Value) (float64, float64, error) {
	x, err := a.toDouble()
	if err != nil {
		return 0, 0, err
	}
	y, err := b.toDouble()
	return x, y, err
}
