package pgbscript

import (
	"math"
	"strings"
)

// The tokens of pgbench's expression language.
type tokKind uint8

const (
	tEOF tokKind = iota
	tInt
	tMaxIntPlusOne // 9223372036854775808, valid only after a unary minus
	tDouble
	tVar
	tFunc // a name; only a function call may use one
	tOp   // an operator or punctuation, in tok.text
	// Keywords, matched without regard to case.
	tAnd
	tOr
	tNot
	tIs
	tIsNull
	tNotNull
	tNull
	tTrue
	tFalse
	tCase
	tWhen
	tThen
	tElse
	tEnd
)

var keywords = map[string]tokKind{
	"and": tAnd, "or": tOr, "not": tNot, "is": tIs, "isnull": tIsNull, "notnull": tNotNull,
	"null": tNull, "true": tTrue, "false": tFalse,
	"case": tCase, "when": tWhen, "then": tThen, "else": tElse, "end": tEnd,
}

type token struct {
	kind tokKind
	text string
	i    int64
	f    float64
	col  int // offset of the token in the expression's text
	end  int // offset just past it
}

// last is the offset of the token's last character, where pgbench's caret points;
// for the end of the text, the offset where the line ends.
func (t token) last() int {
	if t.end > t.col {
		return t.end - 1
	}
	return t.col
}

func isAlpha(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }

// lexer splits an expression into tokens. A backslash at the end of a line continues
// the command on the next one and counts as a space.
type lexer struct {
	src string
	pos int
}

// skipSpace passes spaces and line continuations.
func (l *lexer) skipSpace() {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n':
			l.pos++
		case c == '\\' && strings.HasPrefix(l.src[l.pos+1:], "\n"):
			l.pos += 2
		case c == '\\' && strings.HasPrefix(l.src[l.pos+1:], "\r\n"):
			l.pos += 3
		default:
			return
		}
	}
}

// next reads one token; an error is a syntax error at the returned token's column.
func (l *lexer) next() (token, *syntaxErr) {
	t, err := l.scan()
	t.end = l.pos
	return t, err
}

func (l *lexer) scan() (token, *syntaxErr) {
	l.skipSpace()
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tEOF, col: start}, nil
	}
	s := l.src
	c := s[l.pos]
	switch {
	case c == ':':
		j := l.pos + 1
		for j < len(s) && isAlnum(s[j]) { // the lexer lets a name start with a digit
			j++
		}
		if j == l.pos+1 {
			return token{}, &syntaxErr{msg: "unexpected character", near: ":", col: start}
		}
		l.pos = j
		return token{kind: tVar, text: s[start+1 : j], col: start}, nil
	case isDigit(c) || c == '.' && l.pos+1 < len(s) && isDigit(s[l.pos+1]):
		return l.number()
	case isAlpha(c):
		j := l.pos
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		l.pos = j
		word := s[start:j]
		if k, ok := keywords[strings.ToLower(word)]; ok {
			return token{kind: k, text: word, col: start}, nil
		}
		return token{kind: tFunc, text: word, col: start}, nil
	}
	for _, op := range [...]string{"<>", "!=", "<=", ">=", "<<", ">>"} {
		if strings.HasPrefix(s[l.pos:], op) {
			l.pos += 2
			return token{kind: tOp, text: op, col: start}, nil
		}
	}
	if strings.IndexByte("+-*/%=<>|&#~(),", c) >= 0 {
		l.pos++
		return token{kind: tOp, text: s[start:l.pos], col: start}, nil
	}
	return token{}, &syntaxErr{msg: "unexpected character", near: s[start : start+1], col: start}
}

// number reads an integer or a double: digits with a point or an exponent are a
// double ("1.", ".5", "1e3").
func (l *lexer) number() (token, *syntaxErr) {
	s, start := l.src, l.pos
	j := start
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	double := false
	if j < len(s) && s[j] == '.' {
		double = true
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			double = true
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	l.pos = j
	text := s[start:j]
	if double {
		f, ok := parseDouble(text)
		if !ok || f == 0 && strings.Trim(text, "0.") != "" && !zeroMantissa(text) || f != 0 && math.Abs(f) < 0x1p-1022 {
			// C's strtod reports underflow as it does overflow.
			return token{}, &syntaxErr{msg: "double constant overflow", col: j - 1, near: text}
		}
		return token{kind: tDouble, f: f, text: text, col: start}, nil
	}
	if text == "9223372036854775808" {
		return token{kind: tMaxIntPlusOne, text: text, col: start}, nil
	}
	i, ok := parseInt(text)
	if !ok {
		return token{}, &syntaxErr{msg: "bigint constant overflow", col: j - 1, near: text}
	}
	return token{kind: tInt, i: i, text: text, col: start}, nil
}

// zeroMantissa reports whether a double constant's digits before its exponent are
// all zeros, so that a zero value is exact and not an underflow.
func zeroMantissa(text string) bool {
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == 'e' || c == 'E':
			return true
		case c != '0' && c != '.':
			return false
		}
	}
	return true
}
