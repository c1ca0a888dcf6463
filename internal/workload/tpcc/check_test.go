package tpcc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// checkFailures runs Check and returns the Detail of each failed condition by number,
// and the numbers of the skipped ones. hammerdb is whether Check should take the
// data for HammerDB's.
func checkFailures(t *testing.T, run func() (tpcc.CheckReport, error), hammerdb bool) (failed map[int]string, skipped []int) {
	t.Helper()
	report, err := run()
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if got := report.HammerDB != nil; got != hammerdb || (report.Note() != "") != hammerdb {
		t.Errorf("taken for HammerDB's data: %v, note %q; want %v", got, report.Note(), hammerdb)
	}
	results := report.Results
	if len(results) != 12 {
		t.Fatalf("Check returned %d results, want 12", len(results))
	}
	failed = map[int]string{}
	for i, r := range results {
		if r.Number != i+1 || r.Name == "" {
			t.Errorf("result %d is condition %d %q", i, r.Number, r.Name)
		}
		switch {
		case r.Skipped:
			skipped = append(skipped, r.Number)
			if !r.Passed || r.Detail == "" {
				t.Errorf("skipped condition %d: Passed %v, Detail %q", r.Number, r.Passed, r.Detail)
			}
		case !r.Passed:
			failed[r.Number] = r.Detail
		case r.Detail != "":
			t.Errorf("passed condition %d has Detail %q", r.Number, r.Detail)
		}
	}
	return failed, skipped
}

