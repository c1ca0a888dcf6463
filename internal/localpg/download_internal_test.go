package localpg

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ulikunitz/xz"
)

func TestVerifySHA1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file.jar")
	content := []byte("PostgreSQL binaries, or so we pretend\n")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(content)
	good := hex.EncodeToString(sum[:])
	corrupt := []byte(good)
	corrupt[0] ^= 1 // still hex, different digest

	tests := []struct {
		name    string
		sha1    string
		wantErr string
	}{
		{name: "match", sha1: good},
		{name: "match with file name and newline", sha1: strings.ToUpper(good) + "  file.jar\n"},
		{name: "mismatch", sha1: string(corrupt), wantErr: "SHA-1 checksum mismatch"},
		{name: "empty", sha1: " \n", wantErr: "checksum file is empty"},
		{name: "not a digest", sha1: "<html>404</html>", wantErr: "not a SHA-1 digest"},
		{name: "short digest", sha1: good[:38], wantErr: "not a SHA-1 digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verifySHA1(path, tt.sha1)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("verifySHA1 = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("verifySHA1 = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseReleases(t *testing.T) {
	rels := parseReleases("a", []string{"9.6.24", "10.5.0", "10.5.0-1", "11.22.0", "11.22.1", "16.9.0", "16.10.0", "16.x.0", "18.0.0-beta"})
	tests := []struct {
		request   string
		wantMaven string
	}{
		{request: "16", wantMaven: "16.10.0"},
		{request: "16.9", wantMaven: "16.9.0"},
		{request: "11", wantMaven: "11.22.1"},
		{request: "10.5", wantMaven: "10.5.0-1"},
		{request: "9", wantMaven: ""},
		{request: "18", wantMaven: ""},
		{request: "", wantMaven: "16.10.0"},
	}
	for _, tt := range tests {
		t.Run("request="+tt.request, func(t *testing.T) {
			req, err := parseRequest(tt.request)
			if err != nil {
				t.Fatal(err)
			}
			rel, ok := rels.pick(req)
			if ok != (tt.wantMaven != "") || rel.maven != tt.wantMaven {
				t.Errorf("pick(%q) = %q, %v; want %q", tt.request, rel.maven, ok, tt.wantMaven)
			}
		})
	}
	if got := strings.Join(rels.majors(), ","); got != "10,11,16" {
		t.Errorf("majors() = %s, want 10,11,16", got)
	}
}

func TestParseServerVersion(t *testing.T) {
	tests := []struct {
		out       string
		wantText  string
		wantMajor int
		wantErr   bool
	}{
		{out: "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n", wantText: "15.18", wantMajor: 15},
		{out: "postgres (PostgreSQL) 18.6\n", wantText: "18.6", wantMajor: 18},
		{out: "postgres (PostgreSQL) 18beta1\n", wantText: "18beta1", wantMajor: 18},
		{out: "postgres (PostgreSQL) 9.6.24\n", wantErr: true},
		{out: "something else\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.out), func(t *testing.T) {
			v, err := parseServerVersion(tt.out)
			if (err != nil) != tt.wantErr || v.text != tt.wantText || v.major != tt.wantMajor {
				t.Errorf("parseServerVersion = %+v, %v; want %s (major %d), error %v", v, err, tt.wantText, tt.wantMajor, tt.wantErr)
			}
		})
	}
}

// entry is one file in a test archive.
type entry struct {
	name, link string
	typ        byte
	body       string
}

// fakePostgres stands in for the binaries: both report version 16.1.
var fakePostgres = []entry{
	{name: "bin/", typ: tar.TypeDir},
	{name: "bin/postgres", typ: tar.TypeReg, body: "#!/bin/sh\necho 'postgres (PostgreSQL) 16.1'\n"},
	{name: "bin/initdb", typ: tar.TypeReg, body: "#!/bin/sh\necho 'initdb (PostgreSQL) 16.1'\n"},
	{name: "lib/libpq.so.5.16", typ: tar.TypeReg, body: "not really a library"},
	{name: "lib/libpq.so.5", typ: tar.TypeSymlink, link: "libpq.so.5.16"},
}

// jar builds a jar holding a tar.xz of entries, as the Zonky artifacts do.
func jar(t *testing.T, entries []entry) []byte {
	t.Helper()
	var txz bytes.Buffer
	xw, err := xz.NewWriter(&txz)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(xw)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: 0o755, Size: int64(len(e.body))}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, xw} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	w, err := zw.Create("postgres-test.txz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(txz.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestDownloadFromRepository runs the download path against a local Maven
// repository serving hand-made archives.
func TestDownloadFromRepository(t *testing.T) {
	name, err := artifact()
	if err != nil {
		t.Skip(err)
	}
	good := jar(t, fakePostgres)
	goodSum := sha1.Sum(good)
	escaping := jar(t, append(fakePostgres[:len(fakePostgres):len(fakePostgres)], entry{name: "../escaped", typ: tar.TypeReg, body: "x"}))
	escapingSum := sha1.Sum(escaping)
	linkOut := jar(t, append(fakePostgres[:len(fakePostgres):len(fakePostgres)], entry{name: "lib/evil", typ: tar.TypeSymlink, link: "../../../etc/passwd"}))
	linkOutSum := sha1.Sum(linkOut)

	tests := []struct {
		name    string
		jar     []byte
		sha1    string
		wantErr string
	}{
		{name: "good", jar: good, sha1: hex.EncodeToString(goodSum[:])},
		{name: "corrupted checksum", jar: good, sha1: strings.Repeat("0", 40), wantErr: "SHA-1 checksum mismatch"},
		{name: "corrupted jar", jar: append(bytes.Clone(good[:len(good)-1]), good[len(good)-1]^1), sha1: hex.EncodeToString(goodSum[:]), wantErr: "SHA-1 checksum mismatch"},
		{name: "entry outside archive", jar: escaping, sha1: hex.EncodeToString(escapingSum[:]), wantErr: "points outside the archive"},
		{name: "link outside archive", jar: linkOut, sha1: hex.EncodeToString(linkOutSum[:]), wantErr: "points outside the archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := "/" + mavenGroup + "/" + name + "/"
			mux := http.NewServeMux()
			mux.HandleFunc(base+"maven-metadata.xml", func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `<metadata><versioning><versions><version>15.9.0</version><version>16.1.0</version></versions></versioning></metadata>`)
			})
			jarPath := base + "16.1.0/" + name + "-16.1.0.jar"
			mux.HandleFunc(jarPath, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(tt.jar) })
			mux.HandleFunc(jarPath+".sha1", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, tt.sha1) })
			repo := httptest.NewServer(mux)
			defer repo.Close()

			cache := t.TempDir()
			f := Finder{CacheDir: cache, Repository: repo.URL, Client: repo.Client()}
			in, err := f.Download(context.Background(), "16")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Download = %v, want an error containing %q", err, tt.wantErr)
				}
				left, _ := filepath.Glob(filepath.Join(cache, "postgres", "*"))
				if len(left) != 0 {
					t.Errorf("cache holds %q after a failed download, want nothing", left)
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(cache), "escaped")); err == nil {
					t.Error("an archive entry was written outside the cache")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantDir := filepath.Join(cache, "postgres", "16.1-"+platformSuffix(), "bin")
			if in.Version != "16.1" || in.Major != 16 || in.BinDir != wantDir {
				t.Errorf("Download = %+v, want 16.1 in %s", in, wantDir)
			}
			if link, err := os.Readlink(filepath.Join(cache, "postgres", "16.1-"+platformSuffix(), "lib", "libpq.so.5")); err != nil || link != "libpq.so.5.16" {
				t.Errorf("symlink = %q, %v; want libpq.so.5.16", link, err)
			}
			// A second call finds the cached copy without the repository.
			repo.Close()
			again, err := Finder{CacheDir: cache, Repository: repo.URL}.Download(context.Background(), "16.1")
			if err != nil || again.BinDir != in.BinDir {
				t.Errorf("cached Download = %+v, %v; want %s", again, err, in.BinDir)
			}
		})
	}
}

