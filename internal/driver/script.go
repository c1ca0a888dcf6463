package driver

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
)

// Protocol is how statements are sent, as pgbench's --protocol (see
// pgwire.Protocol).
type Protocol = pgwire.Protocol

const (
	Prepared = pgwire.Prepared
	Extended = pgwire.Extended
	Simple   = pgwire.Simple
)

// Var is a script variable, drawn afresh for each transaction from [Min, Max]:
// uniformly, or from Dist when it is set (built over the same range).
type Var struct {
	Name     string
	Min, Max int64
	Dist     *keydist.Dist
}

// Command is one statement of a script. SQL uses $1, $2, ... for parameters, and
// Params names the variable (by index into Script.Vars) behind each.
type Command struct {
	SQL    string
	Params []int
}

// Script is one transaction type: its variables and statements, run in order, each
// waiting for the server's answer before the next is sent, as pgbench does.
//
// A script may instead be a Program: Go code that runs the prepared Statements through
// a Session and decides from their results what to send next (TPC-C's transactions),
// or Steps, a state machine for scripts whose statements vary from run to run
// (pgbench's scripts run statements one by one or in blocks, and skip some). Either
// way the commits the server counts are counted as each answer comes.
type Script struct {
	Name     string
	Weight   int
	Vars     []Var
	Commands []Command

	Statements []string             // prepared on every connection for Program or Steps
	Program    func(*Session) error // the transaction; Vars and Commands are then unused
	Steps      Stepper              // or the transaction as steps (see Stepper)
	// RollbackState is an SQLSTATE the server raises to roll back on purpose; such a
	// transaction counts as rolled back rather than failed.
	RollbackState string
	// RetryStates are SQLSTATEs retried like serialization failures and deadlocks:
	// sysbench restarts an event on a unique violation (23505) too.
	RetryStates []string
	// Keying is a pause before each transaction and ThinkMean the mean of an
	// exponentially distributed pause after it (TPC-C's keying and thinking times);
	// neither is part of the measured latency.
	Keying, ThinkMean time.Duration
}

// Validate checks that every parameter names a variable and every range is sane.
func (s *Script) Validate() error {
	for _, v := range s.Vars {
		if v.Max < v.Min {
			return fmt.Errorf("script %s: variable %s has an empty range [%d, %d]", s.Name, v.Name, v.Min, v.Max)
		}
	}
	for _, c := range s.Commands {
		for _, p := range c.Params {
			if p < 0 || p >= len(s.Vars) {
				return fmt.Errorf("script %s: statement %q uses variable %d of %d", s.Name, c.SQL, p, len(s.Vars))
			}
		}
	}
	if s.Program != nil && s.Steps != nil {
		return fmt.Errorf("script %s: both a program and steps", s.Name)
	}
	if s.Program == nil && s.Steps == nil && len(s.Statements) > 0 {
		return fmt.Errorf("script %s: statements without a program", s.Name)
	}
	if s.Weight < 0 {
		return fmt.Errorf("script %s: negative weight %d", s.Name, s.Weight)
	}
	return nil
}

// Mix names the scripts with their weights: "tpcb-like@9,select-only@1".
func Mix(scripts []*Script) string {
	parts := make([]string, len(scripts))
	for i, s := range scripts {
		parts[i] = s.Name
		if len(scripts) > 1 {
			parts[i] += "@" + strconv.Itoa(s.Weight)
		}
	}
	return strings.Join(parts, ",")
}
