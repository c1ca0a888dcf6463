package localpg

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Registry remembers named servers between processes: one JSON file per
// server in Dir, so that `pgbakeoff server stop` can stop what an earlier
// `pgbakeoff server start` started.
type Registry struct {
	Dir string
}

// DefaultRegistry is the registry in DefaultServersDir.
func DefaultRegistry() (Registry, error) {
	dir, err := DefaultServersDir()
	if err != nil {
		return Registry{}, err
	}
	return Registry{Dir: dir}, nil
}

// Status describes a server in the registry's directory.
type Status struct {
	Name    string
	Version string // "" when there is no data directory, as after a failed start
	Port    int    // 0 for a leftover that is not running
	DSN     string // "" for a leftover that is not running
	Running bool
	PID     int // 0 when not running
	DataDir string
	LogFile string
	// Leftover marks a server directory without a registry entry: the
	// servers of studies, and of starts that failed before cleaning up.
	Leftover bool
	Bytes    int64  // disk space taken by the data directory and log
	Cluster  string // the cluster the server is a node of, "" for none
	// Role is "primary" or "standby" while the server runs, "" otherwise.
	Role string
	// Replica is a running standby as its primary sees it; nil when it is
	// not connected or not a standby.
	Replica *Replica

	socketDir string
}

// Save records the server under its name, replacing an earlier entry.
func (r Registry) Save(s *Server) error {
	if !serverName.MatchString(s.Name) {
		return fmt.Errorf("save server: invalid name %q", s.Name)
	}
	if err := os.MkdirAll(r.Dir, privateDirMode()); err != nil {
		return fmt.Errorf("save server %q: %w", s.Name, err)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("save server %q: %w", s.Name, err)
	}
	tmp, err := os.CreateTemp(r.Dir, ".save-*.json")
	if err != nil {
		return fmt.Errorf("save server %q: %w", s.Name, err)
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), r.path(s.Name))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("save server %q in %s: %w", s.Name, r.Dir, err)
	}
	return nil
}

// SaveCluster records each of the cluster's nodes under its name.
func (r Registry) SaveCluster(c *Cluster) error {
	for _, s := range c.Nodes {
		if err := r.Save(s); err != nil {
			return err
		}
	}
	return nil
}

// Cluster loads the cluster that the server name is a node of, registered
// or leftover: its nodes are the servers named NodeName(cluster, i). A
// server on its own is a cluster of one node.
func (r Registry) Cluster(name string) (*Cluster, error) {
	s, err := r.Get(name)
	if err != nil {
		return nil, err
	}
	if s.Cluster == "" && r.registered(name) {
		return &Cluster{Name: name, Nodes: []*Server{s}}, nil
	}
	// A study's cluster is not registered: its nodes are leftovers.
	group := cmp.Or(s.Cluster, s.Name)
	c := &Cluster{Name: group}
	for i := range MaxStandbys + 1 {
		node, err := r.Get(NodeName(group, i))
		if err != nil || node.Cluster != s.Cluster || s.Cluster == "" && r.registered(node.Name) {
			continue // not there, or not of this cluster
		}
		c.Nodes = append(c.Nodes, node)
	}
	if len(c.Nodes) == 0 {
		c.Nodes = []*Server{s}
	}
	return c, nil
}

// Get loads a registered server, or describes a leftover server directory
// of that name. The result can be stopped, removed and have its log read,
// from any process.
func (r Registry) Get(name string) (*Server, error) {
	if !serverName.MatchString(name) {
		return nil, r.unknown(name)
	}
	b, err := os.ReadFile(r.path(name))
	if errors.Is(err, os.ErrNotExist) {
		if isServerDir(filepath.Join(r.Dir, name)) {
			return r.leftover(name), nil
		}
		return nil, r.unknown(name)
	}
	if err != nil {
		return nil, fmt.Errorf("load server %q: %w", name, err)
	}
	var s Server
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("load server %q from %s: %w", name, r.path(name), err)
	}
	return &s, nil
}