func TestUnwritableCache(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(base, "read-only")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		skip      bool
	}{
		{name: "parent is a file", dir: filepath.Join(file, "cache")},
		{name: "read-only directory", dir: filepath.Join(readOnly, "cache"), skip: os.Geteuid() == 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("root can write anywhere")
			}
			_, err := Finder{CacheDir: tt.dir, Repository: "http://127.0.0.1:1"}.Download(context.Background(), "16")
			if err == nil || !strings.Contains(err.Error(), tt.dir) || !strings.Contains(err.Error(), "cache") {
				t.Errorf("error = %v, want one naming %s", err, tt.dir)
			}
		})
	}
}

// TestCacheWithoutSpace puts the cache on a 64 KB tmpfs: a download that cannot fit
// fails with one line saying how much is needed and free and what to do, whether the
// size is known before the download, found while writing the jar, or found while
// extracting it, and leaves nothing behind.
func TestCacheWithoutSpace(t *testing.T) {
	name, err := artifact()
	if err != nil {
		t.Skip(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	cache := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", cache).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", cache).Run() })

	noise := make([]byte, 256<<10)
	_, _ = rand.Read(noise)
	big := jar(t, append(fakePostgres[:len(fakePostgres):len(fakePostgres)], entry{name: "lib/big", typ: tar.TypeReg, body: string(noise)}))
	bomb := jar(t, append(fakePostgres[:len(fakePostgres):len(fakePostgres)], entry{name: "lib/zeros", typ: tar.TypeReg, body: strings.Repeat("\x00", 1<<20)}))
	tests := []struct {
		name      string
		jar       []byte
		announced bool // the server sends Content-Length
	}{
		{"size known before downloading", big, true},
		{"disk fills while downloading", big, false},
		{"disk fills while extracting", bomb, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := sha1.Sum(tt.jar)
			base := "/" + mavenGroup + "/" + name + "/"
			mux := http.NewServeMux()
			mux.HandleFunc(base+"maven-metadata.xml", func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `<metadata><versioning><versions><version>16.1.0</version></versions></versioning></metadata>`)
			})
			jarPath := base + "16.1.0/" + name + "-16.1.0.jar"
			mux.HandleFunc(jarPath, func(w http.ResponseWriter, r *http.Request) {
				if tt.announced {
					w.Header().Set("Content-Length", strconv.Itoa(len(tt.jar)))
				} else {
					w.(http.Flusher).Flush() // chunked: no size up front
				}
				_, _ = w.Write(tt.jar)
			})
			mux.HandleFunc(jarPath+".sha1", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, hex.EncodeToString(sum[:])) })
			repo := httptest.NewServer(mux)
			defer repo.Close()

			_, err := Finder{CacheDir: cache, Repository: repo.URL, Client: repo.Client()}.Download(context.Background(), "16")
			if err == nil {
				t.Fatal("Download into a full cache succeeded")
			}
			msg := err.Error()
			for _, want := range []string{"not enough space in " + filepath.Join(cache, "postgres"), "MB are free", CacheDirEnv} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			left, _ := filepath.Glob(filepath.Join(cache, "postgres", "*"))
			if len(left) != 0 {
				t.Errorf("cache holds %q after the failed download, want nothing", left)
			}
		})
	}
}

