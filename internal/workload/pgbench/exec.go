package pgbench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgbscript"
)

// clients holds what each client keeps from one transaction to the next, whichever
// script it runs: its variables and its random state, as pgbench's clients do.
type clients struct {
	vars  *pgbscript.Vars
	state []client
	// Out takes \shell's output and Log the lines of debug().
	out, log    io.Writer
	mu          sync.Mutex // serializes out and log
	sampleSeeds []uint64   // seed the log's sampling, as pgbench's threads'
}

type client struct {
	env   *pgbscript.Env
	saved pgbscript.PRNG // the random state at the transaction's start, for a retry
	text  []byte         // SQL built for one execution (simple protocol, :"name" identifiers)
	cond  []condState
	// pipeline is set between \startpipeline and \endpipeline.
	pipeline bool
	// The command running, for debug()'s lines.
	script, command int
	// next is the command to run next, or the one whose answer or pause is awaited;
	// began is when it began, with -r.
	next  int
	began time.Time
}

// condState is an \if block's state in a transaction.
type condState uint8

const (
	condTrue    condState = iota // this branch runs
	condFalse                    // no branch has run yet
	condDone                     // a branch ran; the rest are skipped
	condIgnored                  // the whole block is inside a skipped branch
)

// program runs one parsed script for a client, as pgbench runs it.
type program struct {
	cl       *clients
	script   *pgbscript.Script
	index    int // the script's number in the run, from 0, for messages
	protocol driver.Protocol
	// For each command: the statement it is among Script.Statements (prepared) or
	// its text with $n parameters (extended); -1 and nil for meta commands, and
	// for SQL whose text changes from one execution to the next (a :"name"
	// identifier), which is built each time and parsed with it.
	stmt   []int
	params [][]byte
	// stats, with -r, are each command's executions that ended in the window.
	stats []cmdStats
	// maxTries is how many times the driver tries a transaction that failed with a
	// serialization failure or a deadlock, for -r's retries; continueOnError
	// makes any other SQL error fail the transaction rather than abort the client.
	maxTries        int
	continueOnError bool
}

// programOptions are what a run's options make of each of its programs.
type programOptions struct {
	protocol        driver.Protocol
	timed           bool // -r: time each command
	maxTries        int
	continueOnError bool
}

// newProgram prepares s to run with the run's options.
func newProgram(cl *clients, s *pgbscript.Script, index int, o programOptions) (*program, []string, error) {
	protocol := o.protocol
	p := &program{cl: cl, script: s, index: index, protocol: protocol, maxTries: o.maxTries, continueOnError: o.continueOnError}
	if o.timed {
		p.stats = make([]cmdStats, len(s.Commands))
	}
	var statements []string
	for _, c := range s.Commands {
		if c.Kind != pgbscript.SQL {
			p.stmt = append(p.stmt, -1)
			p.params = append(p.params, nil)
			continue
		}
		if protocol != driver.Simple && len(c.Refs) > 255 {
			return nil, nil, fmt.Errorf("statement has too many arguments (maximum is 255): %s", c.SQL)
		}
		if dynamic(c) {
			p.stmt = append(p.stmt, -1)
			p.params = append(p.params, nil)
			continue
		}
		numbered := numberParams(c)
		p.stmt = append(p.stmt, len(statements))
		p.params = append(p.params, []byte(numbered))
		if protocol == driver.Prepared {
			statements = append(statements, numbered)
		}
	}
	return p, statements, nil
}

// dynamic reports whether a SQL command's text depends on its variables' values:
// a :"name" identifier cannot be a parameter.
func dynamic(c *pgbscript.Command) bool {
	for _, r := range c.Refs {
		if r.Quote == '"' {
			return true
		}
	}
	return false
}

// numberParams is a SQL command's text with each variable reference replaced by $1,
// $2, ... in order, as pgbench sends it with the extended and prepared protocols.
func numberParams(c *pgbscript.Command) string {
	var b strings.Builder
	at := 0
	for i, r := range c.Refs {
		b.WriteString(c.SQL[at:r.Start])
		b.WriteString("$" + strconv.Itoa(i+1))
		at = r.End
	}
	b.WriteString(c.SQL[at:])
	return b.String()
}

