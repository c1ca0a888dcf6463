package cli_test

import (
	"encoding/json"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestSysbench loads sbtest tables and runs oltp_read_write with a non-default
// distribution: the query counts are the statements sent, split as sysbench splits
// them, and the server saw the transactions the clients counted.
func TestSysbench(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	results := filepath.Join(t.TempDir(), "r.db")
	if code, out, errOut := run(t, "init", "sysbench", "--tables", "2", "--table-size", "5000", "--dsn", dsn); code != 0 {
		t.Fatalf("init sysbench: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := run(t, "run", "sysbench", "--script", "oltp_read_write", "--dist", "pareto", "--clients", "3",
		"--duration", "2s", "--json", "--results", results, "--dsn", dsn)
	if code != 0 {
		t.Fatalf("run sysbench: exit %d\n%s%s", code, out, errOut)
	}
	var sum struct {
		Transactions int64   `json:"transactions"`
		Failed       int64   `json:"failed"`
		DurationS    float64 `json:"duration_s"`
		Tables       int     `json:"tables"`
		TableSize    int64   `json:"table_size"`
		Dist         string  `json:"dist"`
		Read         int64   `json:"read_queries"`
		Write        int64   `json:"write_queries"`
		Other        int64   `json:"other_queries"`
		Queries      int64   `json:"queries"`
		QPS          float64 `json:"qps"`
		Ignored      int64   `json:"ignored_errors"`
		CommitsTotal float64 `json:"commits_total"`
		Server       struct {
			Commits float64 `json:"commits"`
		} `json:"server"`
		ClientCPU struct {
			ThreadPerClient bool `json:"thread_per_client"`
			Threads         int  `json:"threads"`
		} `json:"client_cpu"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	n := sum.Transactions
	if n == 0 || sum.Failed != 0 || sum.Tables != 2 || sum.TableSize != 5000 || sum.Dist != "pareto:0.2" {
		t.Fatalf("summary %+v", sum)
	}
	// An event sends 14 reads, 4 writes, BEGIN and COMMIT. A retried one sends more,
	// and a write that found its row deleted by another client counts as other.
	// (The exact counts are checked in the sysbench package, and against sysbench.)
	tries := n + sum.Ignored
	if sum.Read < 14*n || sum.Read > 14*tries || sum.Other < 2*n || sum.Write > 4*tries || sum.Write+sum.Other < 6*n ||
		sum.Queries != sum.Read+sum.Write+sum.Other {
		t.Errorf("queries read %d, write %d, other %d, total %d for %d events and %d retries; want 14, 4 and 2 an event",
			sum.Read, sum.Write, sum.Other, sum.Queries, n, sum.Ignored)
	}
	if math.Abs(sum.QPS-float64(sum.Queries)/sum.DurationS) > 1 {
		t.Errorf("qps %.1f, want %d queries / %.1f s", sum.QPS, sum.Queries, sum.DurationS)
	}
	if math.Abs(sum.Server.Commits-sum.CommitsTotal) > 0.01*sum.CommitsTotal+10 {
		t.Errorf("server commits %.0f, client %.0f", sum.Server.Commits, sum.CommitsTotal)
	}
	// The transactions write, so the clients shared a thread a core (see
	// engine.Spec.Threaded).
	if sum.ClientCPU.ThreadPerClient || sum.ClientCPU.Threads != runtime.GOMAXPROCS(0) {
		t.Errorf("client threads %+v, want %d shared threads", sum.ClientCPU, runtime.GOMAXPROCS(0))
	}
	// The text summary shows the split too. Point selects only read: like sysbench,
	// the run gives each client a thread.
	code, out, errOut = run(t, "run", "sysbench", "--script", "oltp_point_select", "--clients", "2", "--duration", "1s",
		"--results", results, "--dsn", dsn)
	if code != 0 || !strings.Contains(out, "queries: ") || !strings.Contains(out, "special:12:1:75 keys") || !strings.Contains(out, "a thread per client") {
		t.Errorf("run oltp_point_select: exit %d\n%s%s", code, out, errOut)
	}
	// select_random_* work on sbtest1, as in sysbench, whatever the database holds.
	code, out, errOut = run(t, "run", "sysbench", "--script", "select_random_points", "--clients", "2", "--duration", "1s",
		"--results", results, "--dsn", dsn)
	if code != 0 || !strings.Contains(out, "1 table of 5000 rows") {
		t.Errorf("run select_random_points on 2 tables: exit %d\n%s%s", code, out, errOut)
	}

	// Tables sysbench prepared carry no size but their ids, which its oltp_insert
	// takes past the size prepared: the size given is taken if the ids reach it.
	pgtest.Query(t, dsn, "comment on table sbtest1 is null; insert into sbtest1 (k, c, pad) select 1, '', '' from generate_series(1, 10)")
	code, out, errOut = run(t, "run", "sysbench", "--script", "oltp_point_select", "--table-size", "5000", "--duration", "1s",
		"--results", results, "--dsn", dsn)
	if code != 0 || !strings.Contains(out, "2 tables of 5000 rows") {
		t.Errorf("run with --table-size 5000 on tables without a size: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "run", "sysbench", "--script", "oltp_point_select", "--duration", "1s", "--results", results, "--dsn", dsn)
	if code != 0 || !strings.Contains(out, "2 tables of 5010 rows") {
		t.Errorf("run without --table-size on tables without a size: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(t, "run", "sysbench", "--table-size", "6000", "--duration", "1s", "--results", results, "--dsn", dsn)
	if code != 1 || !strings.Contains(errOut, "--table-size 6000 does not match the data: sbtest1's largest id is 5010") {
		t.Errorf("run with --table-size 6000 over ids up to 5010: exit %d, %s", code, errOut)
	}
}

// TestSysbenchBadInput: each mistake is one line and a non-zero exit.
func TestSysbenchBadInput(t *testing.T) {
	empty := pgtest.NewDatabase(t)
	loaded := pgtest.NewDatabase(t)
	if code, _, errOut := run(t, "init", "sysbench", "--tables", "2", "--table-size", "1000", "--dsn", loaded); code != 0 {
		t.Fatal(errOut)
	}
	results := filepath.Join(t.TempDir(), "r.db")
	cases := []badInput{
		{"zero tables", []string{"init", "sysbench", "--tables", "0", "--dsn", empty}, "--tables must be between 1 and", 2},
		{"zero size", []string{"init", "sysbench", "--table-size", "0", "--dsn", empty}, "--table-size must be between 1 and", 2},
		{"bad load dist", []string{"init", "sysbench", "--dist", "normal", "--dsn", empty}, `--dist: unknown distribution "normal"`, 2},
		{"no tables", []string{"run", "sysbench", "--dsn", empty, "--results", results}, "init sysbench", 1},
		{"unknown script", []string{"run", "sysbench", "--script", "oltp_foo", "--dsn", loaded, "--results", results}, `unknown sysbench script "oltp_foo"`, 2},
		{"unknown dist", []string{"run", "sysbench", "--dist", "lognormal", "--dsn", loaded, "--results", results}, `--dist: unknown distribution "lognormal"`, 2},
		{"dist out of range", []string{"run", "sysbench", "--dist", "pareto:1.5", "--dsn", loaded, "--results", results}, "h must be in (0, 1)", 2},
		{"size mismatch", []string{"run", "sysbench", "--table-size", "5000", "--dsn", loaded, "--results", results}, "--table-size 5000 does not match the data: the tables were loaded with 1000 rows", 1},
		{"tables mismatch", []string{"run", "sysbench", "--tables", "3", "--dsn", loaded, "--results", results}, "--tables 3 does not match the data: the database has sbtest1..sbtest2", 1},
		// Before connecting, the limit for the smallest tables; once connected, the data's.
		{"empty range", []string{"run", "sysbench", "--range-size", "0", "--dsn", loaded, "--results", results}, "--range-size must be between 1 and 2147483647", 2},
		{"range past the ids", []string{"run", "sysbench", "--range-size", "2147483000", "--dsn", loaded, "--results", results}, "--range-size must be between 1 and 2147482648", 2},
		{"too many threads", []string{"run", "sysbench", "--thread-per-client", "--clients", "1025", "--dsn", loaded, "--results", results}, "--thread-per-client allows at most 1024 clients, got 1025; add --thread-per-client=false", 2},
		{"tpcb dist", []string{"run", "tpcb", "--dist", "exponential:0", "--dsn", loaded, "--results", results}, "--dist", 2},
	}
	checkBadInput(t, cases)
}

// TestDistOption: --dist reaches TPC-B's account and TPC-C's items. sysbench's
// special sends 75% of the keys to the middle 1% of the range, which the history
// table and the new order lines show.
func TestDistOption(t *testing.T) {
	pgtest.Long(t)
	results := filepath.Join(t.TempDir(), "r.db")
	tpcb := clitest.Loaded(t, "tpcb", "--scale", "1")
	if code, out, errOut := run(t, "run", "tpcb", "--dist", "special", "--transactions", "300", "--dsn", tpcb, "--results", results); code != 0 {
		t.Fatalf("run tpcb --dist special: exit %d\n%s%s", code, out, errOut)
	}
	if got := percent(t, tpcb, "select round(100.0 * count(*) filter (where aid between 49500 and 50500) / count(*)) from pgbench_history"); got < 50 || got > 90 {
		t.Errorf("%d%% of TPC-B's accounts in the middle 1%% with --dist special, want about 75%%", got)
	}

	tpcc := clitest.Loaded(t, "tpcc", "--warehouses", "1")
	if code, out, errOut := run(t, "run", "tpcc", "--dist", "special", "--clients", "2", "--duration", "2s", "--dsn", tpcc, "--results", results); code != 0 {
		t.Fatalf("run tpcc --dist special: exit %d\n%s%s", code, out, errOut)
	}
	// Orders past the loaded 3,000 per district are the run's.
	if got := percent(t, tpcc, "select round(100.0 * count(*) filter (where ol_i_id between 49500 and 50500) / count(*)) from order_line where ol_o_id > 3000"); got < 50 || got > 90 {
		t.Errorf("%d%% of TPC-C's items in the middle 1%% with --dist special, want about 75%%", got)
	}
}

func percent(t *testing.T, dsn, sql string) int {
	t.Helper()
	v, err := strconv.Atoi(pgtest.Query(t, dsn, sql))
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}
