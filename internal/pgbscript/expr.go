package pgbscript

import (
	"strings"
)

// fn names what a node computes. Operators are functions too, as in pgbench.
type fn uint8

const (
	fConst fn = iota
	fVar
	// Lazy: not every argument is evaluated.
	fAnd
	fOr
	fCase // args: when, then, when, then, ..., else
	// Operators.
	fAdd
	fSub
	fMul
	fDiv
	fMod
	fEq
	fNe
	fLt
	fLe
	fBitAnd
	fBitOr
	fBitXor
	fShl
	fShr
	fNot
	fIs
	// Functions by name.
	fAbs
	fDebug
	fDouble
	fExp
	fGreatest
	fHash // hash is hash_murmur2
	fHashFNV1a
	fHashMurmur2
	fInt
	fLeast
	fLn
	fModFunc
	fPermute
	fPi
	fPow
	fRandom
	fRandomExponential
	fRandomGaussian
	fRandomZipfian
	fSqrt
)

// funcs are the functions a script may call by name, with their numbers of
// arguments: min and max, max -1 for any number.
var funcs = map[string]struct {
	f        fn
	min, max int
}{
	"abs": {fAbs, 1, 1}, "debug": {fDebug, 1, 1}, "double": {fDouble, 1, 1},
	"exp": {fExp, 1, 1}, "greatest": {fGreatest, 1, -1}, "hash": {fHash, 1, 2},
	"hash_fnv1a": {fHashFNV1a, 1, 2}, "hash_murmur2": {fHashMurmur2, 1, 2},
	"int": {fInt, 1, 1}, "least": {fLeast, 1, -1}, "ln": {fLn, 1, 1},
	"mod": {fModFunc, 2, 2}, "permute": {fPermute, 2, 3}, "pi": {fPi, 0, 0},
	"pow": {fPow, 2, 2}, "power": {fPow, 2, 2}, "random": {fRandom, 2, 2},
	"random_exponential": {fRandomExponential, 3, 3},
	"random_gaussian":    {fRandomGaussian, 3, 3},
	"random_zipfian":     {fRandomZipfian, 3, 3}, "sqrt": {fSqrt, 1, 1},
}

// Expr is a compiled expression.
type Expr struct {
	root *node
	text string
}

type node struct {
	f    fn
	val  Value // fConst
	slot int   // fVar: the variable's index in the Vars table
	args []*node
}

// Precedence levels, from loosest to tightest, as pgbench's grammar declares them.
const (
	precOr = iota + 1
	precAnd
	precNot
	precIs // IS, ISNULL, NOTNULL; non-associative
	precCmp
	precBit
	precAdd
	precMul
	precUnary
)

type binop struct {
	prec     int
	f        fn
	swap     bool // a > b is b < a
	nonassoc bool
}

var binops = map[string]binop{
	"+": {precAdd, fAdd, false, false}, "-": {precAdd, fSub, false, false},
	"*": {precMul, fMul, false, false}, "/": {precMul, fDiv, false, false},
	"%": {precMul, fMod, false, false},
	"=": {precCmp, fEq, false, true}, "<>": {precCmp, fNe, false, true},
	"!=": {precCmp, fNe, false, true}, "<": {precCmp, fLt, false, true},
	"<=": {precCmp, fLe, false, true}, ">": {precCmp, fLt, true, true},
	">=": {precCmp, fLe, true, true},
	"&":  {precBit, fBitAnd, false, false}, "|": {precBit, fBitOr, false, false},
	"#": {precBit, fBitXor, false, false}, "<<": {precBit, fShl, false, false},
	">>": {precBit, fShr, false, false},
}

// syntaxErr is an error in an expression's text; col is the offset in it that
// pgbench's caret points at.
type syntaxErr struct {
	msg  string
	near string // the offending text, when pgbench names it
	col  int
}

// parser reads one expression; vars resolves variable names to slots.
type parser struct {
	lx   lexer
	tok  token
	vars *Vars
}

