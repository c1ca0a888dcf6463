package study

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"go.yaml.in/yaml/v3"
)

// The fuzz targets' saved corpora are in testdata/fuzz/<target name>.

// fuzzFile names the fuzzed study and prices files. It is in testdata, so that
// a fuzzed prices: prices.yaml finds the prices file there.
const fuzzFile = "testdata/fuzzed.yaml"

// FuzzParseAll checks that ParseAll never panics, that every error it returns
// starts with "file:" on each of its lines, that it says the same on the same
// input, and that a study it accepts has a plan whose keys are unique.
func FuzzParseAll(f *testing.F) {
	for _, name := range []string{"minimal.yaml", "full.yaml", "anchors.yaml", "plan.yaml", "priced.yaml",
		"malformed.yaml", "three-errors.yaml", "dsn-password.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"---\n...\n",
		"[1, 2]",
		"targets: [{name: a, dsn: host=a}]\nworkloads: [{kind: tpcb}]\n---\nname: second\n",
		"targets: [{name: a, dsn: host=a}, {name: b, local: {version: 16}}]\nworkloads: [{kind: tpcb, clients: [1, 0x1, 2]}, {kind: tpcc, name: c}]\nmatrix: {repeat: 2, order: sequential}\n",
		"targets:\n  - &t {name: a, dsn: host=a}\n  - *t\nworkloads: [{kind: tpcb}]\n",
		"x: &a {<<: *a}\n",
		"targets: !!int |\n  not\n  a list\n",
		"matrix: {clients: \"99999999999999999999\\n\"}\n",
		"targets: [{name: a, dsn: \"postgres://u:pw@h/db\"}]\nworkloads: [{kind: tpcb}]\n",
		"targets: [{name: a, dsn: \"host=a\", price: {ref: small}}]\nworkloads: [{kind: tpcb}]\nprices: prices.yaml\n",
		"\xff\xfe",
		"a: *nowhere\n",
		"targets: [{name: a, dsn: host=a}]\nworkloads: [{kind: tpcb, load: {--scale: 1, table_size: [], x: {}}}]\nmatrix: {duration: 0, warmup: -1s, pause: 5}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if readsOutside(data) {
			t.Skip("names a prices file outside testdata")
		}
		s, errs := ParseAll(fuzzFile, data)
		for _, e := range errs {
			if e.File != fuzzFile {
				t.Errorf("error %q names file %q", e, e.File)
			}
			if e.Pos.Line < 0 || e.Pos.Col < 0 {
				t.Errorf("error %q has position %+v", e, e.Pos)
			}
		}
		if len(errs) > 0 {
			for line := range strings.Lines(errs.Error()) {
				if !strings.HasPrefix(line, fuzzFile+":") {
					t.Errorf("error line %q does not start with %q", line, fuzzFile+":")
				}
			}
			for i := 1; i < len(errs); i++ {
				if errs[i].Pos.compare(errs[i-1].Pos) < 0 {
					t.Errorf("errors not sorted: %q before %q", errs[i-1], errs[i])
				}
			}
		}
		if _, again := ParseAll(fuzzFile, data); again.Error() != errs.Error() {
			t.Fatalf("ParseAll said\n%s\nthen\n%s", errs, again)
		}
		parsed, err := Parse(fuzzFile, data)
		if (err == nil) != (len(errs) == 0) {
			t.Fatalf("Parse error %v, ParseAll errors %v", err, errs)
		}
		if err != nil {
			if parsed != nil {
				t.Fatalf("Parse returned a study with error %v", err)
			}
			return
		}
		if s == nil || parsed == nil {
			t.Fatal("no study and no error")
		}
		checkPlan(t, parsed)
	})
}

// checkPlan checks that the plan of a valid study has every run once.
func checkPlan(t *testing.T, s *Study) {
	t.Helper()
	want := 0
	for _, w := range s.Workloads {
		want += len(s.Targets) * len(s.Clients(w)) * s.Matrix.Repeat
	}
	if want > 100000 {
		return // valid, but slow to plan on every input
	}
	plan := s.Plan()
	if len(plan) != want {
		t.Fatalf("plan has %d runs, want %d", len(plan), want)
	}
	keys := make(map[string]int, len(plan))
	for i, c := range plan {
		if c.Seq != i+1 {
			t.Fatalf("run %d has Seq %d", i+1, c.Seq)
		}
		if j, dup := keys[c.Key]; dup {
			t.Fatalf("runs %d and %d have the same key %q", j, c.Seq, c.Key)
		}
		keys[c.Key] = c.Seq
		if len(c.Fingerprint) != 16 {
			t.Fatalf("run %q has fingerprint %q", c.Key, c.Fingerprint)
		}
	}
}

