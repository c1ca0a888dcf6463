package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError turns pflag's errors into one line that says what to do: a refused
// duration names the flag and the limit, and an unknown flag the closest known one.
func flagError(c *cobra.Command, err error) error {
	if ive, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		if de, ok := errors.AsType[*engine.DurationError](ive); ok {
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

// portRangeFlag is --port-range: the ports local servers may take.
func portRangeFlag(fs *pflag.FlagSet, r *localpg.PortRange) {
	fs.Var(r, "port-range", "ports the local servers may take, as 56100-56199 (default: $"+localpg.PortsEnv+", else any free port)")
}
