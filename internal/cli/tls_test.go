package cli_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestTLSVerifyFull runs TPC-B over TLS with sslmode=verify-full, a private CA and a
// client certificate as the only way in, then checks that a wrong host name and an
// unknown CA are refused with a clear line.
func TestTLSVerifyFull(t *testing.T) {
	pgtest.Long(t)
	srv := pgtest.Server(t)
	if srv.DataDir == "" {
		t.Skip("PGBAKEOFF_TEST_DSN points at a server this test cannot configure")
	}
	dsn := clitest.Loaded(t, "tpcb", "--scale", "1")
	dbname := pgtest.Query(t, dsn, "select current_database()")

	certs := t.TempDir()
	ca, _ := newCert(t, nil, "pgbakeoff test CA", nil)
	serverCert, serverKey := newCert(t, ca, "localhost", []string{"localhost"})
	clientCert, clientKey := newCert(t, ca, "certuser", nil)
	otherCA, _ := newCert(t, nil, "some other CA", nil)
	writePEM(t, filepath.Join(certs, "root.crt"), "CERTIFICATE", ca.Raw)
	writePEM(t, filepath.Join(certs, "other.crt"), "CERTIFICATE", otherCA.Raw)
	writePEM(t, filepath.Join(certs, "client.crt"), "CERTIFICATE", clientCert.Raw)
	writePEM(t, filepath.Join(certs, "client.key"), "PRIVATE KEY", clientKey)

	// The server's files live in its data directory, owned by the user it runs as.
	for name, body := range map[string]struct {
		kind string
		der  []byte
	}{"test-server.crt": {"CERTIFICATE", serverCert.Raw}, "test-server.key": {"PRIVATE KEY", serverKey}, "test-ca.crt": {"CERTIFICATE", ca.Raw}} {
		path := filepath.Join(srv.DataDir, name)
		writePEM(t, path, body.kind, body.der)
		chownTo(t, path, srv.User)
		t.Cleanup(func() { os.Remove(path) })
	}
	pgtest.Query(t, dsn, "drop role if exists certuser; create role certuser login superuser")
	pgtest.Query(t, dsn, "alter system set ssl = on")
	pgtest.Query(t, dsn, "alter system set ssl_cert_file = 'test-server.crt'")
	pgtest.Query(t, dsn, "alter system set ssl_key_file = 'test-server.key'")
	pgtest.Query(t, dsn, "alter system set ssl_ca_file = 'test-ca.crt'")
	hba := filepath.Join(srv.DataDir, "pg_hba.conf")
	orig, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	rules := "hostssl all certuser 127.0.0.1/32 cert\nhost all certuser 0.0.0.0/0 reject\nlocal all certuser reject\n"
	if err := os.WriteFile(hba, append([]byte(rules), orig...), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.WriteFile(hba, orig, 0o600)
		for _, s := range []string{"ssl", "ssl_cert_file", "ssl_key_file", "ssl_ca_file"} {
			pgtest.Query(t, dsn, "alter system reset "+s)
		}
		pgtest.Query(t, dsn, "select pg_reload_conf()")
	})
	pgtest.Query(t, dsn, "select pg_reload_conf()")
	if got := pgtest.Query(t, dsn, "show ssl"); got != "on" {
		t.Fatalf("ssl = %q after reload, want on (see %s)", got, srv.LogFile)
	}

	tlsDSN := func(host, rootcert string) string {
		return strings.Join([]string{"host=" + host, "port=" + strconv.Itoa(srv.Port), "user=certuser", "dbname=" + dbname,
			"sslmode=verify-full", "sslrootcert=" + filepath.Join(certs, rootcert),
			"sslcert=" + filepath.Join(certs, "client.crt"), "sslkey=" + filepath.Join(certs, "client.key")}, " ")
	}
	results := filepath.Join(t.TempDir(), "r.db")
	code, out, errOut := run(t, "run", "tpcb", "--script", "tpcb-like", "--clients", "2", "--duration", "1s", "--json",
		"--results", results, "--dsn", tlsDSN("localhost", "root.crt"))
	if code != 0 {
		t.Fatalf("run over TLS: exit %d\n%s%s", code, out, errOut)
	}
	var got struct {
		Transactions int64 `json:"transactions"`
		Failed       int64 `json:"failed"`
		Server       struct {
			TLS string `json:"tls"`
		} `json:"server"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// The TLS version and cipher in use are recorded with the run.
	if !strings.HasPrefix(got.Server.TLS, "TLSv1.") || !strings.Contains(got.Server.TLS, " ") {
		t.Errorf("server.tls = %q, want the TLS version and cipher", got.Server.TLS)
	}
	if got.Transactions == 0 || got.Failed != 0 {
		t.Fatalf("over TLS: %d transactions, %d failed; want some and none", got.Transactions, got.Failed)
	}
	for _, c := range []struct{ name, dsn, want string }{
		{"host name not in the certificate", tlsDSN("127.0.0.1", "root.crt"), "certificate"},
		{"unknown certificate authority", tlsDSN("localhost", "other.crt"), "certificate"},
		// The cases below show the run above could only have used TLS with the client
		// certificate: the server admits certuser no other way.
		{"no TLS", "host=localhost port=" + strconv.Itoa(srv.Port) + " user=certuser dbname=" + dbname + " sslmode=disable", "pg_hba.conf"},
		{"no client certificate", "host=localhost port=" + strconv.Itoa(srv.Port) + " user=certuser dbname=" + dbname +
			" sslmode=verify-full sslrootcert=" + filepath.Join(certs, "root.crt"), "certificate"},
	} {
		code, out, errOut := run(t, "run", "tpcb", "--clients", "1", "--duration", "1s", "--results", results, "--dsn", c.dsn)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code == 0 || len(lines) != 1 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "goroutine") {
			t.Errorf("%s: exit %d, stderr %q (stdout %q); want one line mentioning %q", c.name, code, errOut, out, c.want)
		}
	}
}

// newCert makes a certificate signed by the CA parent (a self-signed CA when parent is
// nil) and returns it with its PKCS#8 private key.
func newCert(t *testing.T, parent *x509.Certificate, cn string, dns []string) (*x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil
	} else {
		signer, signerKey = parent, caKeys[parent]
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		caKeys[cert] = key
	}
	return cert, pk
}

// caKeys holds the keys of the CAs newCert made, for signing with them later.
var caKeys = map[*x509.Certificate]*ecdsa.PrivateKey{}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func chownTo(t *testing.T, path, name string) {
	t.Helper()
	if name == "" {
		return
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
}