// TestFirstRunWhileForking downloads a release while other goroutines start
// processes in a loop, as parallel tests and servers do, and runs the
// extracted postgres at once. A child forked while an extracted file is
// still open for writing holds that descriptor until it calls exec, and
// running the file meanwhile fails with "text file busy".
func TestFirstRunWhileForking(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (go test without -short)")
	}
	name, err := artifact()
	if err != nil {
		t.Skip(err)
	}
	// postgres comes last and is large, so its file is open for writing for
	// a while and is run right after it is closed.
	padding := "# " + strings.Repeat("x", 1<<20) + "\n"
	entries := []entry{
		{name: "bin/", typ: tar.TypeDir},
		{name: "bin/initdb", typ: tar.TypeReg, body: "#!/bin/sh\necho 'initdb (PostgreSQL) 16.1'\n"},
		{name: "bin/postgres", typ: tar.TypeReg, body: "#!/bin/sh\necho 'postgres (PostgreSQL) 16.1'\n" + padding},
	}
	body := jar(t, entries)
	sum := sha1.Sum(body)
	base := "/" + mavenGroup + "/" + name + "/"
	mux := http.NewServeMux()
	mux.HandleFunc(base+"maven-metadata.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<metadata><versioning><versions><version>16.1.0</version></versions></versioning></metadata>`)
	})
	jarPath := base + "16.1.0/" + name + "-16.1.0.jar"
	mux.HandleFunc(jarPath, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
	mux.HandleFunc(jarPath+".sha1", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, hex.EncodeToString(sum[:])) })
	repo := httptest.NewServer(mux)
	defer repo.Close()

	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Skip(err)
	}
	stop := make(chan struct{})
	var forks sync.WaitGroup
	for range 4 {
		forks.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command(trueBin).Run() // only the forking matters
			}
		})
	}
	defer func() {
		close(stop)
		forks.Wait()
	}()

	const downloads = 20
	var busy int
	for i := range downloads {
		cache := t.TempDir()
		in, err := Finder{CacheDir: cache, Repository: repo.URL, Client: repo.Client()}.Download(context.Background(), "16")
		if err != nil {
			if errors.Is(err, syscall.ETXTBSY) {
				busy++
				continue
			}
			t.Fatalf("download %d: %v", i+1, err)
		}
		if in.Version != "16.1" {
			t.Fatalf("download %d: version %q, want 16.1", i+1, in.Version)
		}
	}
	if busy > 0 {
		t.Errorf("%d of %d first runs of a downloaded postgres failed with %v", busy, downloads, syscall.ETXTBSY)
	}
}