func (p *parser) advance() *syntaxErr {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// fail reports a syntax error at the current token: at its last character, or where
// the line ends.
func (p *parser) fail(msg string) *syntaxErr {
	return &syntaxErr{msg: msg, col: p.tok.last()}
}

// compileExpr compiles src, which must be a whole expression.
func compileExpr(src string, vars *Vars) (*Expr, *syntaxErr) {
	p := &parser{lx: lexer{src: src}, vars: vars}
	if err := p.advance(); err != nil {
		return nil, err
	}
	n, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.fail("syntax error")
	}
	return &Expr{root: n, text: src}, nil
}

func (p *parser) is(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

// expr parses an expression whose operators all bind tighter than min, the way a
// yacc parser with pgbench's precedence declarations resolves them.
func (p *parser) expr(min int) (*node, *syntaxErr) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	lastNonassoc := 0
	for {
		var prec int
		switch p.tok.kind {
		case tOr:
			prec = precOr
		case tAnd:
			prec = precAnd
		case tIs, tIsNull, tNotNull:
			prec = precIs
		case tOp:
			b, ok := binops[p.tok.text]
			if !ok {
				return left, nil
			}
			prec = b.prec
		default:
			return left, nil
		}
		if prec <= min {
			return left, nil
		}
		if prec == lastNonassoc {
			return nil, p.fail("syntax error")
		}
		switch p.tok.kind {
		case tOr, tAnd:
			f := fOr
			if p.tok.kind == tAnd {
				f = fAnd
			}
			if err := p.advance(); err != nil {
				return nil, err
			}
			right, err := p.expr(prec)
			if err != nil {
				return nil, err
			}
			left = &node{f: f, args: []*node{left, right}}
		case tIsNull, tNotNull:
			// The postfix IS forms chain (1 ISNULL ISNULL); only the binary
			// comparisons cannot.
			neg := p.tok.kind == tNotNull
			if err := p.advance(); err != nil {
				return nil, err
			}
			left = isNode(left, NullValue(), neg)
			lastNonassoc = 0
		case tIs:
			if left, err = p.isTail(left); err != nil {
				return nil, err
			}
			lastNonassoc = 0
		default:
			b := binops[p.tok.text]
			if err := p.advance(); err != nil {
				return nil, err
			}
			right, err := p.expr(prec)
			if err != nil {
				return nil, err
			}
			if b.swap {
				left, right = right, left
			}
			left = &node{f: b.f, args: []*node{left, right}}
			if b.nonassoc {
				lastNonassoc = prec
			} else {
				lastNonassoc = 0
			}
		}
	}
}

