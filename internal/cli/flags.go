package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// duration is a time.Duration flag that also takes a plain number of seconds, as
// pgbench's -T 60 and -P 5 do, and refuses durations over study.MaxDuration.
type duration struct{ d *time.Duration }

// durationVarP defines a duration flag; every command's durations are one.
func durationVarP(fl *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	fl.VarP(duration{p}, name, short, usage)
}

func (v duration) Set(s string) error {
	d, err := study.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// String is "0" for no time, so that help leaves a zero default out.
func (v duration) String() string {
	if v.d == nil || *v.d == 0 {
		return "0"
	}
	return v.d.String()
}

func (v duration) Type() string { return "duration" }

// flagError turns pflag's errors into one line that says what to do: a refused
// duration names the flag and the limit, and an unknown flag the closest known one.
func flagError(c *cobra.Command, err error) error {
	if ive, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		if de, ok := errors.AsType[*study.DurationError](ive); ok {
			return usageError{fmt.Errorf("--%s %s", ive.GetFlag().Name, de)}
		}
	}
	if ne, ok := errors.AsType[*pflag.NotExistError](err); ok && ne.GetSpecifiedShortnames() == "" {
		if s := suggestFlag(c, ne.GetSpecifiedName()); s != "" {
			return usageError{fmt.Errorf("%s: %w (did you mean --%s?)", c.CommandPath(), err, s)}
		}
	}
	return usageError{fmt.Errorf("%s: %w (see %s --help)", c.CommandPath(), err, c.CommandPath())}
}

// suggestFlag is the visible flag of c closest to name, or "" when none is close.
func suggestFlag(c *cobra.Command, name string) string {
	seen := map[string]bool{}
	var names []string
	for _, fs := range []*pflag.FlagSet{c.Flags(), c.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Deprecated == "" && !seen[f.Name] {
				seen[f.Name] = true
				names = append(names, f.Name)
			}
		})
	}
	return study.Suggest(name, names)
}

// suggestCommand is the visible subcommand of c closest to name, or "".
func suggestCommand(c *cobra.Command, name string) string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return study.Suggest(strings.ToLower(name), names)
}
