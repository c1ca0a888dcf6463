package pgbscript

import (
	"fmt"
	"strings"
)

// Kind is what a command does.
type CmdKind uint8

const (
	SQL CmdKind = iota
	Set
	Sleep
	SetShell
	Shell
	If
	Elif
	Else
	Endif
	StartPipeline
	SyncPipeline
	EndPipeline
)

var metaNames = map[string]CmdKind{
	"set": Set, "sleep": Sleep, "setshell": SetShell, "shell": Shell,
	"if": If, "elif": Elif, "else": Else, "endif": Endif,
	"startpipeline": StartPipeline, "syncpipeline": SyncPipeline, "endpipeline": EndPipeline,
}

// Store says what a SQL command does with its results: \gset keeps the columns of
// its one row, \aset those of the last row of every result.
type Store uint8

const (
	NoStore Store = iota
	Gset
	Aset
)

// Command is one command of a script: a SQL command or a meta command.
type Command struct {
	Kind CmdKind
	Name string // the meta command's name as written, for messages
	Line int    // the line it starts on, from 1
	// FirstLine is how pgbench's -r report shows the command: its text up to the
	// first line break (SQL, at most 127 bytes), or the whole meta command.
	FirstLine string

	// SQL: the text as written, with its variable references, and what to do with
	// the results.
	SQL         string
	Refs        []VarRef
	Store       Store
	StorePrefix string

	// \set, \setshell: the variable set; \sleep: the variable read.
	Var     int
	VarName string
	// \set, \if, \elif: the expression.
	Expr *Expr
	// \sleep: a number or a variable, and the unit in microseconds.
	SleepUs  int64
	SleepVar string // set when the amount is a variable
	SleepN   int64
	// \shell, \setshell: the words of the command, variables resolved when run.
	Words []string
}

// VarRef is a :name in SQL text, at SQL[Start:End]. Quote is ' for :'name' and "
// for :"name", psql's forms that write the value as a quoted literal or identifier;
// 0 for :name.
type VarRef struct {
	Start, End int
	Slot       int
	Name       string
	Quote      byte
}

// Script is a parsed script file.
type Script struct {
	Name     string // the file name as given, or a builtin's description
	Commands []*Command
}

// ParseError is a script that does not parse, told as pgbench tells it: the file,
// the line, what is wrong (with the offending text), the command, the command's
// text and a caret under the place.
type ParseError struct {
	File   string
	Line   int
	Msg    string
	More   string // the offending text, when there is one
	Cmd    string // the meta command's name, when the error is in one
	Source string // the command's text, shown under the message
	Col    int    // where the caret goes in Source; -1 for none
}

func (e *ParseError) Error() string { return e.format(false) }

// Located is the error with the column after the line (file:line:column:), the
// caret's column counted from 1, for tools and editors that jump to a position.
func (e *ParseError) Located() string { return e.format(true) }

func (e *ParseError) format(column bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s", e.File, e.Line, e.Msg)
	if column && e.Col >= 0 {
		b.Reset()
		fmt.Fprintf(&b, "%s:%d:%d: %s", e.File, e.Line, e.Col+1, e.Msg)
	}
	if e.More != "" {
		fmt.Fprintf(&b, " (%s)", e.More)
	}
	if e.Cmd != "" {
		fmt.Fprintf(&b, " in command \"%s\"", e.Cmd)
	}
	if e.Source != "" {
		b.WriteString("\n" + e.Source)
		if e.Col >= 0 {
			fmt.Fprintf(&b, "\n%s^ error found here", strings.Repeat(" ", e.Col))
		}
	}
	return b.String()
}

// ConditionError is an \if, \elif, \else or \endif out of place.
type ConditionError struct {
	File    string
	Command int // from 1
	Msg     string
}

func (e *ConditionError) Error() string {
	return fmt.Sprintf("condition error in script \"%s\" command %d: %s", e.File, e.Command, e.Msg)
}

// maxWords is the most words a meta command may have, its name included.
const maxWords = 256

// Parse reads a script. vars receives the names of the variables it uses. name is
// the file name errors give.
func Parse(name, src string, vars *Vars) (*Script, error) {
	s := &Script{Name: name}
	sc := &scanner{src: src, line: 1}
	for {
		if sql, line, ok := sc.sql(); ok {
			c := &Command{Kind: SQL, Line: line, SQL: sql, FirstLine: sqlFirstLine(sql)}
			c.Refs = sqlRefs(sql, vars)
			s.Commands = append(s.Commands, c)
		}
		if sc.pos >= len(src) {
			break
		}
		if src[sc.pos] != '\\' {
			continue // the SQL command ended with a semicolon
		}
		if err := s.meta(sc, name, vars); err != nil {
			return nil, err
		}
	}
	if len(s.Commands) == 0 {
		return nil, fmt.Errorf("empty command list for script \"%s\"", name)
	}
	if err := s.checkConditions(); err != nil {
		return nil, err
	}
	return s, nil
}

