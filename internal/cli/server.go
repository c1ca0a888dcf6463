package cli

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

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
	var opts localpg.ClusterOptions
	var sets []string
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a named local server (downloading the PostgreSQL version if needed), with streaming standbys if asked, and print its DSN",
		Args:  cobra.NoArgs,
		Example: `  pgbakeoff server start --name a --version 16 --set shared_buffers=1GB
  pgbakeoff server start --name b --version 11 --initdb --data-checksums
  pgbakeoff server start --name ha --version 17 --standbys 2 --synchronous on`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = env.Stderr
			if err := localpg.CheckCluster(opts.Version, opts.Standbys, opts.Synchronous); err != nil {
				return usageError{err}
			}
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
			c, err := localpg.StartCluster(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if err := reg.SaveCluster(c); err != nil {
				_ = c.Stop(context.Background())
				return err
			}
			for _, srv := range c.Nodes {
				fmt.Fprintf(env.Stderr, "server %s: PostgreSQL %s on port %d, data %s, log %s\n", srv.Name, srv.Version, srv.Port, srv.DataDir, srv.LogFile)
			}
			fmt.Fprintln(env.Stdout, c.DSN())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", localpg.DefaultName, "server name, used by stop, list and logs; standbys are NAME.1, NAME.2, ...")
	f.StringVar(&opts.Version, "version", "", "PostgreSQL major (16) or full (16.10) version; default: the newest installed")
	f.StringArrayVar(&sets, "set", nil, "server setting name=value (repeatable)")
	f.StringArrayVar(&opts.InitdbArgs, "initdb", nil, "extra initdb option, such as --data-checksums (repeatable)")
	f.IntVar(&opts.Port, "port", 0, "TCP port on 127.0.0.1 of the first server (default: a free one)")
	f.IntVar(&opts.Standbys, "standbys", 0, fmt.Sprintf("streaming standbys, each on its own port (0 to %d; PostgreSQL 12 or later)", localpg.MaxStandbys))
	f.StringVar(&opts.Synchronous, "synchronous", localpg.SyncOff, "commits wait for a standby: off, on (flushed there) or remote_apply (applied there)")
	portRangeFlag(f, &opts.Ports)
	return cmd
}

func newServerStopCmd(env *Env) *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a local server by name with the other servers of its cluster, leftovers too (with --remove also delete their data)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := serverRegistry(cmd)
			if err != nil {
				return err
			}
			c, err := reg.Cluster(args[0])
			if err != nil {
				return err
			}
			if err := c.Stop(cmd.Context()); err != nil {
				return err
			}
			var names []string
			for _, srv := range c.Nodes {
				names = append(names, srv.Name)
			}
			if !remove {
				fmt.Fprintf(env.Stdout, "server %s stopped\n", strings.Join(names, ", "))
				return nil
			}
			for _, name := range names {
				if err := reg.Remove(name); err != nil {
					return err
				}
			}
			fmt.Fprintf(env.Stdout, "server %s stopped and removed\n", strings.Join(names, ", "))
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
			list, err := reg.List(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tSTATE\tROLE\tLAG\tPORT\tSIZE\tDSN")
			for _, s := range list {
				port, dsn := "-", "-"
				if s.Port != 0 {
					port, dsn = strconv.Itoa(s.Port), s.DSN
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, cmp.Or(s.Version, "-"), serverState(s), cmp.Or(s.Role, "-"), serverLag(s),
					port, engine.FormatBytes(s.Bytes), dsn)
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

// serverLag is a standby's LAG in server list: the WAL its primary has
// written that it has not replayed, and the replay_lag its primary reports.
func serverLag(s localpg.Status) string {
	switch {
	case s.Role != "standby":
		return "-"
	case s.Replica == nil:
		return "not connected"
	case s.Replica.State != "streaming":
		return s.Replica.State
	}
	return fmt.Sprintf("%s, %s", engine.FormatBytes(s.Replica.LagBytes), s.Replica.ReplayLag.Round(time.Millisecond))
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