// text builds a SQL command's text for one execution into the client's buffer.
// With the simple protocol every variable is written in: as it is for :name, as a
// quoted literal for :'name', a quoted identifier for :"name"; one not set stays as
// written, as pgbench leaves it. Otherwise only identifiers are written in, and the
// others become $n parameters.
func (p *program) text(st *client, c *pgbscript.Command) []byte {
	simple := p.protocol == driver.Simple
	b := st.text[:0]
	at, n := 0, 0
	for _, r := range c.Refs {
		b = append(b, c.SQL[at:r.Start]...)
		at = r.End
		v, ok := st.env.Text(r.Slot)
		switch {
		case !simple && r.Quote != '"':
			n++
			b = append(b, '$')
			b = strconv.AppendInt(b, int64(n), 10)
		case !ok:
			b = append(b, c.SQL[r.Start:r.End]...)
		case r.Quote == '\'':
			b = pgbscript.QuoteLiteral(b, v)
		case r.Quote == '"':
			b = pgbscript.QuoteIdent(b, v)
		default:
			b = append(b, v...)
		}
	}
	b = append(b, c.SQL[at:]...)
	st.text = b
	return b
}

// abort stops the client, with pgbench's words for why.
func (p *program) abort(client, cmd int, name, what string, cause error) error {
	msg := fmt.Sprintf("client %d aborted in command %d (%s) of script %d; %s", client, cmd, name, p.index, what)
	if cause != nil && cause.Error() != "" {
		msg = cause.Error() + "; " + msg
	}
	return &driver.Abort{Err: errors.New(msg)}
}

// Start begins the script's transaction (driver.Stepper).
func (p *program) Start(s *driver.Session) (driver.Step, error) {
	st := &p.cl.state[s.Client()]
	env := st.env
	if s.Attempt() == 1 {
		st.saved = env.Rand
	} else {
		env.Rand = st.saved // a retry draws the same values again, as pgbench's does
	}
	st.cond = st.cond[:0]
	st.next = 0
	return p.steps(s, st)
}

// Resume goes on once the command st.next waited for is over: an SQL command's or
// \endpipeline's answer is there, or a \sleep has passed.
func (p *program) Resume(s *driver.Session, answer error) (driver.Step, error) {
	st := &p.cl.state[s.Client()]
	ci := st.next
	c := p.script.Commands[ci]
	var err error
	switch c.Kind {
	case pgbscript.SQL:
		err = p.sqlError(s, ci, answer)
		if err == nil && c.Store != pgbscript.NoStore {
			err = p.store(s, st, ci, c)
		}
	case pgbscript.EndPipeline:
		err = p.sqlError(s, ci, answer)
	}
	p.timed(s, st, ci, err)
	if err != nil {
		return driver.Finished, err
	}
	st.next++
	return p.steps(s, st)
}

// steps runs the commands from st.next on until one waits for the server or a
// pause, or the script ends.
func (p *program) steps(s *driver.Session, st *client) (driver.Step, error) {
	id := s.Client()
	for ; st.next < len(p.script.Commands); st.next++ {
		ci := st.next
		c := p.script.Commands[ci]
		if !p.conditional(st, c) {
			continue
		}
		st.script, st.command = p.index, ci
		if p.stats != nil {
			st.began = time.Now()
		}
		var err error
		wait := driver.Finished
		switch c.Kind {
		case pgbscript.SQL:
			wait, err = p.sql(s, st, ci, c)
		case pgbscript.Set:
			err = p.set(st, id, ci, c)
		case pgbscript.If, pgbscript.Elif:
			err = p.branch(st, id, ci, c)
		case pgbscript.Sleep:
			wait, err = p.sleep(s, st, id, ci, c)
		case pgbscript.Shell, pgbscript.SetShell:
			err = p.shell(s, st, id, ci, c)
		case pgbscript.StartPipeline, pgbscript.SyncPipeline, pgbscript.EndPipeline:
			wait, err = p.pipeline(s, st, id, ci, c)
		}
		if wait != driver.Finished {
			return wait, nil
		}
		p.timed(s, st, ci, err)
		if err != nil {
			return driver.Finished, err
		}
	}
	if st.pipeline {
		st.pipeline = false
		return driver.Finished, &driver.Abort{Err: fmt.Errorf("client %d aborted: end of script reached with pipeline open", id)}
	}
	if s.InTransaction() {
		// The transaction counts as done, as in pgbench; then the client stops.
		return driver.Finished, &driver.Abort{Err: fmt.Errorf("client %d aborted: end of script reached without completing the last transaction", id), Done: true}
	}
	return driver.Finished, nil
}

