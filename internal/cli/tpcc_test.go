package cli_test

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/cli/clitest"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestTPCC loads one warehouse, checks it, runs both modes and checks again; the
// database's NOPM must agree with the clients' committed New-Orders.
func TestTPCC(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcc", "--warehouses", "1")
	results := filepath.Join(t.TempDir(), "r.db")
	check := func(when string) {
		t.Helper()
		code, out, errOut := run(t, "check", "tpcc", "--dsn", dsn)
		if code != 0 || strings.Count(out, "passed")+strings.Count(out, "n/a") != 12 {
			t.Fatalf("check tpcc %s: exit %d\n%s%s", when, code, out, errOut)
		}
	}
	check("after loading")
	for _, mode := range []string{"server", "client-sql"} {
		code, out, errOut := run(t, "run", "tpcc", "--mode", mode, "--clients", "3", "--warmup", "1s", "--duration", "3s",
			"--json", "--results", results, "--dsn", dsn)
		if code != 0 {
			t.Fatalf("run tpcc --mode %s: exit %d\n%s%s", mode, code, out, errOut)
		}
		var sum struct {
			Transactions int64   `json:"transactions"`
			Failed       int64   `json:"failed"`
			NOPM         float64 `json:"nopm"`
			TPM          float64 `json:"tpm"`
			TPMCluster   float64 `json:"tpm_cluster"`
			ClientNOPM   float64 `json:"client_new_orders_per_min"`
			Mode         string  `json:"mode"`
			CommitsTotal float64 `json:"commits_total"`
			Server       struct {
				Commits float64 `json:"commits"`
			} `json:"server"`
			Scripts []struct {
				Name         string `json:"name"`
				Transactions int64  `json:"transactions"`
				RolledBack   int64  `json:"rolled_back"`
			} `json:"scripts"`
			Limits []struct {
				Passed bool `json:"passed"`
			} `json:"response_time_limits"`
		}
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatalf("--json: %v\n%s", err, out)
		}
		if sum.Mode != mode || sum.Transactions == 0 || sum.Failed != 0 || len(sum.Scripts) != 5 || len(sum.Limits) != 5 {
			t.Fatalf("%s: %+v", mode, sum)
		}
		for _, s := range sum.Scripts {
			if s.Transactions == 0 {
				t.Errorf("%s: no %s transactions", mode, s.Name)
			}
		}
		// Both count New-Orders over the same window; they differ by the transactions
		// in flight at its edges.
		if sum.NOPM <= 0 || math.Abs(sum.NOPM-sum.ClientNOPM) > 0.03*sum.ClientNOPM+60 {
			t.Errorf("%s: NOPM %.0f from the database, %.0f from the clients", mode, sum.NOPM, sum.ClientNOPM)
		}
		if sum.TPM < sum.NOPM || sum.TPMCluster < sum.TPM {
			t.Errorf("%s: TPM %.0f, cluster TPM %.0f, NOPM %.0f: want NOPM <= TPM <= cluster TPM", mode, sum.TPM, sum.TPMCluster, sum.NOPM)
		}
		if math.Abs(sum.Server.Commits-sum.CommitsTotal) > 0.01*sum.CommitsTotal+10 {
			t.Errorf("%s: server commits %.0f, client %.0f", mode, sum.Server.Commits, sum.CommitsTotal)
		}
		check("after --mode " + mode)
	}
}

