package tpcc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// hammerdbDatabase returns the DSN of a database of one warehouse in the shape that
// HammerDB 4.12's TPROC-C builder and transactions leave on PostgreSQL: pgbakeoff's
// own load, rewritten as HammerDB would have loaded it (reshapeAsHammerDB), then
// worked on as HammerDB's Payment, New-Order and Delivery would (runAsHammerDB).
func hammerdbDatabase(t *testing.T) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
	if _, err := tpcc.Load(context.Background(), connect, tpcc.LoadOptions{Warehouses: 1, Workers: 2}, nil); err != nil {
		t.Fatalf("load: %v", err)
	}
	conn := dial(t, dsn)
	reshapeAsHammerDB(t, conn)
	runAsHammerDB(t, conn)
	return dsn
}

// hashBelow is SQL for a number within [0 .. n-1] drawn from key, both SQL
// expressions: the same key always gives the same number, so the fixture is the same
// on every run.
func hashBelow(key, n string) string {
	return fmt.Sprintf("(((hashtextextended(%s, 24) %% (%s)) + (%s)) %% (%s))", key, n, n, n)
}

// reshapeAsHammerDB rewrites a freshly loaded database into the initial population
// that HammerDB's builder makes (its Customer and Orders procedures):
//   - the lines of orders 1 to 2,100 (delivered at load) get an OL_AMOUNT within
//     [0.10 .. 100.00] and those of orders 2,101 to 3,000 get 0.00, where clause
//     4.3.3.1 asks for the reverse;
//   - customers start with C_BALANCE -10.00, C_YTD_PAYMENT 10.00, C_PAYMENT_CNT 1 and
//     one history row of H_AMOUNT 10.00, as the clause asks;
//   - O_C_ID is not a permutation: HammerDB's shuffle swaps only one way, so order i
//     gets a customer drawn from [i .. 3000] and about half the customers of a
//     district get no initial order.
func reshapeAsHammerDB(t *testing.T, conn *pgconn.PgConn) {
	t.Helper()
	line := "format('%s/%s/%s/%s', ol_w_id, ol_d_id, ol_o_id, ol_number)"
	order := "format('%s/%s/%s', o_w_id, o_d_id, o_id)"
	sql := []string{
		"UPDATE order_line SET ol_amount = CASE WHEN ol_o_id < " + strconv.Itoa(tpcc.FirstNewOrder) +
			" THEN (10 + " + hashBelow(line, "9991") + ") / 100.0 ELSE 0 END WHERE ol_o_id <= " + strconv.Itoa(tpcc.OrdersPerDistrict),
		"UPDATE customer SET c_balance = -10, c_ytd_payment = 10, c_payment_cnt = 1, c_delivery_cnt = 0",
		"UPDATE history SET h_amount = 10",
		"UPDATE orders SET o_c_id = o_id + " + hashBelow(order, strconv.Itoa(tpcc.OrdersPerDistrict+1)+" - o_id") +
			" WHERE o_id <= " + strconv.Itoa(tpcc.OrdersPerDistrict),
		"VACUUM ANALYZE",
	}
	for _, s := range sql {
		if _, err := conn.Exec(context.Background(), s).ReadAll(); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// runAsHammerDB works on warehouse 1 as HammerDB's transactions would: payments that
// lower C_BALANCE but leave C_YTD_PAYMENT and C_PAYMENT_CNT alone (hammerdbPayment),
// deliveries of the 900 undelivered initial orders of every district, new orders,
// and deliveries of some of those (hammerdbDeliver). HammerDB's New-Order touches no
// column that the consistency conditions compare with another table's, so
// tpcc_new_order stands in for it.
func runAsHammerDB(t *testing.T, conn *pgconn.PgConn) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	between := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	pay := func(n int) {
		for range n {
			byName := between(1, 100) <= 60
			hammerdbPayment(t, conn, between(1, 10), between(1, 10), between(1, tpcc.CustomersPerDistrict), between(1, 5000), byName)
		}
	}
	pay(300)
	hammerdbDeliver(t, conn, tpcc.NewOrdersPerDistrict-10)
	for i := range 200 {
		lines := between(5, 15)
		items, supply, quantities := make([]string, lines), make([]string, lines), make([]string, lines)
		for l := range lines {
			items[l], supply[l], quantities[l] = strconv.Itoa(between(1, tpcc.Items)), "1", strconv.Itoa(between(1, 10))
			for slices.Contains(items[:l], items[l]) {
				items[l] = strconv.Itoa(between(1, tpcc.Items))
			}
		}
		mustCall(t, conn, "tpcc_new_order", "1", strconv.Itoa(i%10+1), strconv.Itoa(between(1, tpcc.CustomersPerDistrict)),
			"{"+strings.Join(items, ",")+"}", "{"+strings.Join(supply, ",")+"}", "{"+strings.Join(quantities, ",")+"}")
	}
	pay(100)
	// The last 10 initial orders and 10 of the 20 new ones of each district.
	hammerdbDeliver(t, conn, 20)
	pay(100)
}

// hammerdbPayment pays amount for customer c of district cd of warehouse 1 at
// district d, as HammerDB's PAYMENT function does: W_YTD and D_YTD grow, a history
// row is added, and C_YTD_PAYMENT and C_PAYMENT_CNT stay as they are (clause
// 2.5.2.2 asks for both to grow). C_BALANCE falls by the amount, but a payment
// meant for a customer by last name, which HammerDB's prepared statement turns into
// the name '$8', finds no one and sets C_BALANCE of customer c to 0 - amount.
func hammerdbPayment(t *testing.T, conn *pgconn.PgConn, d, cd, c, amount int, byName bool) {
	t.Helper()
	balance := "c_balance"
	if byName {
		balance = "0"
	}
	sql := fmt.Sprintf(`UPDATE warehouse SET w_ytd = w_ytd + %[4]d WHERE w_id = 1;
UPDATE district SET d_ytd = d_ytd + %[4]d WHERE d_w_id = 1 AND d_id = %[1]d;
UPDATE customer SET c_balance = %[5]s - %[4]d WHERE c_w_id = 1 AND c_d_id = %[2]d AND c_id = %[3]d;
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES (%[3]d, %[2]d, 1, %[1]d, 1, current_timestamp, %[4]d, 'wname dname')`, d, cd, c, amount, balance)
	// One simple query runs in one implicit transaction.
	if _, err := conn.Exec(context.Background(), sql).ReadAll(); err != nil {
		t.Fatalf("payment: %v", err)
	}
}

// hammerdbDeliver delivers the n oldest new orders of every district of warehouse 1
// in one statement, as n of HammerDB's DELIVERY calls would one after the other: the
// orders leave NEW-ORDER and get a carrier, their lines a delivery date, and each
// customer's C_BALANCE grows by the OL_AMOUNT of their delivered lines. C_DELIVERY_CNT
// stays as it is, as HammerDB leaves it.
func hammerdbDeliver(t *testing.T, conn *pgconn.PgConn, n int) {
	t.Helper()
	sql := fmt.Sprintf(`WITH oldest AS (
	SELECT no_d_id AS d, no_o_id AS o
	  FROM (SELECT no_d_id, no_o_id, row_number() OVER (PARTITION BY no_d_id ORDER BY no_o_id) AS r
	          FROM new_order WHERE no_w_id = 1) x
	 WHERE r <= %d),
n AS (
	DELETE FROM new_order USING oldest WHERE no_w_id = 1 AND no_d_id = oldest.d AND no_o_id = oldest.o
	RETURNING no_d_id AS d, no_o_id AS o),
o AS (
	UPDATE orders SET o_carrier_id = 1 + n.o %% 10 FROM n WHERE o_w_id = 1 AND o_d_id = n.d AND o_id = n.o
	RETURNING o_d_id AS d, o_id AS o, o_c_id AS c),
l AS (
	UPDATE order_line SET ol_delivery_d = current_timestamp FROM n WHERE ol_w_id = 1 AND ol_d_id = n.d AND ol_o_id = n.o
	RETURNING ol_d_id AS d, ol_o_id AS o, ol_amount AS amount),
t AS (
	SELECT o.d, o.c, sum(l.amount) AS total FROM o JOIN l USING (d, o) GROUP BY o.d, o.c)
UPDATE customer SET c_balance = c_balance + t.total FROM t WHERE c_w_id = 1 AND c_d_id = t.d AND c_id = t.c`, n)
	if _, err := conn.Exec(context.Background(), sql).ReadAll(); err != nil {
		t.Fatalf("delivery: %v", err)
	}
}

// TestHammerDBShape checks that the fixture holds the facts of HammerDB's data that
// the consistency check has to live with.
func TestHammerDBShape(t *testing.T) {
	t.Parallel()
	conn := dial(t, hammerdbDatabase(t))
	want := map[string]string{
		// Amounts of the initial orders, the reverse of clause 4.3.3.1.
		"select bool_and(ol_amount between 0.10 and 100.00) from order_line where ol_o_id < 2101":           "t",
		"select bool_and(ol_amount = 0) from order_line where ol_o_id between 2101 and 3000":                "t",
		"select count(*) > 0 from order_line where ol_o_id between 2101 and 3000 and ol_delivery_d is null": "f",
		// O_C_ID is not a permutation: about 1,500 customers of each district have an initial order.
		"select min(n) > 1400 and max(n) < 1600 from (select count(distinct o_c_id) n from orders where o_id <= 3000 group by o_d_id) x": "t",
		"select count(*) from orders where o_id <= 3000 and o_c_id < o_id":                                                               "0",
		// Payment left C_YTD_PAYMENT and C_PAYMENT_CNT as loaded, though it ran 500 times.
		"select string_agg(distinct c_ytd_payment || ' ' || c_payment_cnt || ' ' || c_delivery_cnt, ',') from customer": "10.00 1 0",
		"select count(*) from history":                                     "30500",
		"select count(*) > 0 from customer where c_balance <> -10":         "t",
		"select count(*) from history where h_amount <> 10":                "500",
		"select min(d_next_o_id) || ' ' || max(d_next_o_id) from district": "3021 3021",
		// Each district has 10 delivered orders beyond the initial ones, with amounts.
		"select count(distinct (o_d_id, o_id)) from orders join order_line on (ol_w_id, ol_d_id, ol_o_id) = (o_w_id, o_d_id, o_id) where o_id > 3000 and o_carrier_id is not null and ol_delivery_d is not null and ol_amount > 0": "100",
		"select count(*) from new_order": "100",
	}
	for sql, w := range want {
		if got := queryOne(t, conn, sql); got != w {
			t.Errorf("%s = %s, want %s", sql, got, w)
		}
	}
}