// timed counts command ci, begun at st.began and over now, in the -r statistics
// when it ends inside the window.
func (p *program) timed(s *driver.Session, st *client, ci int, err error) {
	if p.stats == nil {
		return
	}
	if end := time.Now(); s.InWindow(end) {
		cs := &p.stats[ci]
		switch {
		case err != nil && p.retried(s, err):
			cs.retries.Add(1)
		case err != nil:
			cs.failures.Add(1)
		default:
			cs.count.Add(1)
			cs.nanos.Add(int64(end.Sub(st.began)))
		}
	}
}

// retried tells whether the driver tries the transaction again after err, the
// error of this attempt: a serialization failure or a deadlock, with tries left.
func (p *program) retried(s *driver.Session, err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01") && s.Attempt() < p.maxTries
}

// pipeline runs \startpipeline, \syncpipeline and \endpipeline: between them SQL
// goes out without waiting, and \endpipeline sends it and awaits every answer.
func (p *program) pipeline(s *driver.Session, st *client, id, ci int, c *pgbscript.Command) (driver.Step, error) {
	fail := func(what string) (driver.Step, error) { return driver.Finished, p.abort(id, ci, c.Name, what, nil) }
	switch c.Kind {
	case pgbscript.StartPipeline:
		if p.protocol == driver.Simple {
			return fail("cannot use pipeline mode with the simple query protocol")
		}
		if st.pipeline {
			return fail("already in pipeline mode")
		}
		st.pipeline = true
		return driver.Finished, nil
	case pgbscript.SyncPipeline:
		if !st.pipeline {
			return fail("not in pipeline mode")
		}
		s.PipelineSync()
		return driver.Finished, nil
	}
	if !st.pipeline {
		return fail("not in pipeline mode")
	}
	st.pipeline = false
	s.RequestPipelineEnd()
	return driver.Await, nil
}

// conditional runs \if, \elif, \else and \endif, and says whether command c is
// to run: no other command runs inside a branch not taken.
func (p *program) conditional(st *client, c *pgbscript.Command) bool {
	active := len(st.cond) == 0 || st.cond[len(st.cond)-1] == condTrue
	top := func() *condState { return &st.cond[len(st.cond)-1] }
	switch c.Kind {
	case pgbscript.If:
		if !active {
			st.cond = append(st.cond, condIgnored)
			return false
		}
		return true // to be evaluated: branch
	case pgbscript.Elif:
		switch *top() {
		case condTrue:
			*top() = condDone
		case condFalse:
			return true
		}
		return false
	case pgbscript.Else:
		switch *top() {
		case condTrue:
			*top() = condDone
		case condFalse:
			*top() = condTrue
		}
		return false
	case pgbscript.Endif:
		st.cond = st.cond[:len(st.cond)-1]
		return false
	}
	return active
}

// branch evaluates an \if or an \elif whose turn it is.
func (p *program) branch(st *client, id, ci int, c *pgbscript.Command) error {
	v, err := c.Expr.Eval(st.env)
	if err != nil {
		return p.abort(id, ci, c.Name, "evaluation of meta-command failed", err)
	}
	taken := condFalse
	if v.Truth() {
		taken = condTrue
	}
	if c.Kind == pgbscript.If {
		st.cond = append(st.cond, taken)
	} else {
		st.cond[len(st.cond)-1] = taken
	}
	return nil
}

// set runs \set.
func (p *program) set(st *client, id, ci int, c *pgbscript.Command) error {
	v, err := c.Expr.Eval(st.env)
	if err != nil {
		return p.abort(id, ci, c.Name, "evaluation of meta-command failed", err)
	}
	if !st.env.IsSet(c.Var) && !pgbscript.ValidName(c.VarName) {
		return p.abort(id, ci, c.Name, "assignment of meta-command failed", fmt.Errorf("set: invalid variable name: \"%s\"", c.VarName))
	}
	st.env.Set(c.Var, v)
	return nil
}