// TestCheck checks a freshly loaded warehouse, then the same data each time after
// breaking one relationship (and mending it again), then after transactions ran.
// The data is never taken for HammerDB's, so conditions 10 and 12 are checked as the
// clause states them.
func TestCheck(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	conn := dial(t, loadedDatabase(t))
	ctx := context.Background()
	check := func() (tpcc.CheckReport, error) { return tpcc.Check(ctx, conn) }

	t.Run("initial", func(t *testing.T) {
		failed, skipped := checkFailures(t, check, false)
		if len(failed) > 0 || len(skipped) > 0 {
			t.Errorf("failed %v, skipped %v; want all to pass", failed, skipped)
		}
	})

	cases := []struct {
		name          string
		break_, mend_ string
		want          map[int]string // failed condition -> a part of its Detail
	}{
		{"d_ytd",
			"update district set d_ytd = d_ytd + 1 where d_w_id = 1 and d_id = 7",
			"update district set d_ytd = d_ytd - 1 where d_w_id = 1 and d_id = 7",
			map[int]string{1: "warehouse 1: w_ytd = 300000.00, sum(d_ytd) = 300001.00", 9: "warehouse 1 district 7: d_ytd = 30001.00, sum(h_amount) = 30000.00"}},
		{"d_next_o_id",
			"update district set d_next_o_id = d_next_o_id + 1 where d_w_id = 1 and d_id = 3",
			"update district set d_next_o_id = d_next_o_id - 1 where d_w_id = 1 and d_id = 3",
			map[int]string{2: "warehouse 1 district 3: d_next_o_id - 1 = 3001, max(o_id) = 3000, max(no_o_id) = 3000"}},
		{"o_ol_cnt",
			"update orders set o_ol_cnt = o_ol_cnt + 1 where o_w_id = 1 and o_d_id = 5 and o_id = 100",
			"update orders set o_ol_cnt = o_ol_cnt - 1 where o_w_id = 1 and o_d_id = 5 and o_id = 100",
			map[int]string{4: "warehouse 1 district 5: sum(o_ol_cnt) = ", 6: "warehouse 1 district 5 order 100: o_ol_cnt = "}},
		{"o_carrier_id",
			"update orders set o_carrier_id = 4 where o_w_id = 1 and o_d_id = 2 and o_id = 2500",
			"update orders set o_carrier_id = null where o_w_id = 1 and o_d_id = 2 and o_id = 2500",
			map[int]string{5: "warehouse 1 district 2 order 2500: o_carrier_id = 4 but there is a new_order row", 7: "warehouse 1 district 2 order 2500 line 1: o_carrier_id = 4, ol_delivery_d = null; "}},
		{"new_order-for-delivered-order",
			"insert into new_order (no_w_id, no_d_id, no_o_id) values (1, 9, 1000)",
			"delete from new_order where no_w_id = 1 and no_d_id = 9 and no_o_id = 1000",
			map[int]string{
				3:  "warehouse 1 district 9: max(no_o_id) - min(no_o_id) + 1 = 2001, new_order rows = 901",
				5:  "warehouse 1 district 9 order 1000: o_carrier_id = ",
				11: "warehouse 1 district 9: count(orders) - count(new_order) = 3000 - 901 = 2099",
			}},
		{"h_amount",
			"update history set h_amount = h_amount + 2 where h_c_w_id = 1 and h_c_d_id = 6 and h_c_id = 42",
			"update history set h_amount = h_amount - 2 where h_c_w_id = 1 and h_c_d_id = 6 and h_c_id = 42",
			map[int]string{
				8:  "warehouse 1: w_ytd = 300000.00, sum(h_amount) = 300002.00",
				9:  "warehouse 1 district 6: d_ytd = 30000.00, sum(h_amount) = 30002.00",
				10: "warehouse 1 district 6 customer 42: c_balance = -10.00, sum(delivered ol_amount) - sum(h_amount) = 0.00 - 12.00",
			}},
		{"c_balance",
			"update customer set c_balance = c_balance + 5 where c_w_id = 1 and c_d_id = 8 and c_id in (99, 100, 101, 102)",
			"update customer set c_balance = c_balance - 5 where c_w_id = 1 and c_d_id = 8 and c_id in (99, 100, 101, 102)",
			map[int]string{
				10: "warehouse 1 district 8 customer 99: c_balance = -5.00, sum(delivered ol_amount) - sum(h_amount) = 0.00 - 10.00; warehouse 1 district 8 customer 100: ",
				12: "warehouse 1 district 8 customer 99: c_balance + c_ytd_payment = -5.00 + 10.00, sum(delivered ol_amount) = 0.00; " +
					"warehouse 1 district 8 customer 100: c_balance + c_ytd_payment = -5.00 + 10.00, sum(delivered ol_amount) = 0.00; " +
					"warehouse 1 district 8 customer 101: c_balance + c_ytd_payment = -5.00 + 10.00, sum(delivered ol_amount) = 0.00 (4 customers in all)",
			}},
		// One line of an order delivered at load with an amount, as HammerDB loads
		// them all, does not make the data HammerDB's: condition 10 still counts it.
		{"initial-ol_amount",
			"update order_line set ol_amount = 5 where ol_w_id = 1 and ol_d_id = 4 and ol_o_id = 7 and ol_number = 1",
			"update order_line set ol_amount = 0 where ol_w_id = 1 and ol_d_id = 4 and ol_o_id = 7 and ol_number = 1",
			map[int]string{
				10: "c_balance = -10.00, sum(delivered ol_amount) - sum(h_amount) = 5.00 - 10.00",
				12: "c_balance + c_ytd_payment = -10.00 + 10.00, sum(delivered ol_amount) = 5.00",
			}},
	}
	for _, tc := range cases {
		t.Run("broken/"+tc.name, func(t *testing.T) {
			if _, err := conn.Exec(ctx, tc.break_).ReadAll(); err != nil {
				t.Fatal(err)
			}
			failed, skipped := checkFailures(t, check, false)
			if _, err := conn.Exec(ctx, tc.mend_).ReadAll(); err != nil {
				t.Fatal(err)
			}
			for n, part := range tc.want {
				if !strings.Contains(failed[n], part) {
					t.Errorf("condition %d: Detail %q, want it to contain %q", n, failed[n], part)
				}
			}
			for n, detail := range failed {
				if _, ok := tc.want[n]; !ok {
					t.Errorf("condition %d failed too: %s", n, detail)
				}
			}
			if len(skipped) > 0 {
				t.Errorf("skipped %v, want none", skipped)
			}
		})
	}

	t.Run("after-transactions", func(t *testing.T) {
		if rollbacks := runMix(t, conn, 200); rollbacks == 0 {
			t.Error("no new order rolled back")
		}
		failed, skipped := checkFailures(t, check, false)
		if len(failed) > 0 {
			t.Errorf("failed %v", failed)
		}
		// Deliveries make count(orders) - count(new_order) grow past 2,100.
		if len(skipped) != 1 || skipped[0] != 11 {
			t.Errorf("skipped %v, want [11]", skipped)
		}
	})
}

func TestCheckNotLoaded(t *testing.T) {
	t.Parallel()
	conn := dial(t, pgtest.NewDatabase(t))
	if _, err := tpcc.Check(context.Background(), conn); !errors.Is(err, tpcc.ErrNotLoaded) {
		t.Errorf("Check on an empty database: %v, want ErrNotLoaded", err)
	}
	// The failed check rolled back its transaction.
	if got := queryOne(t, conn, "select 1"); got != "1" {
		t.Errorf("select 1 after the check = %q", got)
	}
}
