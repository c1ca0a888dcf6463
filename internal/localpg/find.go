package localpg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// FallbackVersion is the major version downloaded when any version would do
// and none is installed.
const FallbackVersion = "16"

// Install is a directory of PostgreSQL server binaries (postgres, initdb).
type Install struct {
	BinDir  string
	Version string // full version, for example "15.18"
	Major   int
}

// Finder looks for PostgreSQL binaries on this machine and downloads them
// when the wanted version is missing. The zero value uses the default cache
// directory and Maven Central.
type Finder struct {
	CacheDir   string       // "" = DefaultCacheDir()
	Repository string       // Maven repository URL; "" = Maven Central
	Client     *http.Client // nil = http.DefaultClient
	Log        io.Writer    // progress lines; nil = discard
}

// FindBinaries returns an installation of the requested PostgreSQL version:
// "" for any (the newest installed), a major version such as "16", or an
// exact version such as "16.10". Versions that are not installed are
// downloaded once into DefaultCacheDir, so later calls work offline.
func FindBinaries(ctx context.Context, version string, log io.Writer) (*Install, error) {
	return Finder{Log: log}.Find(ctx, version)
}

// Find is FindBinaries with the finder's settings. Installed binaries,
// including earlier downloads, are preferred over the network even when a
// newer minor release is available.
func (f Finder) Find(ctx context.Context, version string) (*Install, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	req, err := parseRequest(version)
	if err != nil {
		return nil, f.unavailable(ctx, err)
	}
	installs := f.Installed(ctx)
	for _, in := range installs { // newest first
		v, err := parseServerVersion("(PostgreSQL) " + in.Version)
		if err == nil && req.matches(v) {
			return in, nil
		}
	}
	if req.major == 0 {
		version = FallbackVersion
	}
	return f.Download(ctx, version)
}

// Installed lists the PostgreSQL installations found on this machine and in
// the download cache, newest first. Directories that do not hold a working
// postgres and initdb are left out.
func (f Finder) Installed(ctx context.Context) []*Install {
	var found []*Install
	seen := map[string]bool{}
	for _, dir := range f.candidateDirs(ctx) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		in, err := inspect(ctx, real)
		if err != nil {
			continue
		}
		found = append(found, in)
	}
	slices.SortStableFunc(found, func(a, b *Install) int {
		va, _ := parseServerVersion("(PostgreSQL) " + a.Version)
		vb, _ := parseServerVersion("(PostgreSQL) " + b.Version)
		switch {
		case vb.less(va):
			return -1
		case va.less(vb):
			return 1
		}
		return 0
	})
	return found
}

// candidateDirs lists the places where PostgreSQL server binaries are
// commonly installed, in order of preference for equal versions.
func (f Finder) candidateDirs(ctx context.Context) []string {
	var dirs []string
	if path, err := exec.LookPath("pg_config"); err == nil {
		if out, err := exec.CommandContext(ctx, path, "--bindir").Output(); err == nil {
			dirs = append(dirs, strings.TrimSpace(string(out)))
		}
	}
	for _, name := range []string{"postgres", "initdb"} {
		if path, err := exec.LookPath(name); err == nil {
			if real, err := filepath.EvalSymlinks(path); err == nil {
				dirs = append(dirs, filepath.Dir(real))
			}
		}
	}
	for _, pattern := range []string{
		"/usr/lib/postgresql/*/bin",          // Debian, Ubuntu
		"/usr/pgsql-*/bin",                   // PGDG packages on Red Hat
		"/usr/local/pgsql/bin",               // built from source
		"/opt/homebrew/opt/postgresql@*/bin", // Homebrew on Apple silicon
		"/usr/local/opt/postgresql@*/bin",    // Homebrew on Intel
		"/Applications/Postgres.app/Contents/Versions/*/bin",
	} {
		matches, _ := filepath.Glob(pattern) // the patterns are well formed
		dirs = append(dirs, matches...)
	}
	if cache, err := f.cacheDir(); err == nil {
		matches, _ := filepath.Glob(filepath.Join(cache, "postgres", "*-"+platformSuffix(), "bin"))
		dirs = append(dirs, matches...)
	}
	return dirs
}

// inspect reads the version of the binaries in dir.
func inspect(ctx context.Context, dir string) (*Install, error) {
	for _, name := range []string{"postgres", "initdb"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("%s has no executable %s", dir, name)
		}
	}
	postgres := filepath.Join(dir, "postgres")
	out, err := exec.CommandContext(ctx, postgres, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", postgres, err)
	}
	v, err := parseServerVersion(string(out))
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", postgres, err)
	}
	return &Install{BinDir: dir, Version: v.text, Major: v.major}, nil
}

// unavailable explains that the version cannot be had, listing what can.
func (f Finder) unavailable(ctx context.Context, cause error) error {
	var have []string
	for _, in := range f.Installed(ctx) {
		if !slices.Contains(have, in.Version) {
			have = append(have, in.Version)
		}
	}
	installed := "none"
	if len(have) > 0 {
		installed = strings.Join(have, ", ")
	}
	downloadable := "unknown (" + platformSuffix() + ")"
	var noPlatform *noPlatformError
	if rel, err := f.releases(ctx); err == nil {
		downloadable = strings.Join(rel.majors(), ", ")
	} else if errors.As(err, &noPlatform) {
		downloadable = "none for " + noPlatform.platform
	}
	return fmt.Errorf("%w (installed: %s; downloadable major versions: %s)", cause, installed, downloadable)
}

func (f Finder) cacheDir() (string, error) {
	if f.CacheDir != "" {
		return f.CacheDir, nil
	}
	return DefaultCacheDir()
}

func (f Finder) log() io.Writer {
	if f.Log == nil {
		return io.Discard
	}
	return f.Log
}

// platformSuffix names this machine's platform as cache directories do.
func platformSuffix() string { return runtime.GOOS + "-" + runtime.GOARCH }