// scanner walks a script's text.
type scanner struct {
	src  string
	pos  int
	line int
}

// sql collects a SQL command from pos: up to and with a top-level semicolon, up to
// a backslash that starts a meta command, or to the end. Whitespace and -- comments
// before its first token are no part of it; a command of nothing else is none (ok
// false). Quotes, comments, dollar quotes and parentheses are passed over as psql's
// lexer passes them, and \; and \: stand for ; and : in the text. The body of a
// CREATE FUNCTION or PROCEDURE written BEGIN ATOMIC ... END keeps its semicolons.
func (sc *scanner) sql() (text string, line int, ok bool) {
	s := sc.src
	// Skip what comes before the first token.
	for sc.pos < len(s) {
		c := s[sc.pos]
		switch {
		case c == '\n':
			sc.line++
			sc.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			sc.pos++
		case strings.HasPrefix(s[sc.pos:], "--"):
			for sc.pos < len(s) && s[sc.pos] != '\n' {
				sc.pos++
			}
		default:
			goto body
		}
	}
	return "", 0, false
body:
	if s[sc.pos] == '\\' && !strings.HasPrefix(s[sc.pos:], `\;`) && !strings.HasPrefix(s[sc.pos:], `\:`) {
		return "", 0, false
	}
	line = sc.line
	var b strings.Builder
	depth := 0
	var atomic atomicBody
	for sc.pos < len(s) {
		c := s[sc.pos]
		switch {
		case c == '\n':
			sc.line++
			b.WriteByte(c)
			sc.pos++
		case c == '\\':
			if sc.pos+1 < len(s) && (s[sc.pos+1] == ';' || s[sc.pos+1] == ':') {
				b.WriteByte(s[sc.pos+1])
				sc.pos += 2
				continue
			}
			return b.String(), line, true
		case c == ';' && depth == 0 && atomic.depth == 0:
			b.WriteByte(c)
			sc.pos++
			return b.String(), line, true
		case c == '(':
			depth++
			b.WriteByte(c)
			sc.pos++
		case c == ')':
			if depth > 0 {
				depth--
			}
			b.WriteByte(c)
			sc.pos++
		case strings.HasPrefix(s[sc.pos:], "--"):
			sc.copyUntil(&b, "\n", false)
		case strings.HasPrefix(s[sc.pos:], "/*"):
			sc.blockComment(&b)
		case c == '\'':
			backslashes := sc.pos > 0 && (s[sc.pos-1] == 'E' || s[sc.pos-1] == 'e') && (sc.pos < 2 || !isAlnum(s[sc.pos-2]))
			sc.quoted(&b, '\'', backslashes)
		case c == '"':
			sc.quoted(&b, '"', false)
		case c == '$':
			if tag, ok := dollarTag(s[sc.pos:]); ok && (sc.pos == 0 || !isAlnum(s[sc.pos-1])) {
				b.WriteString(tag)
				sc.pos += len(tag)
				sc.copyUntil(&b, tag, true)
				continue
			}
			b.WriteByte(c)
			sc.pos++
		case isAlpha(c) && (sc.pos == 0 || !isAlnum(s[sc.pos-1]) && s[sc.pos-1] != '$'):
			end := sc.pos + 1
			for end < len(s) && (isAlnum(s[end]) || s[end] == '$') {
				end++
			}
			atomic.word(s[sc.pos:end], depth)
			b.WriteString(s[sc.pos:end])
			sc.pos = end
		default:
			b.WriteByte(c)
			sc.pos++
		}
	}
	return b.String(), line, true
}

// atomicBody follows a statement's words as psql's lexer does, to tell when a
// semicolon is inside the BEGIN ATOMIC ... END body of CREATE [OR REPLACE]
// FUNCTION or PROCEDURE: depth counts the BEGINs, and the CASEs within them, not
// yet closed by END.
type atomicBody struct {
	first [4]byte // initials of the leading create, or, replace, function, procedure
	words int
	depth int
}