// sql writes a SQL command with the run's protocol, for its answer to be awaited;
// Resume then stores what \gset or \aset asks for. Variables are sent as text; one
// not set goes as NULL with the extended and prepared protocols and stays in the
// text as written with the simple one, as pgbench does. In a pipeline the command
// is queued, to go out at \endpipeline.
func (p *program) sql(s *driver.Session, st *client, ci int, c *pgbscript.Command) (driver.Step, error) {
	env := st.env
	results := c.Store != pgbscript.NoStore
	if st.pipeline {
		if results {
			name := storeName(c.Store)
			return driver.Finished, p.abort(s.Client(), ci, name, "\\"+name+" is not allowed in pipeline mode", nil)
		}
		p.params1(s, env, c)
		switch {
		case p.stmt[ci] < 0:
			s.SendSQL(p.text(st, c))
		case p.protocol == driver.Prepared:
			s.SendPrepared(p.stmt[ci])
		default:
			s.SendSQL(p.params[ci])
		}
		if s.Pending() > maxPipeline {
			return driver.Finished, p.abort(s.Client(), ci, "SQL", fmt.Sprintf("the pipeline holds more than %d KiB of statements; end it sooner with \\endpipeline", maxPipeline>>10), nil)
		}
		return driver.Finished, nil
	}
	switch {
	case p.protocol == driver.Simple:
		s.RequestText(p.text(st, c), results)
	case p.stmt[ci] < 0:
		p.params1(s, env, c)
		s.RequestSQL(p.text(st, c), results)
	case p.protocol == driver.Prepared:
		p.params1(s, env, c)
		s.RequestPrepared(p.stmt[ci], results)
	default:
		p.params1(s, env, c)
		s.RequestSQL(p.params[ci], results)
	}
	return driver.Await, nil
}

// maxPipeline bounds the statements of one pipeline, in bytes. The pipeline is
// written whole at \endpipeline before its answers are read; a larger one could
// fill the socket's buffers both ways, each side then waiting for the other.
const maxPipeline = 64 << 10

// params1 adds a SQL command's variables as parameters: text, or NULL for one not
// set; :"name" identifiers are written into the text instead (text).
func (p *program) params1(s *driver.Session, env *pgbscript.Env, c *pgbscript.Command) {
	for _, r := range c.Refs {
		if r.Quote == '"' {
			continue
		}
		if v, ok := env.Text(r.Slot); ok {
			s.Text(v)
		} else {
			s.Null()
		}
	}
}

// sqlError is what a SQL command's error does: a serialization failure or a
// deadlock goes to the driver, which retries it or counts it; any other aborts the
// client, as in pgbench, or with --continue-on-error fails the transaction only, as
// in pgbench's development branch; a lost connection is the driver's to handle.
func (p *program) sqlError(s *driver.Session, ci int, err error) error {
	if err == nil {
		return nil // before pe, which escapes: no allocation on the way of every answer
	}
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, driver.ErrCopy):
		return &driver.Abort{Err: fmt.Errorf("client %d script %d aborted in command %d: COPY is not supported in pgbench, aborting", s.Client(), p.index, ci)}
	case errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01"):
		return err
	case errors.As(err, &pe) && pe.Severity != "FATAL" && pe.Severity != "PANIC" && p.continueOnError:
		return err // the transaction fails, and the client goes on with the next (--continue-on-error)
	case errors.As(err, &pe) && pe.Severity != "FATAL" && pe.Severity != "PANIC":
		return &driver.Abort{Err: &sqlAbort{fmt.Sprintf("client %d script %d aborted in command %d query 0: ERROR:  %s", s.Client(), p.index, ci, pe.Message), pe}}
	}
	return err
}

// sqlAbort is a SQL error that aborted a client: pgbench's words, and the error
// itself, whose SQLSTATE the run's error counts keep.
type sqlAbort struct {
	msg string
	pe  *pgconn.PgError
}

func (e *sqlAbort) Error() string { return e.msg }
func (e *sqlAbort) Unwrap() error { return e.pe }

// store keeps the columns of a result's row in variables: \gset the one row of the
// last result, \aset the last row of every result that has rows. Values are kept as
// text (an SQL NULL as an empty one), typed when an expression uses them.
func (p *program) store(s *driver.Session, st *client, ci int, c *pgbscript.Command) error {
	n := s.Results()
	first := 0
	if c.Store == pgbscript.Gset {
		first = n - 1
		if n == 0 {
			return p.storeError(s, ci, 0, "expected one row, got 0")
		}
		if tuples, a, b := s.Result(n - 1); !tuples || b-a != 1 {
			return p.storeError(s, ci, n-1, fmt.Sprintf("expected one row, got %d", b-a))
		}
	}
	for r := first; r < n; r++ {
		tuples, a, b := s.Result(r)
		if !tuples || a == b {
			continue
		}
		row := b - 1
		err := s.Columns(r, func(col int, name []byte) error {
			full := c.StorePrefix + string(name)
			slot, ok := p.cl.vars.Lookup(full)
			if !ok || !st.env.IsSet(slot) {
				// A new variable of this client's: its name must be one, even if
				// a script refers to it (the lexer takes :1abc).
				if !pgbscript.ValidName(full) {
					return fmt.Errorf("%s: invalid variable name: \"%s\"; client %d script %d command %d query %d: error storing into variable %s",
						storeName(c.Store), full, s.Client(), p.index, ci, r, full)
				}
				slot = p.cl.vars.Slot(full)
			}
			st.env.SetTextBytes(slot, s.Value(row, col))
			return nil
		})
		if err != nil {
			return &driver.Abort{Err: err}
		}
	}
	return nil
}

