package study

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/suggest"
)

// Pos is a place in the study file. Line and Col count from 1; zero means
// unknown, and a zero Col alone means only the line is known.
type Pos struct {
	Line, Col int
}

// String is "12:5", "12" when only the line is known, or "" when nothing is.
func (p Pos) String() string {
	switch {
	case p.Line <= 0:
		return ""
	case p.Col <= 0:
		return fmt.Sprint(p.Line)
	}
	return fmt.Sprintf("%d:%d", p.Line, p.Col)
}

func (p Pos) compare(q Pos) int {
	if p.Line != q.Line {
		return p.Line - q.Line
	}
	return p.Col - q.Col
}

// Error is one problem at a place in a study file.
type Error struct {
	File string
	Pos  Pos
	Msg  string
}

// Error is "file:line:col: msg", leaving out what is not known.
func (e *Error) Error() string {
	where := e.File
	if p := e.Pos.String(); p != "" {
		if where != "" {
			where += ":"
		}
		where += p
	}
	if where == "" {
		return e.Msg
	}
	return where + ": " + e.Msg
}

// Errors is every problem found in a study file. Parse returns them sorted by
// position; a caller adding its own (with Study.Errorf) returns Errors.Err().
type Errors []*Error

// Error puts one error per line, sorted by position.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es.sorted() {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives each *Error to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// Err is nil when there are no errors, and otherwise the errors sorted by
// position.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es.sorted()
}

func (es Errors) sorted() Errors {
	s := slices.Clone(es)
	slices.SortStableFunc(s, func(a, b *Error) int { return a.Pos.compare(b.Pos) })
	return s
}

// Errorf makes an error at pos in the study's file, for problems the caller
// finds in what Parse accepted, such as an option its command does not have.
func (s *Study) Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{File: s.File, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Suggest returns the known word closest to word when it is close enough to
// be a likely typo and no other is as close, or "".
func Suggest(word string, known []string) string { return suggest.One(word, known) }

// oneOf lists words for a message: "a, b or c".
func oneOf(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