func (a *atomicBody) word(w string, parens int) {
	if a.words < len(a.first) {
		for _, k := range []string{"create", "or", "replace", "function", "procedure"} {
			if strings.EqualFold(w, k) {
				a.first[a.words] = k[0]
			}
		}
	}
	a.words++
	f := a.first
	routine := f[0] == 'c' && (f[1] == 'f' || f[1] == 'p' || f[1] == 'o' && f[2] == 'r' && (f[3] == 'f' || f[3] == 'p'))
	if !routine || parens > 0 {
		return
	}
	switch {
	case strings.EqualFold(w, "begin"):
		a.depth++
	case strings.EqualFold(w, "case") && a.depth > 0:
		a.depth++
	case strings.EqualFold(w, "end") && a.depth > 0:
		a.depth--
	}
}

// copyUntil copies up to end (and end itself when with is set), counting lines.
func (sc *scanner) copyUntil(b *strings.Builder, end string, with bool) {
	s := sc.src
	i := strings.Index(s[sc.pos:], end)
	stop := len(s)
	if i >= 0 {
		stop = sc.pos + i
		if with {
			stop += len(end)
		}
	}
	sc.line += strings.Count(s[sc.pos:stop], "\n")
	b.WriteString(s[sc.pos:stop])
	sc.pos = stop
}

// blockComment copies a /* */ comment; they nest.
func (sc *scanner) blockComment(b *strings.Builder) {
	s := sc.src
	depth := 0
	for sc.pos < len(s) {
		switch {
		case strings.HasPrefix(s[sc.pos:], "/*"):
			depth++
			b.WriteString("/*")
			sc.pos += 2
		case strings.HasPrefix(s[sc.pos:], "*/"):
			depth--
			b.WriteString("*/")
			sc.pos += 2
			if depth == 0 {
				return
			}
		default:
			if s[sc.pos] == '\n' {
				sc.line++
			}
			b.WriteByte(s[sc.pos])
			sc.pos++
		}
	}
}

// quoted copies a quoted string or identifier; a doubled quote is one inside it, and
// in a string prefixed with E a backslash escapes the next character.
func (sc *scanner) quoted(b *strings.Builder, q byte, backslashes bool) {
	s := sc.src
	b.WriteByte(q)
	sc.pos++
	for sc.pos < len(s) {
		c := s[sc.pos]
		if c == '\n' {
			sc.line++
		}
		b.WriteByte(c)
		sc.pos++
		switch {
		case backslashes && c == '\\' && sc.pos < len(s):
			if s[sc.pos] == '\n' {
				sc.line++
			}
			b.WriteByte(s[sc.pos])
			sc.pos++
		case c == q:
			if sc.pos < len(s) && s[sc.pos] == q {
				b.WriteByte(q)
				sc.pos++
				continue
			}
			return
		}
	}
}

// dollarTag reads a dollar-quote opener such as $$ or $body$ at the start of s.
func dollarTag(s string) (string, bool) {
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == '$' {
			return s[:i+1], true
		}
		if !(isAlpha(c) || i > 1 && isDigit(c)) {
			return "", false
		}
	}
	return "", false
}

// sqlFirstLine is the text -r shows for a SQL command.
func sqlFirstLine(sql string) string {
	if i := strings.IndexAny(sql, "\r\n"); i >= 0 {
		sql = sql[:i]
	}
	if len(sql) > 127 {
		sql = sql[:127]
	}
	return sql
}

// quotedRef reads :'name' or :"name" at sql[i:], as psql writes them.
func quotedRef(sql string, i int, vars *Vars) (VarRef, bool) {
	q := sql[i+1]
	j := i + 2
	if j >= len(sql) || !isAlpha(sql[j]) {
		return VarRef{}, false
	}
	for j < len(sql) && isAlnum(sql[j]) {
		j++
	}
	if j >= len(sql) || sql[j] != q {
		return VarRef{}, false
	}
	name := sql[i+2 : j]
	return VarRef{Start: i, End: j + 1, Name: name, Slot: vars.slot(name), Quote: q}, true
}

// QuoteLiteral writes v as an SQL string literal, as libpq's PQescapeLiteral: quotes
// doubled, and with backslashes doubled in a string prefixed with E.
func QuoteLiteral(b, v []byte) []byte {
	backslash := false
	for _, c := range v {
		backslash = backslash || c == '\\'
	}
	if backslash {
		b = append(b, " E"...)
	}
	b = append(b, '\'')
	for _, c := range v {
		if c == '\'' || c == '\\' {
			b = append(b, c)
		}
		b = append(b, c)
	}
	return append(b, '\'')
}

