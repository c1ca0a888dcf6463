package localpg

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ulikunitz/xz"
)

// Downloads come from the embedded-postgres-binaries artifacts that Zonky
// publishes to Maven Central: one jar per platform and release, holding a
// tar.xz of bin/, lib/ and share/ with binaries that find their libraries
// through an $ORIGIN-relative run path.
const (
	mavenCentral = "https://repo1.maven.org/maven2"
	mavenGroup   = "io/zonky/test/postgres"
)

// Download returns the requested version from the download cache, fetching
// it first if it is not there. The jar's SHA-1 checksum is checked before
// anything is extracted, and the extracted tree appears in the cache only
// once complete.
func (f Finder) Download(ctx context.Context, version string) (*Install, error) {
	req, err := parseRequest(version)
	if err != nil {
		return nil, f.unavailable(ctx, err)
	}
	if req.major == 0 {
		req, _ = parseRequest(FallbackVersion)
	}
	cache, err := f.cacheDir()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(cache, "postgres")
	if in := cached(ctx, root, req); in != nil {
		return in, nil
	}
	if err := mkdirWritable(root, "PostgreSQL binary cache"); err != nil {
		return nil, err
	}
	rels, err := f.releases(ctx)
	if err != nil {
		return nil, fmt.Errorf("find PostgreSQL %s to download: %w", req.text, err)
	}
	rel, ok := rels.pick(req)
	if !ok {
		return nil, f.unavailable(ctx, fmt.Errorf("PostgreSQL %s is neither installed nor available for download", req.text))
	}
	dest := filepath.Join(root, rel.version.text+"-"+platformSuffix())
	if err := f.fetch(ctx, rels.artifact, rel, dest); err != nil {
		return nil, err
	}
	in, err := inspect(ctx, filepath.Join(dest, "bin"))
	if err != nil {
		return nil, fmt.Errorf("downloaded PostgreSQL %s does not run here: %w", rel.version.text, err)
	}
	return in, nil
}

// cached returns the newest cached download matching req, if any.
func cached(ctx context.Context, root string, req request) *Install {
	dirs, _ := filepath.Glob(filepath.Join(root, "*-"+platformSuffix(), "bin")) // pattern is well formed
	var best *Install
	var bestVersion version
	for _, dir := range dirs {
		in, err := inspect(ctx, dir)
		if err != nil {
			continue
		}
		v, err := parseServerVersion("(PostgreSQL) " + in.Version)
		if err != nil || !req.matches(v) {
			continue
		}
		if best == nil || bestVersion.less(v) {
			best, bestVersion = in, v
		}
	}
	return best
}

