package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/spf13/cobra"
)

func newServerCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Start, stop, list and read the logs of local PostgreSQL servers that pgbakeoff runs",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSub("start, stop, list, logs"),
	}
	cmd.AddCommand(newServerStartCmd(env), newServerStopCmd(env), newServerListCmd(env), newServerLogsCmd(env))
	return cmd
}

func newServerStartCmd(env *Env) *cobra.Command {
	var name, version string
	var sets, initdb []string
	var port int
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a named local server (downloading the PostgreSQL version if needed) and print its DSN",
		Args:  cobra.NoArgs,
		Example: `  pgbakeoff server start --name a --version 16 --set shared_buffers=1GB
  pgbakeoff server start --name b --version 11 --initdb --data-checksums`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := localpg.Options{Name: name, Version: version, InitdbArgs: initdb, Port: port, Log: env.Stderr}
			for _, s := range sets {
				st, err := localpg.ParseSetting(s)
				if err != nil {
					return usageError{fmt.Errorf("--set %q: %w", s, err)}
				}
				opts.Settings = append(opts.Settings, st)
			}
			reg, err := localpg.DefaultRegistry()
			if err != nil {
				return err
			}
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
	return cmd
}

func newServerStopCmd(env *Env) *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a named local server (and with --remove delete its data)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, srv, err := registered(args[0])
			if err != nil {
				return err
			}
			if err := srv.Stop(cmd.Context()); err != nil {
				return err
			}
			if remove {
				if err := srv.Remove(); err != nil {
					return err
				}
				if err := reg.Delete(srv.Name); err != nil {
					return err
				}
			}
			fmt.Fprintf(env.Stdout, "server %s stopped\n", srv.Name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "also delete the data directory and forget the server")
	return cmd
}

func newServerListCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the named local servers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := localpg.DefaultRegistry()
			if err != nil {
				return err
			}
			list, err := reg.List()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tSTATE\tPORT\tDSN")
			for _, s := range list {
				state := "stopped"
				if s.Running {
					state = fmt.Sprintf("running (pid %d)", s.PID)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.Name, s.Version, state, s.Port, s.DSN)
			}
			return tw.Flush()
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
			_, srv, err := registered(args[0])
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

// registered loads a named server from the default registry.
func registered(name string) (localpg.Registry, *localpg.Server, error) {
	reg, err := localpg.DefaultRegistry()
	if err != nil {
		return reg, nil, err
	}
	srv, err := reg.Get(name)
	return reg, srv, err
}
