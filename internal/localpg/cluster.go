package localpg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Synchronous replication modes of a cluster: off, or commits wait until a
// standby has flushed (on) or applied (remote_apply) them.
const (
	SyncOff         = "off"
	SyncOn          = "on"
	SyncRemoteApply = "remote_apply"
)

// MaxStandbys bounds a cluster's standbys, within max_wal_senders' default.
const MaxStandbys = 8

// minStandbyMajor is the first release with standby.signal and
// primary_conninfo as an ordinary setting.
const minStandbyMajor = 12

// ClusterOptions describe a primary and its streaming standbys. Every node
// gets Options' settings; Name and Port are the first node's.
type ClusterOptions struct {
	Options
	Standbys    int    // 0 = a primary alone, as Start
	Synchronous string // "", SyncOff, SyncOn or SyncRemoteApply
}

// Cluster is a primary and its standbys, each a Server of its own with its
// own port. Nodes[0] is named as the cluster and was its first primary;
// Nodes[i] is NodeName(Name, i). Which node is the primary changes with
// failovers; Primary asks the servers.
type Cluster struct {
	Name  string
	Nodes []*Server
}

// NodeName is the name of a cluster's node i: the cluster's name for node 0,
// "name.i" for the others.
func NodeName(cluster string, i int) string {
	if i == 0 {
		return cluster
	}
	return cluster + "." + strconv.Itoa(i)
}

// CheckCluster refuses a cluster shape before anything starts: standbys out
// of range, an unknown synchronous mode, synchronous replication without
// standbys, or standbys on a version before 12. version may be "".
func CheckCluster(version string, standbys int, sync string) error {
	switch sync {
	case "", SyncOff, SyncOn, SyncRemoteApply:
	default:
		return fmt.Errorf("synchronous %q: want off, on or remote_apply", sync)
	}
	switch {
	case standbys < 0 || standbys > MaxStandbys:
		return fmt.Errorf("standbys %d: want 0 to %d", standbys, MaxStandbys)
	case standbys == 0 && sync != "" && sync != SyncOff:
		return fmt.Errorf("synchronous %s needs standbys: a primary alone has no standby to wait for", sync)
	case standbys == 0:
		return nil
	}
	if r, err := parseRequest(version); err != nil {
		return err
	} else if r.major != 0 && r.major < minStandbyMajor {
		return fmt.Errorf("standbys need PostgreSQL %d or later, not %s", minStandbyMajor, version)
	}
	return nil
}

// replicationSettings are every node's settings for the cluster's mode; a
// standby ignores those of a primary until it is promoted. "ANY 1 (*)" lets
// any one standby confirm a commit, whichever node is primary. The log's
// times are in UTC so that LoggedAt can read them.
func replicationSettings(sync string) []Setting {
	set := []Setting{{"hot_standby", "on"}, {"wal_level", "replica"}, {"log_timezone", "UTC"}}
	if sync == SyncOn || sync == SyncRemoteApply {
		set = append(set, Setting{"synchronous_standby_names", "ANY 1 (*)"}, Setting{"synchronous_commit", sync})
	}
	return set
}

// StartCluster starts a primary and opts.Standbys streaming standbys cloned
// from it, each with a physical replication slot on the primary. Nodes whose
// data directories exist start on them again: the primary is the first node
// that is not a standby, and the others follow it. With no standbys it is
// Start. A failed start stops the nodes it started and removes those it
// created.
func StartCluster(ctx context.Context, opts ClusterOptions) (_ *Cluster, err error) {
	if err := CheckCluster(opts.Version, opts.Standbys, opts.Synchronous); err != nil {
		return nil, err
	}
	if opts.Standbys == 0 {
		s, err := Start(ctx, opts.Options)
		if err != nil {
			return nil, err
		}
		return &Cluster{Name: s.Name, Nodes: []*Server{s}}, nil
	}
	base, err := clusterBase(ctx, opts)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: base.Name, Nodes: make([]*Server, opts.Standbys+1)}
	var created []*Server
	first := firstPrimary(base.BaseDir, base.Name, opts.Standbys)
	defer func() {
		if err != nil {
			c.abandon(c.Nodes[first], created)
		}
	}()
	for _, i := range append([]int{first}, othersThan(first, opts.Standbys+1)...) {
		node := base
		node.Name = NodeName(base.Name, i)
		if i != 0 {
			node.Port = 0 // Options.Port is the first node's
		}
		var up *upstream
		if i != first {
			up = &upstream{primary: c.Nodes[first]}
		}
		fresh := !hasData(filepath.Join(base.BaseDir, node.Name, "data"))
		s, err := start(ctx, node, up)
		if err != nil {
			return nil, err
		}
		s.Cluster = c.Name
		c.Nodes[i] = s
		if fresh {
			created = append(created, s)
		}
	}
	return c, nil
}