// TestTPCCBadInput: each mistake is one line and a non-zero exit.
func TestTPCCBadInput(t *testing.T) {
	pgtest.Long(t)
	empty := pgtest.NewDatabase(t)
	loaded := clitest.Loaded(t, "tpcc", "--warehouses", "1")
	noFuncs := clitest.Loaded(t, "tpcc", "--warehouses", "1")
	pgtest.Query(t, noFuncs, "drop function tpcc_payment, tpcc_delivery")
	results := filepath.Join(t.TempDir(), "r.db")
	cases := []badInput{
		{"zero warehouses", []string{"init", "tpcc", "--warehouses", "0", "--dsn", empty}, "--warehouses must be at least 1", 2},
		{"negative warehouses", []string{"init", "tpcc", "--warehouses", "-3", "--dsn", empty}, "--warehouses must be at least 1", 2},
		{"no tables", []string{"run", "tpcc", "--dsn", empty, "--results", results}, "init tpcc", 1},
		{"check without tables", []string{"check", "tpcc", "--dsn", empty}, "init tpcc", 1},
		{"warehouse mismatch", []string{"run", "tpcc", "--warehouses", "5", "--dsn", loaded, "--results", results}, "--warehouses 5 does not match the data: the database was loaded with 1 warehouses", 1},
		{"functions missing", []string{"run", "tpcc", "--dsn", noFuncs, "--results", results}, "--procedures-only", 1},
		{"unknown mode", []string{"run", "tpcc", "--mode", "stored", "--dsn", loaded, "--results", results}, `--mode "stored" is unknown`, 2},
		{"unknown mix", []string{"run", "tpcc", "--mix", "tpch", "--dsn", loaded, "--results", results}, `--mix "tpch" is unknown`, 2},
	}
	checkBadInput(t, cases)
	// Too many clients is allowed but warned about.
	code, _, errOut := run(t, "run", "tpcc", "--clients", "11", "--duration", "1s", "--dsn", loaded, "--results", results)
	if code != 0 || !strings.Contains(errOut, "beyond the specification's 10 terminals per warehouse") {
		t.Errorf("11 clients on 1 warehouse: exit %d, stderr %q; want a warning", code, errOut)
	}
	// The functions can be added to a database that lacks them.
	if code, _, errOut := run(t, "init", "tpcc", "--procedures-only", "--dsn", noFuncs); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := run(t, "run", "tpcc", "--duration", "1s", "--dsn", noFuncs, "--results", results); code != 0 {
		t.Errorf("after --procedures-only: exit %d, %s", code, errOut)
	}
}

// TestTPCCCountersAtTheirLimit: a skewed --dist sends most orders to a few items and
// payments to a few customers, whose smallint counters (HammerDB's types) reach
// their limit within minutes; the transactions go on, in both modes.
func TestTPCCCountersAtTheirLimit(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcc", "--warehouses", "1")
	pgtest.Query(t, dsn, "update stock set s_order_cnt = 32767, s_remote_cnt = 32767; update customer set c_payment_cnt = 32767")
	for _, mode := range []string{"server", "client-sql"} {
		code, out, errOut := run(t, "run", "tpcc", "--mode", mode, "--clients", "2", "--duration", "2s", "--dist", "pareto",
			"--json", "--results", filepath.Join(t.TempDir(), "r.db"), "--dsn", dsn)
		var sum struct {
			Transactions int64 `json:"transactions"`
			Failed       int64 `json:"failed"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Transactions == 0 || sum.Failed != 0 {
			t.Errorf("--mode %s with counters at their limit: exit %d, %+v\n%s", mode, code, sum, errOut)
		}
	}
}

// TestCheckTPCCHammerDB: data with the initial amounts HammerDB loads passes, and
// the output says why; a changed balance still fails.
func TestCheckTPCCHammerDB(t *testing.T) {
	pgtest.Long(t)
	dsn := clitest.Loaded(t, "tpcc", "--warehouses", "1")
	const note = "conditions 10 and 12 checked in the form its data satisfies"
	if code, out, errOut := run(t, "check", "tpcc", "--dsn", dsn); code != 0 || strings.Contains(out, note) {
		t.Errorf("check tpcc on pgbakeoff's data: exit %d\n%s%s", code, out, errOut)
	}
	// HammerDB gives the orders delivered at load amounts and the others 0.00.
	pgtest.Query(t, dsn, "update order_line set ol_amount = case when ol_o_id <= 2100 then ol_number else 0 end where ol_o_id <= 3000")
	code, out, errOut := run(t, "check", "tpcc", "--dsn", dsn)
	if code != 0 || !strings.Contains(out, "data loaded by HammerDB (all ") || !strings.Contains(out, note) || strings.Count(out, "passed") != 12 {
		t.Errorf("check tpcc on HammerDB's data: exit %d\n%s%s", code, out, errOut)
	}
	pgtest.Query(t, dsn, "update customer set c_balance = c_balance + 1 where c_w_id = 1 and c_d_id = 1 and c_id = 1")
	code, out, errOut = run(t, "check", "tpcc", "--dsn", dsn)
	if code == 0 || !strings.Contains(out, note) || !strings.Contains(out, "warehouse 1 district 1 customer 1: c_balance = -9.00") {
		t.Errorf("check tpcc on HammerDB's data with a changed balance: exit %d\n%s%s", code, out, errOut)
	}
}