// isTail parses what follows IS: [NOT] NULL, TRUE or FALSE.
func (p *parser) isTail(left *node) (*node, *syntaxErr) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	neg := false
	if p.tok.kind == tNot {
		neg = true
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	var v Value
	switch p.tok.kind {
	case tNull:
		v = NullValue()
	case tTrue:
		v = BoolValue(true)
	case tFalse:
		v = BoolValue(false)
	default:
		return nil, p.fail("syntax error")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	return isNode(left, v, neg), nil
}

func isNode(left *node, v Value, neg bool) *node {
	n := &node{f: fIs, args: []*node{left, {f: fConst, val: v}}}
	if neg {
		n = &node{f: fNot, args: []*node{n}}
	}
	return n
}

// unary parses an operand with its prefix operators.
func (p *parser) unary() (*node, *syntaxErr) {
	t := p.tok
	switch {
	case t.kind == tOp && t.text == "+":
		if err := p.advance(); err != nil {
			return nil, err
		}
		return p.expr(precUnary)
	case t.kind == tOp && t.text == "-":
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind == tMaxIntPlusOne {
			if err := p.advance(); err != nil {
				return nil, err
			}
			return &node{f: fConst, val: IntValue(-9223372036854775808)}, nil
		}
		n, err := p.expr(precUnary)
		if err != nil {
			return nil, err
		}
		return &node{f: fSub, args: []*node{{f: fConst, val: IntValue(0)}, n}}, nil
	case t.kind == tOp && t.text == "~":
		// The grammar gives ~ the precedence of the bitwise operators, not of the
		// unary ones: ~ 1 + 2 is ~(1 + 2).
		if err := p.advance(); err != nil {
			return nil, err
		}
		n, err := p.expr(precBit)
		if err != nil {
			return nil, err
		}
		return &node{f: fBitXor, args: []*node{{f: fConst, val: IntValue(-1)}, n}}, nil
	case t.kind == tNot:
		if err := p.advance(); err != nil {
			return nil, err
		}
		n, err := p.expr(precNot)
		if err != nil {
			return nil, err
		}
		return &node{f: fNot, args: []*node{n}}, nil
	case t.kind == tOp && t.text == "(":
		if err := p.advance(); err != nil {
			return nil, err
		}
		n, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if !p.is(")") {
			return nil, p.fail("syntax error")
		}
		return n, p.advance()
	case t.kind == tInt:
		return &node{f: fConst, val: IntValue(t.i)}, p.advance()
	case t.kind == tDouble:
		return &node{f: fConst, val: DoubleValue(t.f)}, p.advance()
	case t.kind == tNull:
		return &node{f: fConst, val: NullValue()}, p.advance()
	case t.kind == tTrue || t.kind == tFalse:
		return &node{f: fConst, val: BoolValue(t.kind == tTrue)}, p.advance()
	case t.kind == tVar:
		return &node{f: fVar, slot: p.vars.slot(t.text)}, p.advance()
	case t.kind == tCase:
		return p.caseExpr()
	case t.kind == tFunc:
		return p.call()
	}
	return nil, p.fail("syntax error")
}

// caseExpr parses CASE WHEN c THEN v ... [ELSE v] END.
func (p *parser) caseExpr() (*node, *syntaxErr) {
	n := &node{f: fCase}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind != tWhen {
		return nil, p.fail("syntax error")
	}
	for p.tok.kind == tWhen {
		if err := p.advance(); err != nil {
			return nil, err
		}
		cond, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tThen {
			return nil, p.fail("syntax error")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		val, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, cond, val)
	}
	els := &node{f: fConst, val: NullValue()}
	if p.tok.kind == tElse {
		if err := p.advance(); err != nil {
			return nil, err
		}
		var err *syntaxErr
		if els, err = p.expr(0); err != nil {
			return nil, err
		}
	}
	if p.tok.kind != tEnd {
		return nil, p.fail("syntax error")
	}
	n.args = append(n.args, els)
	return n, p.advance()
}

// call parses a function call. hash and permute without a seed take :default_seed.
func (p *parser) call() (*node, *syntaxErr) {
	name := p.tok
	def, ok := funcs[strings.ToLower(name.text)]
	if !ok {
		return nil, &syntaxErr{msg: "unexpected function name", col: name.last(), near: name.text}
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if !p.is("(") {
		return nil, p.fail("syntax error")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	n := &node{f: def.f}
	leadingComma := p.is(",")
	if leadingComma {
		// The grammar's argument list may start with a comma: abs(,-5) is abs(-5).
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	if leadingComma || !p.is(")") {
		for {
			a, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			n.args = append(n.args, a)
			if p.is(")") {
				break
			}
			if !p.is(",") {
				return nil, p.fail("syntax error")
			}
			if err := p.advance(); err != nil {
				return nil, err
			}
		}
	}
	if def.max < 0 && len(n.args) == 0 {
		return nil, &syntaxErr{msg: "at least one argument expected", col: p.tok.last(), near: canonical(def.f)}
	}
	if len(n.args) < def.min || def.max >= 0 && len(n.args) > def.max {
		return nil, &syntaxErr{msg: "unexpected number of arguments", col: p.tok.last(), near: canonical(def.f)}
	}
	switch def.f {
	case fHash, fHashFNV1a, fHashMurmur2:
		if len(n.args) == 1 {
			n.args = append(n.args, &node{f: fVar, slot: p.vars.slot("default_seed")})
		}
	case fPermute:
		if len(n.args) == 2 {
			n.args = append(n.args, &node{f: fVar, slot: p.vars.slot("default_seed")})
		}
	}
	return n, p.advance()
}

// canonical is a function's name as pgbench's errors spell it.
func canonical(f fn) string {
	best := ""
	for name, d := range funcs {
		if d.f == f && (best == "" || name < best) {
			best = name
		}
	}
	return best
}
