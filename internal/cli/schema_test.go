package cli_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
	"github.com/pgbakeoff/pgbakeoff/internal/schema"
)

// TestSchemaCommand: `schema` prints the bundle and `schema NAME` one schema,
// each exactly as docs/schema keeps it; --list names every schema; a name that
// is no schema's is a usage error of one line that names them.
func TestSchemaCommand(t *testing.T) {
	for _, name := range append(schema.Names(), "") {
		t.Run("name="+name, func(t *testing.T) {
			args, file := []string{"schema"}, schema.BundleName+".json"
			if name != "" {
				args, file = append(args, name), name+".json"
			}
			want, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema", file))
			if err != nil {
				t.Fatal(err)
			}
			code, out, errOut := run(t, args...)
			if code != cli.ExitOK || out != string(want) {
				t.Errorf("%s: exit %d, and its output is not docs/schema/%s (go test ./internal/schema -run TestDocs -update rewrites it)\n%s%s",
					strings.Join(args, " "), code, file, out, errOut)
			}
		})
	}

	code, out, errOut := run(t, "schema", "--list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != cli.ExitOK || len(lines) != len(schema.Names()) {
		t.Fatalf("schema --list: exit %d\n%s%s", code, out, errOut)
	}
	for i, name := range schema.Names() {
		if f := strings.Fields(lines[i]); f[0] != name || !strings.Contains(lines[i], "pgbakeoff ") {
			t.Errorf("schema --list line %d: %q, want %s and the command that prints it", i+1, lines[i], name)
		}
	}

	for _, args := range [][]string{{"schema", "rn"}, {"schema", "run", "show"}, {"schema", "--list", "run"}} {
		code, out, errOut := run(t, args...)
		if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d, want %d and one line\n%s%s", strings.Join(args, " "), code, cli.ExitUsage, out, errOut)
		}
	}
	if _, _, errOut := run(t, "schema", "rn"); !strings.Contains(errOut, `no schema "rn" (did you mean run?): choose one of `+strings.Join(schema.Names(), ", ")) {
		t.Errorf("schema rn: %s", errOut)
	}
}

// TestOutputSchema: the commands that print JSON name their schema, so that
// clitest.Run validates what they print; the others, and these without JSON
// asked for, name none.
func TestOutputSchema(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "tpcb", "--json", "--dsn", "x"}, "run"},
		{[]string{"run", "pgbench", "-f", "x.sql", "-c", "2", "--json"}, "run"},
		{[]string{"run", "tpcc"}, ""},
		{[]string{"--results", "r.db", "show", "1", "--json"}, "show"},
		{[]string{"show", "1"}, ""},
		{[]string{"runs", "--json"}, "runs"},
		{[]string{"runs"}, ""},
		{[]string{"find-max", "sysbench", "--slo", "p99<1ms", "--json"}, "find-max"},
		{[]string{"export", "--run", "1", "--format", "json"}, "export"},
		{[]string{"export", "--run", "1"}, ""},
		{[]string{"compare", "--run", "1"}, ""},
		{[]string{"compare", "--run", "1,2", "--json", "--fail-if-slower", "5%"}, "compare"},
		{[]string{"study", "status", "s.yaml", "--json"}, "study-status"},
		{[]string{"study", "status", "s.yaml"}, ""},
		{[]string{"prices", "aws", "--instance", "db.m6g.large", "--region", "us-east-1", "--json"}, "prices"},
		{[]string{"prices", "gcp", "--json", "--tier", "db-custom-2-8192"}, "prices"},
		{[]string{"prices", "azure", "--sku", "Standard_B1ms"}, ""},
		{[]string{"run", "tpcb", "--no-such-flag", "--json"}, ""},
	} {
		if got := cli.OutputSchema(c.args); got != c.want {
			t.Errorf("OutputSchema(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestPricesJSON: `prices --json` prints the price the text shows, by component,
// from the recorded price lists (clitest.Run validates it against its schema).
func TestPricesJSON(t *testing.T) {
	_, _, cache := priceLists(t)
	code, out, errOut := run(t, "prices", "aws", "--instance", "db.m6g.4xlarge", "--storage", "gp3:1000GiB:15000iops",
		"--multi-az", "--region", "us-east-1", cache, "--json")
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var q pricelist.Quote
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	names := []string{}
	for _, c := range q.Components {
		names = append(names, c.Name)
	}
	// The constructed list's prices, as TestPricesCommand reads them in the text.
	if q.Query["instance"] != "db.m6g.4xlarge" || q.Query["cloud"] != "aws" || q.Currency != "USD" || math.Abs(q.Monthly-2148.72) > 0.01 ||
		math.Abs(q.PerHour-2.9435) > 0.0001 || strings.Join(names, " ") != "compute storage iops ha" || q.Effective != "2026-11-01" || q.Fetched == "" {
		t.Errorf("prices --json: %+v\n%s", q, out)
	}
}

// TestRunsJSON: `runs --json` lists a store written by an older pgbakeoff, and
// `show --json` prints each of its runs, in the current schema_version
// (clitest.Run validates both against their schemas).
func TestRunsJSON(t *testing.T) {
	results := filepath.Join("..", "engine", "testdata", "results-schema4.db")
	code, out, errOut := run(t, "runs", "--json", "--results", results)
	if code != cli.ExitOK {
		t.Fatalf("runs --json: exit %d\n%s%s", code, out, errOut)
	}
	var list engine.RunList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if list.SchemaVersion != engine.SchemaVersion || len(list.Runs) != 3 {
		t.Fatalf("runs --json: %+v", list)
	}
	for _, r := range list.Runs {
		if r.TPS == nil || *r.TPS <= 0 || r.P99Ms == nil || r.Status != "completed" || strings.Contains(r.Target, "password") {
			t.Errorf("run %d: %+v", r.RunID, r)
		}
		code, out, errOut := run(t, "show", strconv.FormatInt(r.RunID, 10), "--json", "--results", results)
		if code != cli.ExitOK || !strings.Contains(out, fmt.Sprintf(`"schema_version": %d,`, engine.SchemaVersion)) {
			t.Errorf("show %d --json: exit %d\n%s%s", r.RunID, code, out, errOut)
		}
	}
}
