package pgbscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a value, as pgbench has them.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Int
	Double
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "int", "double"}[k]
}

// Value is the result of an expression. It is small and passed by value, so that
// evaluation does not allocate.
type Value struct {
	Kind Kind
	I    int64 // Int; for Bool 1 or 0
	F    float64
}

// Constructors.
func IntValue(i int64) Value      { return Value{Kind: Int, I: i} }
func DoubleValue(f float64) Value { return Value{Kind: Double, F: f} }
func NullValue() Value            { return Value{} }
func BoolValue(b bool) Value {
	if b {
		return Value{Kind: Bool, I: 1}
	}
	return Value{Kind: Bool}
}

// AppendText appends the value as pgbench writes it into SQL or a variable's text:
// integers in decimal, doubles as C's "%.15g", booleans as true or false, and the
// null value as NULL.
func (v Value) AppendText(b []byte) []byte {
	switch v.Kind {
	case Int:
		return strconv.AppendInt(b, v.I, 10)
	case Double:
		return appendDouble(b, v.F)
	case Bool:
		if v.I != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	}
	return append(b, "NULL"...)
}

func (v Value) String() string { return string(v.AppendText(nil)) }

// appendDouble writes f as pgbench's "%.15g" does. Go's 'g' format with a precision
// chooses between fixed and exponent notation by the same rule and drops trailing
// zeros as C does; only the spellings of infinities and NaN differ.
func appendDouble(b []byte, f float64) []byte {
	if s, ok := nonFinite(f); ok {
		return append(b, s...)
	}
	return strconv.AppendFloat(b, f, 'g', 15, 64)
}

// nonFinite spells NaN and the infinities as PostgreSQL's snprintf does.
func nonFinite(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	}
	return "", false
}

// cFixed is C's "%f" of f, as pgbench's error messages print doubles.
func cFixed(f float64) string {
	if s, ok := nonFinite(f); ok {
		return s
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// A runtime error of an expression, worded as pgbench words it.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func errorf(format string, args ...any) error {
	return &evalError{fmt.Sprintf(format, args...)}
}

// Truth is a value's truth for \if, \elif and CASE: booleans as they are, numbers
// when not zero (NaN too), NULL false.
func (v Value) Truth() bool {
	switch v.Kind {
	case Bool, Int:
		return v.I != 0
	case Double:
		return v.F != 0
	}
	return false
}

// toBool coerces a value to a boolean where pgbench requires one.
func (v Value) toBool() (bool, error) {
	switch v.Kind {
	case Bool:
		return v.I != 0, nil
	case Null:
		return false, errorf("cannot coerce null to boolean")
	}
	return false, errorf("cannot coerce %s to boolean", v.Kind)
}

// toInt coerces a value to an integer: a double is rounded to the nearest integer,
// halves to even, as C's rint.
func (v Value) toInt() (int64, error) {
	switch v.Kind {
	case Int:
		return v.I, nil
	case Double:
		r := math.RoundToEven(v.F)
		if math.IsNaN(r) || r < -9223372036854775808.0 || r >= 9223372036854775808.0 {
			return 0, errorf("double to int overflow for %s", cFixed(v.F))
		}
		return int64(r), nil
	case Bool:
		return 0, errorf("cannot coerce boolean to int")
	}
	return 0, errorf("cannot coerce null to int")
}

// toDouble coerces a value to a double.
func (v Value) toDouble() (float64, error) {
	switch v.Kind {
	case Double:
		return v.F, nil
	case Int:
		return float64(v.I), nil
	case Bool:
		return 0, errorf("cannot coerce boolean to double")
	}
	return 0, errorf("cannot coerce null to double")
}

// ParseText types a variable's text (from -D, \gset or \setshell) when an expression
// uses it, as pgbench does: "null" is the null value; prefixes of true, yes, false
// and no, and on, off and of, are booleans; then an integer, else a double. An empty
// text, an integer out of range or anything else is malformed (ok false).
func ParseText(s string) (v Value, ok bool) {
	if s == "" {
		return Value{}, false
	}
	lower := strings.ToLower(s)
	switch {
	case lower == "null":
		return NullValue(), true
	case strings.HasPrefix("true", lower), strings.HasPrefix("yes", lower), lower == "on":
		return BoolValue(true), true
	case strings.HasPrefix("false", lower), strings.HasPrefix("no", lower), lower == "off", lower == "of":
		return BoolValue(false), true
	case isAnInt(s):
		i, ok := parseInt(s)
		return IntValue(i), ok
	}
	f, ok := parseDouble(s)
	return DoubleValue(f), ok
}