func storeName(k pgbscript.Store) string {
	if k == pgbscript.Aset {
		return "aset"
	}
	return "gset"
}

func (p *program) storeError(s *driver.Session, ci, query int, what string) error {
	return &driver.Abort{Err: fmt.Errorf("client %d script %d command %d query %d: %s", s.Client(), p.index, ci, query, what)}
}

// sleep runs \sleep; the pause counts in the transaction's latency, as in pgbench.
func (p *program) sleep(s *driver.Session, st *client, id, ci int, c *pgbscript.Command) (driver.Step, error) {
	n := c.SleepN
	if c.SleepVar != "" {
		text, ok := st.env.Text(c.Var)
		if !ok {
			return driver.Finished, p.abort(id, ci, c.Name, "execution of meta-command failed", fmt.Errorf("sleep: undefined variable \"%s\"", c.SleepVar))
		}
		n = pgbscript.Atoi(string(text))
		if n == 0 && (len(text) == 0 || text[0] < '0' || text[0] > '9') {
			return driver.Finished, p.abort(id, ci, c.Name, "execution of meta-command failed", fmt.Errorf("sleep: invalid sleep time \"%s\" for variable \"%s\"", text, c.SleepVar))
		}
	}
	s.Pause(time.Duration(max(n, 0)*c.SleepUs) * time.Microsecond)
	return driver.Pause, nil
}

// maxShell is the longest shell command pgbench runs, in bytes.
const maxShell = 254

// shell runs \shell and \setshell with /bin/sh: words starting with one colon are
// variables, and two colons stand for one.
func (p *program) shell(s *driver.Session, st *client, id, ci int, c *pgbscript.Command) error {
	fail := func(err error) error { return p.abort(id, ci, c.Name, "execution of meta-command failed", err) }
	var b strings.Builder
	for i, w := range c.Words {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case strings.HasPrefix(w, "::"):
			b.WriteString(w[1:])
		case strings.HasPrefix(w, ":"):
			slot, named := p.cl.vars.Lookup(w[1:])
			text, ok := st.env.Text(slot)
			if !named || !ok {
				return fail(fmt.Errorf("%s: undefined variable \"%s\"", c.Words[0], w))
			}
			b.Write(text)
		default:
			b.WriteString(w)
		}
	}
	if b.Len() > maxShell {
		return fail(fmt.Errorf("%s: shell command is too long", c.Words[0]))
	}
	cmd := exec.Command("/bin/sh", "-c", b.String())
	cmd.Stderr = lockedWriter{&p.cl.mu, p.cl.log} // the shell's complaints, as pgbench passes them on
	if c.Kind == pgbscript.Shell {
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		p.cl.mu.Lock()
		p.cl.out.Write(out.Bytes())
		p.cl.mu.Unlock()
		if err != nil && !s.Stopping() {
			return fail(fmt.Errorf("%s: could not launch shell command", c.Words[0]))
		}
		return nil
	}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return fail(fmt.Errorf("%s: could not run shell command: %v", c.Words[0], err))
	}
	if len(out) == 0 {
		return fail(fmt.Errorf("%s: could not read result of shell command", c.Words[0]))
	}
	line, _ := bufio.NewReader(bytes.NewReader(out)).ReadString('\n')
	v, ok := pgbscript.ShellInt(line)
	if !ok {
		return fail(fmt.Errorf("%s: shell command must return an integer (not \"%s\")", c.Words[0], line))
	}
	if !st.env.IsSet(c.Var) && !pgbscript.ValidName(c.VarName) {
		return p.abort(id, ci, c.Name, "execution of meta-command failed", fmt.Errorf("setshell: invalid variable name: \"%s\"", c.VarName))
	}
	st.env.Set(c.Var, pgbscript.IntValue(v))
	return nil
}

// lockedWriter writes under a mutex, for output several clients share.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