// List describes every registered server and every leftover server
// directory, sorted by name, checking which are running and, for standbys,
// how far behind their primaries they are.
func (r Registry) List(ctx context.Context) ([]Status, error) {
	names, err := r.names()
	if err != nil {
		return nil, err
	}
	leftovers, err := r.leftovers()
	if err != nil {
		return nil, err
	}
	var out []Status
	for _, name := range names {
		s, err := r.Get(name)
		if err != nil {
			return nil, err
		}
		out = append(out, s.status(false))
	}
	for _, name := range leftovers {
		out = append(out, r.leftover(name).status(true))
	}
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Name, b.Name) })
	addReplicas(ctx, out)
	return out, nil
}

// addReplicas finds each running standby in what its primary reports. A
// primary that cannot be asked leaves its standbys without.
func addReplicas(ctx context.Context, list []Status) {
	if !slices.ContainsFunc(list, func(s Status) bool { return s.Role == "standby" }) {
		return
	}
	for _, p := range list {
		if p.Role != "primary" {
			continue
		}
		ask, cancel := context.WithTimeout(ctx, 3*time.Second)
		reps, _ := (&Server{Name: p.Name, SocketDir: p.socketDir, Port: p.Port}).Replication(ask)
		cancel()
		for _, rep := range reps {
			for i := range list {
				if list[i].Name == rep.Name && list[i].Role == "standby" {
					list[i].Replica = &rep
				}
			}
		}
	}
}

func (s *Server) status(leftover bool) Status {
	st := Status{
		Name:     s.Name,
		Version:  s.Version,
		DataDir:  s.DataDir,
		LogFile:  s.LogFile,
		Leftover: leftover,
		Bytes:    diskUsage(s.DataDir) + diskUsage(s.LogFile),
	}
	st.PID, st.Running = s.postmaster()
	if !leftover || st.Running {
		st.Port, st.DSN, st.socketDir = s.Port, s.DSN(), s.SocketDir
	}
	st.Cluster = s.Cluster
	if st.Running {
		st.Role = "primary"
		if s.isStandby() {
			st.Role = "standby"
		}
	}
	return st
}

// Remove deletes a stopped server's data directory and log and forgets
// it. It works for leftover server directories too.
func (r Registry) Remove(name string) error {
	s, err := r.Get(name)
	if err != nil {
		return err
	}
	// A server being started holds its directory's lock; what is not there is
	// not being started.
	if dir := filepath.Join(r.Dir, name); dirExists(dir) {
		unlock, ok := tryLockDir(dir)
		if !ok {
			return fmt.Errorf("server %q is being started: wait for it, then stop it", name)
		}
		defer unlock()
	}
	if err := s.Remove(); err != nil {
		return err
	}
	if err := os.Remove(r.path(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("forget server %q: %w", name, err)
	}
	return nil
}

// Pruned is what Prune did.
type Pruned struct {
	Removed []Status // leftovers removed; their Bytes are the space freed
	Running []Status // leftovers kept because a postmaster runs on them
}

// Prune removes every leftover server directory that no running server
// uses. Registered servers, running or not, are kept.
func (r Registry) Prune() (Pruned, error) {
	var p Pruned
	leftovers, err := r.leftovers()
	if err != nil {
		return p, err
	}
	for _, name := range leftovers {
		unlock, ok := tryLockDir(filepath.Join(r.Dir, name))
		if !ok {
			continue // being started right now
		}
		s := r.leftover(name)
		st := s.status(true)
		if st.Running {
			p.Running = append(p.Running, st)
		} else if err = s.Remove(); err == nil {
			p.Removed = append(p.Removed, st)
		}
		unlock()
		if err != nil {
			return p, err
		}
	}
	return p, nil
}

// Delete forgets a server. Its data stays; see Server.Remove.
func (r Registry) Delete(name string) error {
	if !serverName.MatchString(name) {
		return r.unknown(name)
	}
	err := os.Remove(r.path(name))
	if errors.Is(err, os.ErrNotExist) {
		return r.unknown(name)
	}
	if err != nil {
		return fmt.Errorf("delete server %q: %w", name, err)
	}
	return nil
}

func (r Registry) registered(name string) bool {
	_, err := os.Stat(r.path(name))
	return err == nil
}

func (r Registry) path(name string) string {
	return filepath.Join(r.Dir, name+".json")
}

func (r Registry) names() ([]string, error) {
	entries, err := os.ReadDir(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list servers in %s: %w", r.Dir, err)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if ok && !e.IsDir() && serverName.MatchString(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// leftovers lists the server directories in Dir that have no registry
// entry, sorted by name.
func (r Registry) leftovers() ([]string, error) {
	entries, err := os.ReadDir(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list servers in %s: %w", r.Dir, err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !serverName.MatchString(name) {
			continue
		}
		if _, err := os.Stat(r.path(name)); err == nil {
			continue // registered
		}
		if isServerDir(filepath.Join(r.Dir, name)) {
			names = append(names, name)
		}
	}
	return names, nil
}

// serverFiles are what Start creates in a server's directory.
var serverFiles = []string{"data", "postgres.log", "sock"}

// isServerDir reports a directory that holds nothing but what Start
// creates, with a data directory that is empty or PostgreSQL's, so that
// removing a leftover never deletes anything else.
func isServerDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !slices.Contains(serverFiles, e.Name()) {
			return false
		}
	}
	data, err := os.ReadDir(filepath.Join(dir, "data"))
	if errors.Is(err, os.ErrNotExist) || err == nil && len(data) == 0 {
		return true
	}
	_, err = os.Stat(filepath.Join(dir, "data", "PG_VERSION"))
	return err == nil
}

