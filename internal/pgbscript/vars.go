package pgbscript

import (
	"math"
	"strconv"
	"strings"
	"sync"
)

// Vars names the variables of a run's scripts: each name gets a slot, shared by all
// scripts, so that a client keeps one array of values and finds each by index.
// It may grow while a run goes on (\gset names variables after its columns), so
// it is safe for concurrent use.
type Vars struct {
	mu    sync.RWMutex
	names []string
	index map[string]int
}

// NewVars returns an empty table.
func NewVars() *Vars { return &Vars{index: map[string]int{}} }

// slot returns name's slot, adding it when new.
func (vs *Vars) slot(name string) int {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if i, ok := vs.index[name]; ok {
		return i
	}
	vs.index[name] = len(vs.names)
	vs.names = append(vs.names, name)
	return len(vs.names) - 1
}

// Slot returns name's slot, adding it when new.
func (vs *Vars) Slot(name string) int { return vs.slot(name) }

// Lookup returns name's slot, if a script or the run has named it.
func (vs *Vars) Lookup(name string) (int, bool) {
	vs.mu.RLock()
	i, ok := vs.index[name]
	vs.mu.RUnlock()
	return i, ok
}

// Name is the name behind a slot.
func (vs *Vars) Name(slot int) string {
	vs.mu.RLock()
	defer vs.mu.RUnlock()
	return vs.names[slot]
}

// Len is how many variables there are.
func (vs *Vars) Len() int {
	vs.mu.RLock()
	defer vs.mu.RUnlock()
	return len(vs.names)
}

// ValidName reports whether name may be a variable's name, as pgbench requires of
// names given with -D, \set, \gset and \setshell: letters (any non-ASCII byte
// counts as one), digits and underscores, not starting with a digit.
func ValidName(name string) bool {
	if name == "" || isDigit(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isAlnum(name[i]) {
			return false
		}
	}
	return true
}

// variable is one client's value of one variable: text (from -D, \gset or
// \setshell, typed only when an expression uses it) or a typed value (from \set).
type variable struct {
	set    bool
	typed  bool
	val    Value
	text   []byte // the text; for a typed value, filled when SQL first needs it
	textOK bool   // text is current
}

// Env is one client's variables and random state, for evaluating expressions.
type Env struct {
	vars *Vars
	vals []variable
	// Rand is the client's generator for the random functions.
	Rand PRNG
	// Debug receives the lines of the debug() function.
	Debug func(line string)
}

// NewEnv returns an environment for the variables of vs.
func NewEnv(vs *Vars) *Env {
	return &Env{vars: vs, vals: make([]variable, vs.Len())}
}

func (e *Env) grow() {
	if n := e.vars.Len(); n > len(e.vals) {
		e.vals = append(e.vals, make([]variable, n-len(e.vals))...)
	}
}

// SetText sets a variable to text, typed when an expression uses it.
func (e *Env) SetText(slot int, text string) { e.SetTextBytes(slot, []byte(text)) }

// SetTextBytes is SetText for bytes, which it copies.
func (e *Env) SetTextBytes(slot int, text []byte) {
	e.grow()
	v := &e.vals[slot]
	v.set, v.typed, v.textOK = true, false, true
	v.text = append(v.text[:0], text...)
}

// Set sets a variable to a typed value.
func (e *Env) Set(slot int, val Value) {
	e.grow()
	v := &e.vals[slot]
	v.set, v.typed, v.textOK, v.val = true, true, false, val
}

// IsSet reports whether the variable has a value.
func (e *Env) IsSet(slot int) bool { return slot < len(e.vals) && e.vals[slot].set }

// Text is the variable's text as SQL gets it, valid until the variable changes;
// ok is false when the variable is not set.
func (e *Env) Text(slot int) (text []byte, ok bool) {
	if slot >= len(e.vals) || !e.vals[slot].set {
		return nil, false
	}
	v := &e.vals[slot]
	if !v.textOK {
		v.text = v.val.AppendText(v.text[:0])
		v.textOK = true
	}
	return v.text, true
}

// Get is the variable's value in an expression: text is typed here.
func (e *Env) Get(slot int) (Value, error) {
	if slot >= len(e.vals) || !e.vals[slot].set {
		// A slot beyond vals is a variable named after this client's values were
		// made, never set here.
		return Value{}, errorf("undefined variable \"%s\"", e.vars.Name(slot))
	}
	v := &e.vals[slot]
	if v.typed {
		return v.val, nil
	}
	val, ok := ParseText(string(v.text))
	switch {
	case ok:
		v.typed, v.val = true, val // typed once, as pgbench keeps it
		return val, nil
	case len(v.text) == 0:
		return Value{}, &evalError{} // pgbench says no more than that evaluation failed
	case isAnInt(string(v.text)) && strings.ContainsAny(string(v.text), "0123456789"):
		return Value{}, errorf("value \"%s\" is out of range for type bigint", v.text)
	case isAnInt(string(v.text)):
		return Value{}, errorf("invalid input syntax for type bigint: \"%s\"", v.text)
	}
	return Value{}, errorf("malformed variable \"%s\" value: \"%s\"", e.vars.Name(slot), v.text)
}

// isAnInt reports whether s looks like an integer: spaces, a sign, digits and
// nothing after them. Such text must then be a valid 64-bit integer.
func isAnInt(s string) bool {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseInt reads a 64-bit integer as PostgreSQL's strtoint64: leading spaces, a
// sign, digits, and trailing spaces.
func parseInt(s string) (int64, bool) {
	t := strings.Trim(s, " \t\n\r\f\v")
	if t != "" && t[0] == '+' {
		t = t[1:]
		if t == "" || t[0] == '-' {
			return 0, false
		}
	}
	i, err := strconv.ParseInt(t, 10, 64)
	return i, err == nil
}

// parseDouble reads a whole string as a double, as C's strtod with nothing left over;
// a value out of range is refused.
func parseDouble(s string) (float64, bool) {
	t := strings.TrimLeft(s, " \t\n\r\f\v")
	if t == "" || strings.ContainsRune(t, '_') {
		return 0, false
	}
	u := strings.TrimLeft(t, "+-")
	hex := len(u) > 2 && (u[:2] == "0x" || u[:2] == "0X")
	if hex && !strings.ContainsAny(u, "pP") {
		t += "p0" // strtod's hexadecimal without an exponent; Go wants one
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, false
	}
	if !hex && f == 0 && !zeroMantissa(u) || f != 0 && math.Abs(f) < 0x1p-1022 {
		return 0, false // an underflow, which strtod reports as an error
	}
	return f, true
}

// ShellInt reads \setshell's output line as pgbench does: C's strtol in base 10
// (spaces, a sign, digits, and only spaces after), the value cut to a C int; an
// empty line is 0.
func ShellInt(line string) (int64, bool) {
	t := strings.TrimLeft(line, " \t\n\r\f\v")
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	j := i
	for j < len(t) && isDigit(t[j]) {
		j++
	}
	if strings.TrimRight(t[j:], " \t\n\r\f\v") != "" {
		return 0, false
	}
	if j == i {
		return 0, t == ""
	}
	n, err := strconv.ParseInt(t[:j], 10, 64)
	if err != nil { // strtol saturates
		n = 9223372036854775807
		if t[0] == '-' {
			n = -9223372036854775808
		}
	}
	return int64(int32(n)), true
}