// QuoteIdent writes v as a quoted SQL identifier, as libpq's PQescapeIdentifier.
func QuoteIdent(b, v []byte) []byte {
	b = append(b, '"')
	for _, c := range v {
		if c == '"' {
			b = append(b, c)
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// sqlRefs finds the :name references in SQL text. They are found in the raw text,
// inside quotes and comments too, as pgbench finds them; a run of two or more colons
// (a cast) and a colon before anything that cannot start a name are left alone.
// psql's :'name' and :"name" are found too (pgbench itself leaves them to the server,
// which refuses them).
func sqlRefs(sql string, vars *Vars) []VarRef {
	var refs []VarRef
	for i := 0; i < len(sql); {
		if sql[i] != ':' {
			i++
			continue
		}
		if i+1 < len(sql) && sql[i+1] == ':' {
			for i < len(sql) && sql[i] == ':' {
				i++
			}
			continue
		}
		j := i + 1
		if j < len(sql) && (sql[j] == '\'' || sql[j] == '"') {
			if r, ok := quotedRef(sql, i, vars); ok {
				refs = append(refs, r)
				i = r.End
				continue
			}
		}
		if j >= len(sql) || !isAlpha(sql[j]) {
			i++
			continue
		}
		for j < len(sql) && isAlnum(sql[j]) {
			j++
		}
		name := sql[i+1 : j]
		refs = append(refs, VarRef{Start: i, End: j, Name: name, Slot: vars.slot(name)})
		i = j
	}
	return refs
}

// metaLine reads the meta command at pos (a backslash) to the end of its line,
// continuation lines included: its words, with their offsets from the backslash,
// its whole text, and whether a line break ended it (else the file did).
func (sc *scanner) metaLine() (text string, words []string, offs []int, line int, broken bool) {
	s := sc.src
	start := sc.pos
	line = sc.line
	end := start + 1
	for end < len(s) && s[end] != '\n' {
		if s[end] == '\\' && (strings.HasPrefix(s[end+1:], "\n") || strings.HasPrefix(s[end+1:], "\r\n")) {
			end += 1 + strings.IndexByte(s[end+1:], '\n') + 1
			sc.line++
			continue
		}
		end++
	}
	text = s[start:end]
	sc.pos = end
	if end < len(s) {
		sc.pos++ // the newline
		sc.line++
		broken = true
	}
	// Words: runs of characters other than spaces and continuations.
	i := 1
	for i < len(text) {
		c := text[i]
		if c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n' {
			i++
			continue
		}
		if c == '\\' && (strings.HasPrefix(text[i+1:], "\n") || strings.HasPrefix(text[i+1:], "\r\n")) {
			i++
			continue
		}
		j := i
		for j < len(text) && !strings.ContainsRune(" \t\r\f\v\n", rune(text[j])) &&
			!(text[j] == '\\' && (strings.HasPrefix(text[j+1:], "\n") || strings.HasPrefix(text[j+1:], "\r\n"))) {
			j++
		}
		words = append(words, text[i:j])
		offs = append(offs, i)
		i = j
	}
	return text, words, offs, line, broken
}

// meta parses the meta command at the scanner's position and adds it to the script,
// or attaches a \gset or \aset to the SQL command before it.
func (s *Script) meta(sc *scanner, file string, vars *Vars) error {
	text, words, offs, line, broken := sc.metaLine()
	source := strings.TrimRight(text, "\r\n")
	if len(words) == 0 {
		return nil // a lone backslash is ignored
	}
	name := words[0]
	perr := func(msg, more string, col int) *ParseError {
		return &ParseError{File: file, Line: line, Msg: msg, More: more, Cmd: name, Source: source, Col: col}
	}
	lower := strings.ToLower(name)
	if lower == "gset" || lower == "aset" {
		return s.store(lower, words, file, line, source, name)
	}
	kind, ok := metaNames[lower]
	if !ok {
		return perr("invalid command", "", -1)
	}
	if len(words) > maxWords && kind != Set && kind != If && kind != Elif { // an expression has no word limit
		return perr("too many arguments", "", -1)
	}
	c := &Command{Kind: kind, Name: name, Line: line, FirstLine: source}
	switch kind {
	case Set:
		if len(words) < 2 {
			return &ParseError{File: file, Line: line, Msg: "missing argument", Cmd: name}
		}
		c.VarName = words[1]
		c.Var = vars.slot(words[1])
		exprAt := offs[1] + len(words[1])
		if err := c.compile(text, exprAt, broken, vars, perr); err != nil {
			return err
		}
	case If, Elif:
		exprAt := offs[0] + len(words[0])
		if err := c.compile(text, exprAt, broken, vars, perr); err != nil {
			return err
		}
	case Sleep:
		if err := c.sleepArgs(words, offs, vars, perr); err != nil {
			return err
		}
	case SetShell:
		if len(words) < 3 {
			return perr("missing argument", "", -1)
		}
		c.VarName, c.Var, c.Words = words[1], vars.slot(words[1]), words[2:]
	case Shell:
		if len(words) < 2 {
			return perr("missing command", "", -1)
		}
		c.Words = words[1:]
	default: // \else, \endif and the pipeline commands take nothing
		if len(words) > 1 {
			return perr("unexpected argument", "", -1)
		}
	}
	s.Commands = append(s.Commands, c)
	return nil
}

// compile compiles the expression that starts at text[at:] (the rest of the command).
// An error at the end of the text is shown where the line break is, or under the
// last character when the file ends there.
func (c *Command) compile(text string, at int, broken bool, vars *Vars, perr func(string, string, int) *ParseError) error {
	src := text[at:]
	x, err := compileExpr(src, vars)
	if err != nil {
		col := at + err.col
		if err.col >= len(src) {
			col = len(strings.TrimRight(text, "\r"))
			if !broken {
				col--
			}
		}
		return perr(err.msg, err.near, col)
	}
	c.Expr = x
	return nil
}

// sleepArgs reads \sleep's amount (an integer or a :variable) and its unit (us, ms or
// s, seconds when none), which may be stuck to the number (\sleep 10ms).
func (c *Command) sleepArgs(words []string, offs []int, vars *Vars, perr func(string, string, int) *ParseError) error {
	if len(words) < 2 {
		return perr("missing argument", "", -1)
	}
	if len(words) > 3 {
		return perr("too many arguments", "", offs[3])
	}
	amount, unit, unitAt := words[1], "", -1
	if len(words) == 3 {
		unit, unitAt = words[2], offs[2]
	}
	if strings.HasPrefix(amount, ":") {
		c.SleepVar = amount[1:]
		c.Var = vars.slot(c.SleepVar)
	} else {
		i := 0
		if i < len(amount) && (amount[i] == '+' || amount[i] == '-') {
			i++
		}
		digits := i
		for i < len(amount) && isDigit(amount[i]) {
			i++
		}
		if i < len(amount) {
			if len(words) == 2 && i > digits {
				unit, unitAt = amount[i:], offs[1]+i
				amount = amount[:i]
			} else {
				return perr("invalid sleep time, must be an integer", amount, offs[1])
			}
		}
		c.SleepN = Atoi(amount)
	}
	switch strings.ToLower(unit) {
	case "", "s":
		c.SleepUs = 1000000
	case "ms":
		c.SleepUs = 1000
	case "us":
		c.SleepUs = 1
	default:
		return perr("unrecognized time unit, must be us, ms or s", unit, unitAt)
	}
	return nil
}

// Atoi is C's atoi: leading spaces, a sign and digits; anything after is ignored and
// no digits make 0.
func Atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && isDigit(s[i]); i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// store attaches \gset or \aset to the SQL command just before it.
func (s *Script) store(kind string, words []string, file string, line int, source, name string) error {
	if len(words) > 2 {
		return &ParseError{File: file, Line: line, Msg: "too many arguments", Cmd: name, Source: source, Col: -1}
	}
	var prev *Command
	if n := len(s.Commands); n > 0 {
		prev = s.Commands[n-1]
	}
	if prev == nil || prev.Kind != SQL || prev.Store != NoStore {
		e := &ParseError{File: file, Line: line, Msg: `\gset must follow an SQL command`, Col: -1}
		if prev != nil && prev.Kind != SQL {
			e.More = prev.FirstLine
		}
		return e
	}
	prev.Store = Gset
	if kind == "aset" {
		prev.Store = Aset
	}
	if len(words) == 2 {
		prev.StorePrefix = words[1]
	}
	return nil
}

// checkConditions checks that \if, \elif, \else and \endif nest, as pgbench does
// before it runs anything.
func (s *Script) checkConditions() error {
	type frame struct{ sawElse bool }
	var stack []frame
	for i, c := range s.Commands {
		fail := func(msg string) error { return &ConditionError{File: s.Name, Command: i + 1, Msg: msg} }
		switch c.Kind {
		case If:
			stack = append(stack, frame{})
		case Elif:
			if len(stack) == 0 {
				return fail(`\elif without matching \if`)
			}
			if stack[len(stack)-1].sawElse {
				return fail(`\elif after \else`)
			}
		case Else:
			if len(stack) == 0 {
				return fail(`\else without matching \if`)
			}
			if stack[len(stack)-1].sawElse {
				return fail(`\else after \else`)
			}
			stack[len(stack)-1].sawElse = true
		case Endif:
			if len(stack) == 0 {
				return fail(`\endif without matching \if`)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return &ConditionError{File: s.Name, Command: len(s.Commands) + 1, Msg: `\if without matching \endif`}
	}
	return nil
}