// clusterBase is the options every node starts from: binaries found once,
// a version that has standbys, the replication settings before the
// caller's, so that the caller's win, and an absolute servers directory.
func clusterBase(ctx context.Context, opts ClusterOptions) (Options, error) {
	base := opts.Options
	if base.Name == "" {
		base.Name = DefaultName
	}
	if !serverName.MatchString(base.Name) {
		return base, fmt.Errorf("invalid server name %q: use letters, digits, '.', '_' and '-'", base.Name)
	}
	var err error
	if base.Install == nil {
		log := base.Log
		if log == nil {
			log = io.Discard
		}
		if base.Install, err = FindBinaries(ctx, base.Version, log); err != nil {
			return base, fmt.Errorf("start cluster %q: %w", base.Name, err)
		}
	}
	if base.Install.Major < minStandbyMajor {
		return base, fmt.Errorf("start cluster %q: standbys need PostgreSQL %d or later, not %s", base.Name, minStandbyMajor, base.Install.Version)
	}
	if base.BaseDir == "" {
		if base.BaseDir, err = DefaultServersDir(); err != nil {
			return base, err
		}
	}
	if base.BaseDir, err = filepath.Abs(base.BaseDir); err != nil {
		return base, err
	}
	base.Settings = append(replicationSettings(opts.Synchronous), base.Settings...)
	return base, nil
}

// firstPrimary is the node a cluster starts as its primary: the first whose
// data directory exists and is not a standby's, else node 0.
func firstPrimary(baseDir, name string, standbys int) int {
	for i := range standbys + 1 {
		data := filepath.Join(baseDir, NodeName(name, i), "data")
		if _, err := os.Stat(filepath.Join(data, "standby.signal")); hasData(data) && errors.Is(err, os.ErrNotExist) {
			return i
		}
	}
	return 0
}

func othersThan(i, n int) []int {
	var out []int
	for j := range n {
		if j != i {
			out = append(out, j)
		}
	}
	return out
}

// abandon undoes a failed StartCluster: the slots of the nodes it created
// go from the primary, which would otherwise keep WAL for them for ever,
// every node it started stops, and those it created are removed.
func (c *Cluster) abandon(primary *Server, created []*Server) {
	ctx := context.Background()
	if primary != nil && primary.Running() {
		_ = primary.query(ctx, func(conn *pgx.Conn) error {
			for _, s := range created {
				_, _ = conn.Exec(ctx, "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active", slotName(s.Name))
			}
			return nil
		})
	}
	for _, s := range c.Nodes {
		if s != nil {
			_ = s.Stop(ctx)
		}
	}
	for _, s := range created {
		_ = s.Remove()
	}
}

// DSN names every node over its Unix socket with
// target_session_attrs=read-write, so that clients reach whichever node is
// the primary, after a failover too.
func (c *Cluster) DSN() string {
	return c.dsn(func(s *Server) string { return s.SocketDir })
}

// TCPDSN is DSN over TCP on 127.0.0.1.
func (c *Cluster) TCPDSN() string {
	return c.dsn(func(*Server) string { return "127.0.0.1" })
}

func (c *Cluster) dsn(host func(*Server) string) string {
	if len(c.Nodes) == 1 {
		return c.Nodes[0].dsn(host(c.Nodes[0]))
	}
	var hosts, ports []string
	for _, s := range c.Nodes {
		hosts = append(hosts, host(s))
		ports = append(ports, strconv.Itoa(s.Port))
	}
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres sslmode=disable target_session_attrs=read-write",
		dsnQuote(strings.Join(hosts, ",")), strings.Join(ports, ","))
}

// Stop stops every node, the primaries first so that standbys receive
// their shutdown checkpoints.
func (c *Cluster) Stop(ctx context.Context) error {
	var errs []error
	for _, standby := range []bool{false, true} {
		for _, s := range c.Nodes {
			if s.isStandby() == standby {
				errs = append(errs, s.Stop(ctx))
			}
		}
	}
	return errors.Join(errs...)
}

// Remove deletes every node's data; the nodes must be stopped.
func (c *Cluster) Remove() error {
	var errs []error
	for _, s := range c.Nodes {
		errs = append(errs, s.Remove())
	}
	return errors.Join(errs...)
}

// isStandby reports a data directory that starts as a standby: it has
// standby.signal, which promotion removes.
func (s *Server) isStandby() bool {
	_, err := os.Stat(filepath.Join(s.DataDir, "standby.signal"))
	return err == nil
}
