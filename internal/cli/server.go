package cli

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/spf13/cobra"
)

func newServerCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Start, stop, list, prune and read the logs of local PostgreSQL servers that pgbakeoff runs",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSub("start, stop, list, prune, logs"),
	}
	cmd.PersistentFlags().String("servers-dir", "", "directory of the servers' data and registry (default: pgbakeoff's servers directory)")
	cmd.AddCommand(newServerStartCmd(env), newServerStopCmd(env), newServerListCmd(env), newServerPruneCmd(env), newServerLogsCmd(env))
	return cmd
}

// serverRegistry is the registry in --servers-dir, by default
// localpg.DefaultRegistry; servers are started there too.
func serverRegistry(cmd *cobra.Command) (localpg.Registry, error) {
	if dir, _ := cmd.Flags().GetString("servers-dir"); dir != "" {
		abs, err := filepath.Abs(dir)
		return localpg.Registry{Dir: abs}, err
	}
	return localpg.DefaultRegistry()
}

func newServerStartCmd(env *Env) *cobra.Command {
	var name, version string
	var sets, initdb []string
	var port int
	var ports localpg.PortRange
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a named local server (downloading the PostgreSQL version if needed) and print its DSN",
		Args:  cobra.NoArgs,
		Example: `  pgbakeoff server start --name a --version 16 --set shared_buffers=1GB
  pgbakeoff server start --name b --version 11 --initdb --data-checksums`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := localpg.Options{Name: name, Version: version, InitdbArgs: initdb, Port: port, Ports: ports, Log: env.Stderr}
			for _, s := range sets {
				st, err := localpg.ParseSetting(s)
				if err != nil {
					return usageError{fmt.Errorf("--set %q: %w", s, err)}
				}
				opts.Settings = append(opts.Settings, st)
			}
			reg, err := serverRegistry(cmd)
			if err != nil {
				return err
			}
			opts.BaseDir = reg.Dir
			srv, err := localpg.Start(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if err := reg.Save(srv); err != nil {
				_ = srv.Stop(context.Background())
				return err
			}
			fmt.Fprintf(env.Stderr, "server %s: PostgreSQL %s on port %d, data %s, log %s\n", srv.Name, srv.Version, srv.Port, srv.DataDir, srv.LogFile)
			fmt.Fprintln(env.Stdout, srv.DSN())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", localpg.DefaultName, "server name, used by stop, list and logs")
	f.StringVar(&version, "version", "", "PostgreSQL major (16) or full (16.10) version; default: the newest installed")
	f.StringArrayVar(&sets, "set", nil, "server setting name=value (repeatable)")
	f.StringArrayVar(&initdb, "initdb", nil, "extra initdb option, such as --data-checksums (repeatable)")
	f.IntVar(&port, "port", 0, "TCP port on 127.0.0.1 (default: a free one)")
	portRangeFlag(f, &ports)
	return cmd
}

func newServerStopCmd(env *Env) *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a local server by name, leftovers too (with --remove also delete its data)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, srv, err := registered(cmd, args[0])
			if err != nil {
				return err
			}
			if err := srv.Stop(cmd.Context()); err != nil {
				return err
			}
			if !remove {
				fmt.Fprintf(env.Stdout, "server %s stopped\n", srv.Name)
				return nil
			}
			if err := reg.Remove(srv.Name); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "server %s stopped and removed\n", srv.Name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "also delete the data directory and forget the server")
	return cmd
}

func newServerListCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the local servers, and the data directories left by studies and failed starts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := serverRegistry(cmd)
			if err != nil {
				return err
			}
			list, err := reg.List()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tSTATE\tPORT\tSIZE\tDSN")
			for _, s := range list {
				port, dsn := "-", "-"
				if s.Port != 0 {
					port, dsn = strconv.Itoa(s.Port), s.DSN
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, cmp.Or(s.Version, "-"), serverState(s), port, engine.FormatBytes(s.Bytes), dsn)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, s := range list {
				if s.Leftover && !s.Running {
					fmt.Fprintf(env.Stderr, "leftover servers are not registered; `pgbakeoff server prune` removes those not running\n")
					break
				}
			}
			return nil
		},
	}
}

// serverState is a server's STATE in server list and prune.
func serverState(s localpg.Status) string {
	switch {
	case s.Running && s.Leftover:
		return fmt.Sprintf("running, leftover (pid %d)", s.PID)
	case s.Running:
		return fmt.Sprintf("running (pid %d)", s.PID)
	case s.Leftover && s.Version == "":
		return "leftover, failed start"
	case s.Leftover:
		return "leftover, stopped"
	}
	return "stopped"
}

func newServerPruneCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "prune",
		Short: "Remove the data directories that studies and failed starts left, unless a server runs on them",
		Long: `Remove every leftover server directory: one that no registry entry names, such as
the data of a study's local servers or of a start that failed, and that no running
server uses. Servers started with 'server start' stay until 'server stop NAME --remove'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := serverRegistry(cmd)
			if err != nil {
				return err
			}
			p, err := reg.Prune()
			var freed int64
			for _, s := range p.Removed {
				fmt.Fprintf(env.Stdout, "removed %s (%s, %s): %s\n", s.Name, serverState(s), engine.FormatBytes(s.Bytes), filepath.Dir(s.DataDir))
				freed += s.Bytes
			}
			for _, s := range p.Running {
				fmt.Fprintf(env.Stdout, "kept %s: a server runs on it (pid %d); `pgbakeoff server stop %s --remove` stops and removes it\n", s.Name, s.PID, s.Name)
			}
			if err != nil {
				return err
			}
			dirs := "directories"
			if len(p.Removed) == 1 {
				dirs = "directory"
			}
			fmt.Fprintf(env.Stdout, "freed %s: removed %d server %s from %s\n", engine.FormatBytes(freed), len(p.Removed), dirs, reg.Dir)
			return nil
		},
	}
}

func newServerLogsCmd(env *Env) *cobra.Command {
	var tail int
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the end of a named local server's log",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, srv, err := registered(cmd, args[0])
			if err != nil {
				return err
			}
			b, err := srv.ReadLog(tail)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "%s:\n", srv.LogFile)
			_, err = env.Stdout.Write(b)
			return err
		},
	}
	cmd.Flags().IntVar(&tail, "tail", 50, "lines from the end (0 for all)")
	return cmd
}

// registered loads a named server, or a leftover, from the registry in
// --servers-dir.
func registered(cmd *cobra.Command, name string) (localpg.Registry, *localpg.Server, error) {
	reg, err := serverRegistry(cmd)
	if err != nil {
		return reg, nil, err
	}
	srv, err := reg.Get(name)
	return reg, srv, err
}
