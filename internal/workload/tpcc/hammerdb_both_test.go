package tpcc_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// payer is which Payments paid a customer since the load: a set of these bits.
type payer uint8

const (
	byHammerDB payer = 1 << iota
	byPgbakeoff
)

// customerKey is a customer of warehouse 1: district and number.
type customerKey struct{ d, c int }

// payInTurn works on the HammerDB fixture as someone comparing the two tools on one
// database does: after HammerDB's transactions (the fixture's), pgbakeoff's Payment
// and Delivery, then HammerDB's Payment again. Some customers are paid by both, in
// either order. It returns who paid each customer paid since the load.
func payInTurn(t *testing.T, conn *pgconn.PgConn) map[customerKey]payer {
	t.Helper()
	paid := map[customerKey]payer{}
	// Only HammerDB's Payment has run so far: a second history row is its payment.
	for _, row := range query(t, conn, `select h_c_d_id || ' ' || h_c_id from history where h_c_w_id = 1
		group by h_c_d_id, h_c_id having count(*) > 1`) {
		var k customerKey
		fmt.Sscan(row, &k.d, &k.c)
		paid[k] |= byHammerDB
	}
	hammerdbPaid := slices.SortedFunc(maps.Keys(paid), compareCustomers)
	rng := rand.New(rand.NewPCG(5, 6))
	between := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	pgbakeoffPay := func(cd, c int, last string) {
		amount := strconv.Itoa(between(1, 5000)) + "." + strconv.Itoa(between(10, 99))
		got := mustCall(t, conn, "tpcc_payment", "1", strconv.Itoa(between(1, 10)), "1", strconv.Itoa(cd), strconv.Itoa(c), last, amount)
		id, err := strconv.Atoi(got)
		if err != nil {
			t.Fatalf("tpcc_payment returned %q", got)
		}
		paid[customerKey{cd, id}] |= byPgbakeoff
	}
	for i := range 300 {
		if i%2 == 0 {
			pgbakeoffPay(between(1, 10), 0, tpcc.LastName(rng.IntN(1000)))
		} else {
			pgbakeoffPay(between(1, 10), between(1, tpcc.CustomersPerDistrict), "")
		}
		if i%60 == 0 {
			mustCall(t, conn, "tpcc_delivery", "1", strconv.Itoa(between(1, 10)))
		}
	}
	for _, k := range hammerdbPaid[:20] { // pgbakeoff's Payment after HammerDB's
		pgbakeoffPay(k.d, k.c, "")
	}
	var pgbakeoffPaid []customerKey
	for _, k := range slices.SortedFunc(maps.Keys(paid), compareCustomers) {
		if paid[k]&byPgbakeoff != 0 {
			pgbakeoffPaid = append(pgbakeoffPaid, k)
		}
	}
	rng.Shuffle(len(pgbakeoffPaid), func(i, j int) { pgbakeoffPaid[i], pgbakeoffPaid[j] = pgbakeoffPaid[j], pgbakeoffPaid[i] })
	hammerdbPay := func(k customerKey) {
		hammerdbPayment(t, conn, between(1, 10), k.d, k.c, between(1, 5000), between(1, 100) <= 60)
		paid[k] |= byHammerDB
	}
	for _, k := range pgbakeoffPaid[:30] { // HammerDB's Payment after pgbakeoff's, or again
		hammerdbPay(k)
	}
	for range 30 {
		hammerdbPay(customerKey{between(1, 10), between(1, tpcc.CustomersPerDistrict)})
	}
	return paid
}

func compareCustomers(a, b customerKey) int {
	if a.d != b.d {
		return a.d - b.d
	}
	return a.c - b.c
}