// fetch downloads, verifies and extracts one release into dest.
func (f Finder) fetch(ctx context.Context, artifact string, rel release, dest string) error {
	root := filepath.Dir(dest)
	base := fmt.Sprintf("%s/%s/%s/%s/%s-%s.jar", f.repository(), mavenGroup, artifact, rel.maven, artifact, rel.maven)
	sum, err := f.get(ctx, base+".sha1", 1<<10)
	if err != nil {
		return fmt.Errorf("download checksum of PostgreSQL %s: %w", rel.version.text, err)
	}
	jar, err := os.CreateTemp(root, ".download-*.jar")
	if err != nil {
		return fmt.Errorf("download PostgreSQL %s into %s: %w", rel.version.text, root, err)
	}
	defer func() {
		_ = jar.Close()
		_ = os.Remove(jar.Name())
	}()
	fmt.Fprintf(f.log(), "downloading PostgreSQL %s for %s from %s\n", rel.version.text, platformSuffix(), base)
	start := time.Now()
	resp, err := f.open(ctx, base)
	if err != nil {
		return fmt.Errorf("download PostgreSQL %s into %s: %w", rel.version.text, root, err)
	}
	defer resp.Body.Close()
	need := resp.ContentLength * extractedPerJarByte
	if err := checkSpace(root, rel.version.text, need); err != nil {
		return err
	}
	n, err := io.Copy(jar, resp.Body)
	if err != nil {
		if full := asNoSpace(err, root, rel.version.text, need); full != nil {
			return full
		}
		return fmt.Errorf("download PostgreSQL %s into %s: %w", rel.version.text, root, err)
	}
	if err := verifySHA1(jar.Name(), string(sum)); err != nil {
		return fmt.Errorf("download PostgreSQL %s from %s: %w", rel.version.text, base, err)
	}
	tmp, err := os.MkdirTemp(root, ".extract-")
	if err != nil {
		return fmt.Errorf("extract PostgreSQL %s into %s: %w", rel.version.text, root, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // a no-op once renamed
	if err := extractJar(jar.Name(), tmp); err != nil {
		if full := asNoSpace(err, root, rel.version.text, n*extractedPerJarByte); full != nil {
			return full
		}
		return fmt.Errorf("extract PostgreSQL %s into %s: %w", rel.version.text, root, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("extract PostgreSQL %s: %w", rel.version.text, err)
	}
	if err := syncTree(tmp); err != nil {
		return fmt.Errorf("extract PostgreSQL %s: %w", rel.version.text, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		// Another process may have finished the same download first.
		if _, serr := os.Stat(filepath.Join(dest, "bin", "postgres")); serr == nil {
			return nil
		}
		return fmt.Errorf("install PostgreSQL %s into %s: %w", rel.version.text, dest, err)
	}
	if d, err := os.Open(root); err == nil {
		_ = d.Sync() // makes the rename durable; the tree is usable either way
		_ = d.Close()
	}
	fmt.Fprintf(f.log(), "PostgreSQL %s (%.1f MB) ready in %s after %s\n", rel.version.text, float64(n)/1e6, dest, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// verifySHA1 checks the file at path against the contents of a Maven .sha1
// file: a hex digest, possibly followed by a file name.
func verifySHA1(path, sha1File string) error {
	fields := strings.Fields(sha1File)
	if len(fields) == 0 {
		return fmt.Errorf("checksum file is empty")
	}
	want := strings.ToLower(fields[0])
	if _, err := hex.DecodeString(want); err != nil || len(want) != 2*sha1.Size {
		return fmt.Errorf("checksum file holds %q, not a SHA-1 digest", fields[0])
	}
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("verify checksum: %w", err)
	}
	defer file.Close()
	h := sha1.New()
	if _, err := io.Copy(h, file); err != nil {
		return fmt.Errorf("verify checksum of %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("SHA-1 checksum mismatch: got %s, want %s", got, want)
	}
	return nil
}

// extractJar unpacks the .txz archive inside the jar at path into dir.
func extractJar(path, dir string) error {
	z, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("open jar: %w", err)
	}
	defer z.Close()
	for _, entry := range z.File {
		if !strings.HasSuffix(entry.Name, ".txz") {
			continue
		}
		r, err := entry.Open()
		if err != nil {
			return fmt.Errorf("open %s in jar: %w", entry.Name, err)
		}
		defer r.Close()
		if err := extractTarXZ(r, dir); err != nil {
			return fmt.Errorf("%s: %w", entry.Name, err)
		}
		return nil
	}
	return fmt.Errorf("jar holds no .txz archive")
}

// extractTarXZ unpacks a tar.xz stream into dir, refusing entries that
// would land outside it.
func extractTarXZ(r io.Reader, dir string) error {
	xr, err := xz.NewReader(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return fmt.Errorf("read xz: %w", err)
	}
	tr := tar.NewReader(xr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tar: %w", err)
		}
		name := filepath.FromSlash(strings.TrimPrefix(hdr.Name, "./"))
		if name == "" || name == "." {
			continue
		}
		if !filepath.IsLocal(name) {
			return fmt.Errorf("archive entry %q points outside the archive", hdr.Name)
		}
		target := filepath.Join(dir, name)
		if hdr.Typeflag != tar.TypeDir {
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(target, tr, hdr.Size, os.FileMode(hdr.Mode)&0o755|0o600); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if filepath.IsAbs(hdr.Linkname) || !filepath.IsLocal(filepath.Join(filepath.Dir(name), filepath.FromSlash(hdr.Linkname))) {
				return fmt.Errorf("archive link %q -> %q points outside the archive", hdr.Name, hdr.Linkname)
			}
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			old := filepath.FromSlash(strings.TrimPrefix(hdr.Linkname, "./"))
			if !filepath.IsLocal(old) {
				return fmt.Errorf("archive link %q -> %q points outside the archive", hdr.Name, hdr.Linkname)
			}
			if err := os.Link(filepath.Join(dir, old), target); err != nil {
				return err
			}
		}
	}
}

// maxEntrySize bounds one extracted file, which is held in memory while it is
// read; the largest file of a PostgreSQL release is tens of megabytes.
const maxEntrySize = 1 << 30

// writeFile writes one extracted file. It is read into memory first, so that
// the file is open for writing only briefly and with syscall.ForkLock held:
// a child forked by another goroutine while the file is open inherits the
// descriptor until it calls exec, and running the file then fails with
// "text file busy" (ETXTBSY).
func writeFile(path string, r io.Reader, size int64, mode os.FileMode) error {
	if size < 0 || size > maxEntrySize {
		return fmt.Errorf("archive entry %s is %d bytes, more than a PostgreSQL file can be", path, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("read %s from the archive: %w", path, err)
	}
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// syncTree flushes every file and directory under dir to disk, so that a
// crash after dir is renamed into the cache cannot leave empty binaries
// there. Files are opened read-only, which a forked child may inherit
// harmlessly.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
		return nil
	})
}

// release is one downloadable PostgreSQL release.
type release struct {
	version version
	maven   string // the Maven version, for example "16.10.0" or "10.5.0-1"
	rank    [2]int // repackaging counters: 11.22.1 > 11.22.0, 10.5.0-1 > 10.5.0
}

// releases are the downloadable releases for this platform, newest first,
// one per PostgreSQL version.
type releases struct {
	artifact string
	list     []release
}

func (r releases) pick(req request) (release, bool) {
	for _, rel := range r.list {
		if req.matches(rel.version) {
			return rel, true
		}
	}
	return release{}, false
}

// majors lists the downloadable major versions, oldest first.
func (r releases) majors() []string {
	var out []string
	for i := len(r.list) - 1; i >= 0; i-- {
		m := strconv.Itoa(r.list[i].version.major)
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

type noPlatformError struct{ platform string }

func (e *noPlatformError) Error() string {
	return "no PostgreSQL binaries are published for " + e.platform
}

// artifact names the Maven artifact for this platform.
func artifact() (string, error) {
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64v8", "386": "i386", "ppc64le": "ppc64le"}[runtime.GOARCH]
	if arch == "" || (runtime.GOOS != "linux" && runtime.GOOS != "darwin") {
		return "", &noPlatformError{platform: platformSuffix()}
	}
	name := "embedded-postgres-binaries-" + runtime.GOOS + "-" + arch
	if runtime.GOOS == "linux" && isMusl() {
		name += "-alpine"
	}
	return name, nil
}

// isMusl reports a musl C library (Alpine), which needs its own binaries.
func isMusl() bool {
	m, _ := filepath.Glob("/lib/ld-musl-*.so.1") // pattern is well formed
	return len(m) > 0
}

// releases reads the artifact's maven-metadata.xml.
func (f Finder) releases(ctx context.Context) (releases, error) {
	name, err := artifact()
	if err != nil {
		return releases{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body, err := f.get(ctx, fmt.Sprintf("%s/%s/%s/maven-metadata.xml", f.repository(), mavenGroup, name), 1<<20)
	if err != nil {
		return releases{}, err
	}
	var meta struct {
		Versions []string `xml:"versioning>versions>version"`
	}
	if err := xml.Unmarshal(body, &meta); err != nil {
		return releases{}, fmt.Errorf("read maven-metadata.xml of %s: %w", name, err)
	}
	return parseReleases(name, meta.Versions), nil
}

// parseReleases keeps the newest packaging of each PostgreSQL 10+ release.
// Maven versions are <major>.<minor>.<n>[-<m>], where n and m count
// repackagings of the same PostgreSQL release.
func parseReleases(artifact string, mavenVersions []string) releases {
	best := map[string]release{}
	for _, mv := range mavenVersions {
		base, suffix, _ := strings.Cut(mv, "-")
		parts := strings.Split(base, ".")
		if len(parts) != 3 {
			continue
		}
		var nums [4]int
		var bad bool
		for i, p := range append(parts, cmp.Or(suffix, "0")) {
			n, err := strconv.Atoi(p)
			bad = bad || err != nil
			nums[i] = n
		}
		if bad || nums[0] < 10 {
			continue
		}
		text := parts[0] + "." + parts[1]
		rel := release{version: version{major: nums[0], minor: nums[1], text: text}, maven: mv, rank: [2]int{nums[2], nums[3]}}
		if old, ok := best[text]; !ok || slices.Compare(old.rank[:], rel.rank[:]) < 0 {
			best[text] = rel
		}
	}
	r := releases{artifact: artifact}
	for _, rel := range best {
		r.list = append(r.list, rel)
	}
	slices.SortFunc(r.list, func(a, b release) int {
		switch {
		case b.version.less(a.version):
			return -1
		case a.version.less(b.version):
			return 1
		}
		return 0
	})
	return r
}

func (f Finder) repository() string {
	if f.Repository != "" {
		return strings.TrimSuffix(f.Repository, "/")
	}
	return mavenCentral
}

func (f Finder) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return http.DefaultClient
}

// get fetches a small document, at most limit bytes.
func (f Finder) get(ctx context.Context, url string, limit int64) ([]byte, error) {
	resp, err := f.open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return body, nil
}

func (f Finder) open(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, err // already names the URL
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp, nil
}
