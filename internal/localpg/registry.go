package localpg

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// Status describes a registered server.
type Status struct {
	Name    string
	Version string
	Port    int
	DSN     string
	Running bool
	PID     int // 0 when not running
	DataDir string
	LogFile string
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

// Get loads a registered server. The result can be stopped, removed and
// have its log read, from any process.
func (r Registry) Get(name string) (*Server, error) {
	if !serverName.MatchString(name) {
		return nil, r.unknown(name)
	}
	b, err := os.ReadFile(r.path(name))
	if errors.Is(err, os.ErrNotExist) {
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

// List describes every registered server, sorted by name, checking which
// are running.
func (r Registry) List() ([]Status, error) {
	names, err := r.names()
	if err != nil {
		return nil, err
	}
	var out []Status
	for _, name := range names {
		s, err := r.Get(name)
		if err != nil {
			return nil, err
		}
		pid, running := s.postmaster()
		out = append(out, Status{
			Name:    s.Name,
			Version: s.Version,
			Port:    s.Port,
			DSN:     s.DSN(),
			Running: running,
			PID:     pid,
			DataDir: s.DataDir,
			LogFile: s.LogFile,
		})
	}
	return out, nil
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

// unknown is the error for a name that is not registered; it lists the
// names that are.
func (r Registry) unknown(name string) error {
	names, err := r.names()
	switch {
	case err != nil:
		return fmt.Errorf("no server named %q (%v)", name, err)
	case len(names) == 0:
		return fmt.Errorf("no server named %q: no servers are registered", name)
	}
	return fmt.Errorf("no server named %q (known: %s)", name, strings.Join(names, ", "))
}