// leftover describes the server directory of that name in Dir from what
// is on disk: its major version from PG_VERSION and, while a postmaster
// runs on it, its port and socket directory from postmaster.pid.
func (r Registry) leftover(name string) *Server {
	dir := filepath.Join(r.Dir, name)
	s := &Server{Name: name, DataDir: filepath.Join(dir, "data"), LogFile: filepath.Join(dir, "postgres.log")}
	if fi, err := os.Stat(filepath.Join(dir, "sock")); err == nil && fi.IsDir() {
		s.SocketDir = filepath.Join(dir, "sock")
	}
	if b, err := os.ReadFile(filepath.Join(s.DataDir, "PG_VERSION")); err == nil {
		s.Version = strings.TrimSpace(string(b))
		s.Major, _ = strconv.Atoi(s.Version)
	}
	pid, ok := s.postmaster()
	if !ok {
		return s
	}
	s.PID = pid
	// postmaster.pid: pid, data directory, start time, port, socket directory.
	b, _ := os.ReadFile(filepath.Join(s.DataDir, "postmaster.pid"))
	lines := strings.Split(string(b), "\n")
	if len(lines) > 4 {
		s.Port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
		// Start puts sockets in the server's directory or in /tmp/pgbk-*.
		if sock := strings.TrimSpace(lines[4]); sock == s.SocketDir || strings.HasPrefix(sock, "/tmp/pgbk-") {
			s.SocketDir = sock
		}
	}
	return s
}

// diskUsage is the space the files under path take, 0 when it is missing.
func diskUsage(path string) int64 {
	var n int64
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts count as nothing
		}
		if fi, err := d.Info(); err == nil && !d.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// unknown is the error for a name that is neither registered nor a
// leftover; it lists the names that are.
func (r Registry) unknown(name string) error {
	names, err := r.names()
	if err == nil {
		var more []string
		more, err = r.leftovers()
		names = append(names, more...)
		slices.Sort(names)
	}
	switch {
	case err != nil:
		return fmt.Errorf("no server named %q (%v)", name, err)
	case len(names) == 0:
		return fmt.Errorf("no server named %q: no servers are registered or left in %s", name, r.Dir)
	}
	return fmt.Errorf("no server named %q (known: %s)", name, strings.Join(names, ", "))
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
