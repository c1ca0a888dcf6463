package localpg

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// When pgbakeoff runs as root, PostgreSQL runs as an unprivileged user that
// cannot enter /root, so binaries and data live in system directories.
const (
	rootCacheDir = "/var/cache/pgbakeoff"
	rootStateDir = "/var/lib/pgbakeoff"
)

// CacheDirEnv names the environment variable that moves the download cache, for
// example to a disk with more space.
const CacheDirEnv = "PGBAKEOFF_CACHE_DIR"

// DefaultCacheDir is where downloaded PostgreSQL binaries are kept, under
// postgres/<version>-<os>-<arch>: $PGBAKEOFF_CACHE_DIR when set, else the user's cache
// directory, or /var/cache/pgbakeoff for root.
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv(CacheDirEnv); dir != "" {
		return filepath.Abs(dir)
	}
	if os.Geteuid() == 0 {
		return rootCacheDir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache directory: %w", err)
	}
	return filepath.Join(dir, "pgbakeoff"), nil
}

// DefaultStateDir is where named servers keep their data directories and
// registry entries, under servers/: $XDG_STATE_HOME/pgbakeoff or
// ~/.local/state/pgbakeoff on Linux, ~/Library/Application Support/pgbakeoff
// on macOS, and /var/lib/pgbakeoff for root.
func DefaultStateDir() (string, error) {
	if os.Geteuid() == 0 {
		return rootStateDir, nil
	}
	if runtime.GOOS == "darwin" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("find state directory: %w", err)
		}
		return filepath.Join(dir, "pgbakeoff"), nil
	}
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "pgbakeoff"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "pgbakeoff"), nil
}

// DefaultServersDir is the default Options.BaseDir and Registry.Dir.
func DefaultServersDir() (string, error) {
	dir, err := DefaultStateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "servers"), nil
}

// privateDirMode is the mode of directories pgbakeoff creates. Root's
// directories must be traversable by the user PostgreSQL runs as.
func privateDirMode() os.FileMode {
	if os.Geteuid() == 0 {
		return 0o755
	}
	return 0o700
}

// mkdirWritable creates dir and checks that files can be created in it, so
// that a read-only or full disk is reported with the directory's name before
// any long work starts.
func mkdirWritable(dir, purpose string) error {
	if err := os.MkdirAll(dir, privateDirMode()); err != nil {
		return fmt.Errorf("%s %s cannot be created: %w", purpose, dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-test-")
	if err != nil {
		return fmt.Errorf("%s %s is not writable: %w", purpose, dir, err)
	}
	name := f.Name()
	_, werr := f.Write(make([]byte, 4096))
	cerr := f.Close()
	_ = os.Remove(name)
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("%s %s is not writable: %w", purpose, dir, werr)
	}
	return nil
}