// TestCheckBothTools checks a database loaded by HammerDB on which HammerDB's and
// pgbakeoff's transactions ran in turn: it passes, saying how many customers each
// rule was applied to, and still fails on columns that neither tool's Payment could
// have left.
func TestCheckBothTools(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	conn := dial(t, hammerdbDatabase(t))
	ctx := context.Background()
	check := func() (tpcc.CheckReport, error) { return tpcc.Check(ctx, conn) }
	paid := payInTurn(t, conn)
	// The customers paid by each set of Payments, in order.
	var sets [4][]customerKey
	for _, k := range slices.SortedFunc(maps.Keys(paid), compareCustomers) {
		sets[paid[k]] = append(sets[paid[k]], k)
	}
	onlyHammerDB, onlyPgbakeoff, both := sets[byHammerDB], sets[byPgbakeoff], sets[byHammerDB|byPgbakeoff]
	if len(onlyHammerDB) == 0 || len(onlyPgbakeoff) == 0 || len(both) < 20 {
		t.Fatalf("paid by HammerDB's Payment only %d, pgbakeoff's only %d, both %d; want some of each",
			len(onlyHammerDB), len(onlyPgbakeoff), len(both))
	}

	t.Run("as-run", func(t *testing.T) {
		failed, skipped := checkFailures(t, check, true)
		if len(failed) > 0 || !slices.Equal(skipped, []int{11}) {
			t.Errorf("failed %v, skipped %v; want only 11 skipped", failed, skipped)
		}
		report, err := check()
		if err != nil {
			t.Fatal(err)
		}
		neither := tpcc.CustomersPerDistrict*tpcc.DistrictsPerWarehouse - len(paid)
		for _, part := range []string{
			"conditions 10 and 12 checked in the form its data satisfies",
			fmt.Sprintf("\n  %d customers paid by neither Payment since the load: C_YTD_PAYMENT = 10.00, and C_BALANCE as conditions 10 and 12 say", neither),
			fmt.Sprintf("\n  %d paid by pgbakeoff's Payment only: C_YTD_PAYMENT = 10.00 + their payments, and C_BALANCE as conditions 10 and 12 say", len(onlyPgbakeoff)),
			fmt.Sprintf("\n  %d paid by HammerDB's Payment only and %d by both: C_YTD_PAYMENT = 10.00 + pgbakeoff's payments, "+
				"C_BALANCE not compared", len(onlyHammerDB), len(both)),
		} {
			if !strings.Contains(report.Note(), part) {
				t.Errorf("note %q lacks %q", report.Note(), part)
			}
		}
	})

	var neither customerKey
	for c := 1; neither.c == 0; c++ {
		if _, ok := paid[customerKey{1, c}]; !ok {
			neither = customerKey{1, c}
		}
	}
	where := func(k customerKey) string { return fmt.Sprintf("c_w_id = 1 and c_d_id = %d and c_id = %d", k.d, k.c) }
	who := func(k customerKey) string { return fmt.Sprintf("warehouse 1 district %d customer %d: ", k.d, k.c) }
	// pgbakeoff's payments to a customer paid by pgbakeoff's Payment only.
	pgbakeoffSum := queryOne(t, conn, `select sum(h_amount) from history
		 where h_c_w_id = 1 and h_c_d_id = `+strconv.Itoa(onlyPgbakeoff[0].d)+` and h_c_id = `+strconv.Itoa(onlyPgbakeoff[0].c)+` and h_amount <> 10`)
	// One history row of pgbakeoff's Payment to that customer: district and date.
	var payD int
	var payDate string
	fmt.Sscan(queryOne(t, conn, `select h_d_id || ' ' || extract(epoch from h_date) from history
		 where h_c_w_id = 1 and h_c_d_id = `+strconv.Itoa(onlyPgbakeoff[0].d)+` and h_c_id = `+strconv.Itoa(onlyPgbakeoff[0].c)+
		` and h_amount <> 10 order by h_date limit 1`), &payD, &payDate)
	pgbakeoffRow := fmt.Sprintf("h_c_w_id = 1 and h_c_d_id = %d and h_c_id = %d and h_d_id = %d and extract(epoch from h_date) = %s",
		onlyPgbakeoff[0].d, onlyPgbakeoff[0].c, payD, payDate)
	cases := []struct {
		name          string
		break_, mend_ string
		want          map[int]string // failed condition -> a part of its Detail
	}{
		// C_YTD_PAYMENT and C_BALANCE as pgbakeoff's Payment would leave them, but
		// without its history row (nor its W_YTD and D_YTD).
		{"neither/paid-without-history", "update customer set c_ytd_payment = c_ytd_payment + 10, c_balance = c_balance - 10 where " + where(neither),
			"update customer set c_ytd_payment = c_ytd_payment - 10, c_balance = c_balance + 10 where " + where(neither),
			map[int]string{10: who(neither) + "c_balance = ", 12: who(neither) + "c_ytd_payment = 20.00, not the load's 10.00: no payment by pgbakeoff's Payment"}},
		{"neither/c_balance", "update customer set c_balance = c_balance + 5 where " + where(neither),
			"update customer set c_balance = c_balance - 5 where " + where(neither),
			map[int]string{10: who(neither) + "c_balance = ", 12: who(neither) + "c_balance + c_ytd_payment = "}},
		// pgbakeoff's Payment keeps the balance as the clause says, so it is compared.
		{"pgbakeoff/c_balance", "update customer set c_balance = c_balance + 5 where " + where(onlyPgbakeoff[0]),
			"update customer set c_balance = c_balance - 5 where " + where(onlyPgbakeoff[0]),
			map[int]string{10: who(onlyPgbakeoff[0]) + "c_balance = ", 12: who(onlyPgbakeoff[0]) + "c_balance + c_ytd_payment = "}},
		{"pgbakeoff/c_ytd_payment", "update customer set c_ytd_payment = c_ytd_payment + 1, c_balance = c_balance - 1 where " + where(onlyPgbakeoff[0]),
			"update customer set c_ytd_payment = c_ytd_payment - 1, c_balance = c_balance + 1 where " + where(onlyPgbakeoff[0]),
			map[int]string{10: who(onlyPgbakeoff[0]) + "c_balance = ",
				12: who(onlyPgbakeoff[0]) + "c_ytd_payment = " + addCents(t, pgbakeoffSum, 1100) + ", not the load's 10.00 + " + pgbakeoffSum + " paid by pgbakeoff's Payment"}},
		// A pgbakeoff payment taken for HammerDB's stops the balance being compared,
		// but C_YTD_PAYMENT then holds a payment that pgbakeoff's Payment did not make.
		{"pgbakeoff/h_data-as-hammerdb", "update history set h_data = replace(h_data, '    ', ' ') where " + pgbakeoffRow,
			"update history h set h_data = w_name || '    ' || d_name from warehouse, district where w_id = 1 and d_w_id = 1 and d_id = h_d_id and " + pgbakeoffRow,
			map[int]string{12: who(onlyPgbakeoff[0]) + "c_ytd_payment = " + addCents(t, pgbakeoffSum, 1000) + ", not the load's 10.00"}},
		// HammerDB's Payment may set any balance, but never changes C_YTD_PAYMENT.
		{"hammerdb/c_balance", "update customer set c_balance = c_balance + 5 where " + where(onlyHammerDB[0]),
			"update customer set c_balance = c_balance - 5 where " + where(onlyHammerDB[0]), map[int]string{}},
		{"hammerdb/c_ytd_payment", "update customer set c_ytd_payment = 20 where " + where(onlyHammerDB[0]),
			"update customer set c_ytd_payment = 10 where " + where(onlyHammerDB[0]),
			map[int]string{12: who(onlyHammerDB[0]) + "c_ytd_payment = 20.00, not the load's 10.00: no payment by pgbakeoff's Payment"}},
		{"both/c_balance", "update customer set c_balance = c_balance + 5 where " + where(both[0]),
			"update customer set c_balance = c_balance - 5 where " + where(both[0]), map[int]string{}},
		{"both/c_ytd_payment", "update customer set c_ytd_payment = c_ytd_payment + 1 where " + where(both[0]),
			"update customer set c_ytd_payment = c_ytd_payment - 1 where " + where(both[0]),
			map[int]string{12: who(both[0]) + "c_ytd_payment = "}},
	}
	for _, tc := range cases {
		t.Run("broken/"+tc.name, func(t *testing.T) {
			if _, err := conn.Exec(ctx, tc.break_).ReadAll(); err != nil {
				t.Fatal(err)
			}
			failed, _ := checkFailures(t, check, true)
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
		})
	}
}

// addCents returns the amount plus cents, both as PostgreSQL prints numeric(12,2).
func addCents(t *testing.T, amount string, cents int) string {
	t.Helper()
	whole, frac, ok := strings.Cut(amount, ".")
	w, err1 := strconv.Atoi(whole)
	f, err2 := strconv.Atoi(frac)
	if !ok || err1 != nil || err2 != nil || len(frac) != 2 {
		t.Fatalf("amount %q is not numeric(12,2)", amount)
	}
	total := w*100 + f + cents
	return fmt.Sprintf("%d.%02d", total/100, total%100)
}
