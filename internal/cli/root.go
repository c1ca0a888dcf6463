// Package cli is pgbakeoff's command line: one constructor per verb, no globals, and
// every process resource (streams, environment, clock, signals) reached through Env.
//
//	code := cli.Main(cli.NewEnv())
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/pgbscript"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/spf13/cobra"
)

// Env is the process as the commands see it; tests substitute their own.
type Env struct {
	Stdin          io.Reader // nil: none
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Now            func() time.Time
	Args           []string
	// Interrupt returns a context cancelled by Ctrl-C or SIGTERM.
	Interrupt func(context.Context) (context.Context, context.CancelFunc)
	// TTY reports whether Stdout is a terminal (progress bars) or not (plain lines).
	TTY bool
}

// NewEnv is the real process.
func NewEnv() *Env {
	return &Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Now: time.Now, Args: os.Args[1:],
		Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		},
		TTY: isatty.IsTerminal(os.Stdout.Fd()),
	}
}

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
	// ExitGate: the run completed, and a --fail-if gate failed.
	ExitGate        = 3
	ExitInterrupted = 130
)

// usageError marks bad flags or arguments.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// ErrInterrupted means the user stopped the command; what was measured is kept.
var ErrInterrupted = engine.ErrInterrupted

// Main runs the command line and returns the exit code, printing any error as one line.
func Main(env *Env) int {
	root := NewRoot(env)
	root.SetArgs(env.Args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	msg := strings.TrimSpace(flagged(err).Error())
	if pe, ok := errors.AsType[*pgbscript.ParseError](err); ok {
		// A script that does not parse: the message, the command and a caret under
		// the place, as pgbench shows it.
		for _, line := range strings.Split(pe.Located(), "\n") {
			fmt.Fprintf(env.Stderr, "pgbakeoff: %s\n", line)
		}
	} else if _, ok := errors.AsType[study.Errors](err); ok {
		// A study file's problems, one a line, each with its file position.
		for _, line := range strings.Split(msg, "\n") {
			fmt.Fprintf(env.Stderr, "pgbakeoff: %s\n", line)
		}
	} else {
		msg = strings.ReplaceAll(msg, "\n", "; ")
		fmt.Fprintf(env.Stderr, "pgbakeoff: %s\n", msg)
	}
	var ue usageError
	var ee exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, ErrInterrupted):
		return ExitInterrupted
	case errors.As(err, &ue), isInputError(err), isCobraUsage(msg):
		return ExitUsage
	}
	return ExitError
}

// isInputError tells whether err says the input is wrong: a setting or option
// (engine.FieldError, but for one that does not fit the data found) or a study
// file (study.Error).
func isInputError(err error) bool {
	fe, field := errors.AsType[*engine.FieldError](err)
	_, file := errors.AsType[*study.Error](err)
	return field && !fe.Mismatch || file
}

// isCobraUsage recognizes cobra's own argument and flag errors, which it does not type.
func isCobraUsage(msg string) bool {
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument", "accepts ", "requires at least", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// envResults names the results store when --results is not given: in a
// Kubernetes Job, a Secret holds a PostgreSQL store's DSN and its password.
const envResults = "PGBAKEOFF_RESULTS"

// NewRoot builds the command tree.
func NewRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "pgbakeoff",
		Short:         "Benchmark PostgreSQL deployments side by side: pgbench's TPC-B, HammerDB's TPC-C and sysbench's OLTP, compared honestly",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate("pgbakeoff {{.Version}}\n")
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(flagError)
	// Without arguments, the help; with an unknown command, one line and the
	// closest command rather than cobra's several.
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		if s := suggestCommand(c, args[0]); s != "" {
			return usageError{fmt.Errorf("unknown command %q (did you mean %s?)", args[0], s)}
		}
		return usageError{fmt.Errorf("unknown command %q (see %s --help)", args[0], c.CommandPath())}
	}
	root.PersistentFlags().String("results", "pgbakeoff.db", "results store: a SQLite file, or a PostgreSQL database shared by many writers (postgres://... or host=... dbname=...); default $"+envResults+" when set")
	persistentSetup(root, env)
	for _, c := range []*cobra.Command{
		newDemoCmd(env),
		newServerCmd(env),
		newInitCmd(env),
		newRunCmd(env),
		newFindMaxCmd(env),
		newPgbenchCmd(env),
		newCheckCmd(env),
		newRunsCmd(env),
		newStudyCmd(env),
		newReportCmd(env),
		newCompareCmd(env),
		newExportCmd(env),
		newShowCmd(env),
		newMergeCmd(env),
		newPricesCmd(env),
		newSchemaCmd(env),
	} {
		root.AddCommand(c)
	}
	return root
}

// persistentSetup reads --results from the environment when not given, and runs
// --cpuprofile, a CPU profile of the client, which is how its cost per
// transaction is found; hidden because it is for developers, not for comparing
// deployments.
func persistentSetup(root *cobra.Command, env *Env) {
	root.PersistentFlags().String("cpuprofile", "", "write a Go CPU profile of this command to FILE")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	var stopProfile func()
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		// From the environment only here, never as the flag's default: help would
		// print a DSN's password.
		if v := env.Getenv(envResults); v != "" && !c.Flags().Changed("results") && c.Flags().Lookup("results") != nil {
			_ = c.Flags().Set("results", v)
		}
		path, _ := c.Flags().GetString("cpuprofile")
		if path == "" {
			return nil
		}
		f, err := os.Create(path)
		if err != nil {
			return usageError{fmt.Errorf("--cpuprofile: %w", err)}
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		return nil
	}
	root.PersistentPostRun = func(*cobra.Command, []string) {
		if stopProfile != nil {
			stopProfile()
		}
	}
}

// unknownSub makes a parent command reject unknown subcommands instead of printing help.
func unknownSub(choices string) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageError{fmt.Errorf("%s needs one of: %s", c.CommandPath(), choices)}
		}
		if s := suggestCommand(c, args[0]); s != "" {
			return usageError{fmt.Errorf("unknown %s %q (did you mean %s?)", c.Name(), args[0], s)}
		}
		return usageError{fmt.Errorf("unknown %s %q: choose one of %s", c.Name(), args[0], choices)}
	}
}