// readsOutside reports whether data may make Parse read a prices file other
// than one in testdata: a fuzzer that finds /dev/zero or a FIFO would hang.
// It looks at every key prices of every mapping, as a merge key (<<) can bring
// one in from anywhere.
func readsOutside(data []byte) bool {
	var doc yaml.Node
	if err := yaml.NewDecoder(strings.NewReader(string(data))).Decode(&doc); err != nil {
		return false // Parse reads no prices file either
	}
	outside := false
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if deref(n.Content[i]).Value != "prices" {
					continue
				}
				if v := deref(n.Content[i+1]); v.Kind == yaml.ScalarNode && !filepath.IsLocal(v.Value) {
					outside = true
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	return outside
}

// FuzzParsePrices checks that ParsePrices never panics, that its errors start
// with "file:" on each line, and that every price it accepts is valid.
func FuzzParsePrices(f *testing.F) {
	for _, name := range []string{"prices.yaml", "prices-broken.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"prices:",
		"prices: {}",
		"prices: {a: {monthly: 1}, b: {per_hour: 0.5, compute_per_hour: 1}}",
		"prices: {a: {monthly: -1, currency: 3}, -bad-: {monthly: 1}}",
		"prices: {a: {monthly: .inf}, b: {monthly: .nan}, c: {monthly: 0x10}}",
		"prices: {a: &p {monthly: 1}, b: {<<: *p, source: merged}}",
		"prices: {a: {ref: b}}\nextra: 1\n",
		"prices: [1]\n---\nprices: {}\n",
	} {
		f.Add([]byte(s))
	}
	const file = "testdata/fuzzed-prices.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		prices, err := ParsePrices(file, data)
		if err != nil {
			if prices != nil {
				t.Fatalf("prices %v with error %v", prices, err)
			}
			for line := range strings.Lines(err.Error()) {
				if !strings.HasPrefix(line, file+":") {
					t.Errorf("error line %q does not start with %q", line, file+":")
				}
			}
			return
		}
		for name, p := range prices.Given {
			if !priceNamePattern.MatchString(name) {
				t.Errorf("accepted price name %q", name)
			}
			if p.Currency == "" {
				t.Errorf("price %q has no currency", name)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("accepted price %q: %v", name, err)
			}
		}
	})
}

// The password planted in fuzzed DSNs.
const plantedPassword = "Pl4ntedPassw0rd"

// FuzzParseDSN checks that a password planted in a target's dsn never shows in
// the errors, and that a dsn the study accepts holds no password: libpq's
// rules, as pgconn.ParseConfig follows them, find none in it.
func FuzzParseDSN(f *testing.F) {
	for _, seed := range []struct {
		form                   uint8
		prefix, middle, suffix string
	}{
		{0, "host=db user=bench", "", "dbname=bench"},
		{0, "host='db", "", "' dbname=x"},
		{0, "", "", ""},
		{1, "host=db", "a b\\' ", "sslmode=require"},
		{1, "host=db\\", "", ""},
		{2, "bench", "", "db.example:5432/bench"},
		{2, "be/nch", "", "db.example:99999999/bench"},
		{2, "u:1?x", "", "h"},
		{3, "bench@db.example/bench", "sslmode=require&", ""},
		{3, "db.example", "", "&x=1"},
		{3, "h/db", "a=b#", ""},
		{4, "host=db password", "", ""},
		{4, "postgres://u:", "", "@h/db"},
	} {
		f.Add(seed.form, seed.prefix, seed.middle, seed.suffix)
	}
	isolateLibpq(f)
	f.Fuzz(func(t *testing.T, form uint8, prefix, middle, suffix string) {
		dsn := plantDSN(form, prefix, middle, suffix)
		if strings.Count(dsn, plantedPassword) > 1 || !utf8.ValidString(dsn) || strings.ContainsRune(dsn, 0) {
			t.Skip("password planted twice, or text a YAML string cannot carry")
		}
		data, err := yaml.Marshal(map[string]any{
			"targets":   []map[string]string{{"name": "t", "dsn": dsn}},
			"workloads": []map[string]string{{"kind": "tpcb"}},
		})
		if err != nil {
			t.Skip(err)
		}
		s, errs := ParseAll(fuzzFile, data)
		if strings.Contains(errs.Error(), plantedPassword) {
			t.Fatalf("dsn %q: errors show its password:\n%s", dsn, errs)
		}
		if len(errs) > 0 || s == nil || len(s.Targets) != 1 {
			return
		}
		if got := s.Targets[0].DSN; got != dsn {
			t.Fatalf("dsn %q read as %q", dsn, got)
		}
		if pw := libpqPassword(t, dsn); pw != "" {
			t.Fatalf("dsn %q accepted, but libpq reads the password %q in it", dsn, pw)
		}
	})
}

// plantDSN builds a dsn with plantedPassword in one of the places a DSN holds a
// password; form 4 plants none.
func plantDSN(form uint8, prefix, middle, suffix string) string {
	switch form % 5 {
	case 0:
		return prefix + " password=" + plantedPassword + " " + suffix
	case 1:
		return prefix + " password='" + middle + plantedPassword + "' " + suffix
	case 2:
		return "postgres://" + prefix + ":" + middle + plantedPassword + "@" + suffix
	case 3:
		return "postgresql://" + prefix + "?" + middle + "password=" + plantedPassword + suffix
	}
	return prefix + middle + suffix
}

// isolateLibpq keeps pgconn.ParseConfig from finding a password, or files to
// read, anywhere but in the DSN it is given.
func isolateLibpq(f *testing.F) {
	for _, env := range []string{"PGPASSWORD", "PGSERVICE", "PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY", "PGSSLMODE"} {
		f.Setenv(env, "")
	}
	none := filepath.Join(f.TempDir(), "none")
	f.Setenv("PGPASSFILE", none)
	f.Setenv("PGSERVICEFILE", none)
}

// libpqPassword is the password pgconn reads in dsn, or "" when it reads none
// or cannot parse dsn. Call isolateLibpq first.
func libpqPassword(t *testing.T, dsn string) string {
	t.Helper()
	if mayReadDevice(dsn) {
		return ""
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return ""
	}
	return cfg.Password
}

// mayReadDevice reports whether dsn might name a file under /dev, /proc or
// /sys, which pgconn.ParseConfig would read (sslrootcert=/dev/zero hangs).
func mayReadDevice(dsn string) bool {
	s := strings.NewReplacer(`\`, "", `'`, "").Replace(dsn)
	if u, err := url.PathUnescape(s); err == nil {
		s = u
	} else if strings.Contains(s, "%") {
		return true
	}
	s = strings.ToLower(s)
	return strings.Contains(s, "dev/") || strings.Contains(s, "proc/") || strings.Contains(s, "sys/")
}
