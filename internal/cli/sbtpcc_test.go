package cli_test

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestSysbenchTPCC loads a table set, runs the mix with --json and checks the
// data: the summary carries sysbench's figures beside pgbakeoff's, and the text
// summary shows them.
func TestSysbenchTPCC(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	results := filepath.Join(t.TempDir(), "r.db")
	if code, out, errOut := run(t, "init", "sysbench-tpcc", "--tables", "1", "--scale", "1", "--jobs", "2", "--dsn", dsn); code != 0 {
		t.Fatalf("init sysbench-tpcc: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := run(t, "run", "sysbench-tpcc", "--clients", "3", "--duration", "2s", "--trx-level", "RC", "--json", "--results", results, "--dsn", dsn)
	if code != 0 {
		t.Fatalf("run sysbench-tpcc: exit %d\n%s%s", code, out, errOut)
	}
	var sum struct {
		Transactions int64   `json:"transactions"`
		TPS          float64 `json:"tps"`
		Failed       int64   `json:"failed"`
		DurationS    float64 `json:"duration_s"`
		Script       string  `json:"script"`
		Tables       int     `json:"tables"`
		Scale        int     `json:"scale"`
		TrxLevel     string  `json:"trx_level"`
		Dist         string  `json:"dist"`
		Read         int64   `json:"read_queries"`
		Write        int64   `json:"write_queries"`
		Other        int64   `json:"other_queries"`
		Queries      int64   `json:"queries"`
		QPS          float64 `json:"qps"`
		Ignored      int64   `json:"ignored_errors"`
		IgnoredPerS  float64 `json:"ignored_errors_per_s"`
		Server       struct {
			Commits float64 `json:"commits"`
		} `json:"server"`
		CommitsTotal float64 `json:"commits_total"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if sum.Transactions == 0 || sum.Failed != 0 || sum.Tables != 1 || sum.Scale != 1 || sum.TrxLevel != "RC" || sum.Dist != "nurand" ||
		sum.Script != "new_order@10,payment@10,orderstatus@1,delivery@1,stocklevel@1" {
		t.Fatalf("summary %+v", sum)
	}
	// Each transaction sends BEGIN and COMMIT at least, and a new order or a
	// payment reads and writes.
	if sum.Other < 2*sum.Transactions || sum.Read < sum.Transactions || sum.Write == 0 || sum.Queries != sum.Read+sum.Write+sum.Other {
		t.Errorf("queries read %d, write %d, other %d, total %d for %d transactions", sum.Read, sum.Write, sum.Other, sum.Queries, sum.Transactions)
	}
	if math.Abs(sum.QPS-float64(sum.Queries)/sum.DurationS) > 1 || math.Abs(sum.IgnoredPerS-float64(sum.Ignored)/sum.DurationS) > 0.01 {
		t.Errorf("qps %.1f, ignored %.2f/s; want %d queries and %d errors / %.1f s", sum.QPS, sum.IgnoredPerS, sum.Queries, sum.Ignored, sum.DurationS)
	}
	if math.Abs(sum.Server.Commits-sum.CommitsTotal) > 0.01*sum.CommitsTotal+10 {
		t.Errorf("server commits %.0f, client %.0f", sum.Server.Commits, sum.CommitsTotal)
	}
	code, out, errOut = run(t, "run", "sysbench-tpcc", "--clients", "2", "--duration", "1s", "--enable-purge", "--dist", "pareto", "--results", results, "--dsn", dsn)
	if code != 0 || !strings.Contains(out, "sysbench: transactions ") || !strings.Contains(out, "ignored errors") || !strings.Contains(out, "pareto:0.2 keys") {
		t.Errorf("run with purge: exit %d\n%s%s", code, out, errOut)
	}
	// Purge has nothing to remove yet: no customer has two orders delivered
	// since the load. The checks pass.
	code, out, errOut = run(t, "check", "sysbench-tpcc", "--dsn", dsn)
	if code != 0 || strings.Count(out, " passed ") != 10 || !strings.Contains(out, "schema public: 1 table set of 1 warehouse, 10 checks") {
		t.Errorf("check sysbench-tpcc: exit %d\n%s%s", code, out, errOut)
	}
}

// TestSysbenchTPCCBadInput: each mistake is one line and a non-zero exit.
func TestSysbenchTPCCBadInput(t *testing.T) {
	empty := pgtest.NewDatabase(t)
	results := filepath.Join(t.TempDir(), "r.db")
	cases := []badInput{
		{"zero tables", []string{"init", "sysbench-tpcc", "--tables", "0", "--dsn", empty}, "--tables must be between 1 and 9999, got 0", 2},
		{"scale past smallint", []string{"init", "sysbench-tpcc", "--scale", "40000", "--dsn", empty}, "--scale must be between 1 and 32767 (warehouse ids are smallint), got 40000", 2},
		{"bad schema", []string{"init", "sysbench-tpcc", "--schema", "Bench", "--dsn", empty}, `--schema "Bench" is not a plain lower-case identifier`, 2},
		{"no tables", []string{"run", "sysbench-tpcc", "--dsn", empty, "--results", results}, "init sysbench-tpcc", 1},
		{"trx level", []string{"run", "sysbench-tpcc", "--trx-level", "RU", "--dsn", empty, "--results", results}, `--trx-level "RU" is unknown: use RR, RC or SER`, 2},
		{"dist", []string{"run", "sysbench-tpcc", "--dist", "lognormal", "--dsn", empty, "--results", results}, `--dist: unknown distribution "lognormal"`, 2},
		{"check without tables", []string{"check", "sysbench-tpcc", "--dsn", empty}, "has no sysbench-tpcc tables", 1},
	}
	checkBadInput(t, cases)
}
