package tpcc

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// HammerDB 4.12's TPROC-C for PostgreSQL (src/postgresql/pgoltp.tcl) builds and
// changes its database in ways that break conditions 10 and 12 of clause 3.3.2 as the
// clause states them, though its data holds together in another form:
//
//   - Its builder gives the lines of orders 1 to 2,100, delivered at load, an
//     OL_AMOUNT within [0.10 .. 100.00], and the lines of orders 2,101 to 3,000 0.00:
//     the reverse of clause 4.3.3.1. Customers start as the clause says, C_BALANCE
//     -10.00, C_YTD_PAYMENT 10.00 and one history row of H_AMOUNT 10.00, so their
//     balance leaves out the amounts of the orders delivered at load.
//   - Its Delivery adds the order's OL_AMOUNT to C_BALANCE as the clause says
//     (though not 1 to C_DELIVERY_CNT), so orders after 2,100 are counted in
//     C_BALANCE once delivered.
//   - Its Payment never changes C_YTD_PAYMENT (nor C_PAYMENT_CNT), which keep the
//     load's values.
//   - Its Payment writes C_BALANCE as a value worked out from what it read, not as
//     C_BALANCE - H_AMOUNT in the update, and that value is not always the balance
//     less the payment. Its functions (the default) are called through a prepared
//     statement that passes the last name as the text '$8', so a Payment by last
//     name (60% of them) finds no customer by that name and sets the balance of the
//     customer whose number it was given to 0 - H_AMOUNT; its stored procedures do
//     the same when a single customer has the name; and a Delivery or Payment that
//     changes the balance between the read and the write is lost.
//   - Its builder's shuffle of the customers over the initial orders never writes
//     the swapped-out number back, so order i gets a customer drawn from i to 3,000:
//     O_C_ID is not a permutation, and about half the customers of a district have
//     no initial order. The conditions sum per customer, so this changes nothing
//     for them.
//
// So in HammerDB's data, for every customer without a payment since the load (one
// history row, or none):
//
//	C_BALANCE = sum(OL_AMOUNT of delivered orders after 2,100) - sum(H_AMOUNT)               (10)
//	C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of delivered orders after 2,100)              (12)
//
// and C_YTD_PAYMENT = 10.00 for every customer (12). A customer with payments since
// the load may have any C_BALANCE, so theirs is not compared.

// hammerdbYTDPayment is C_YTD_PAYMENT as HammerDB loads it, which its Payment keeps.
const hammerdbYTDPayment = "10.00"

// The lines of the initial orders, orders 1 to 3,000 of every district (New-Order
// numbers from D_NEXT_O_ID = 3,001 on), tell who loaded the data: no transaction
// changes OL_AMOUNT, so their amounts stay as loaded however long HammerDB or
// pgbakeoff runs. Data is HammerDB's when every line of orders 1 to 2,100 has an
// amount above 0.00 and every line of orders 2,101 to 3,000 has 0.00, the exact
// reverse of clause 4.3.3.1: a few changed amounts, in data loaded either way, leave
// it checked as the clause states the conditions, which a corrupted database then
// fails.
//
// hammerdbContradiction looks for one line against HammerDB's pattern; in data that
// follows the clause the first line read is one, so the scan ends there.
// hammerdbSignature then counts the lines, and the customers paid since the load.
var (
	hammerdbContradiction = `SELECT EXISTS (SELECT FROM order_line WHERE ol_o_id <= ` + strconv.Itoa(OrdersPerDistrict) + `
	   AND CASE WHEN ol_o_id <= ` + strconv.Itoa(initialDeliveredOrders) + ` THEN ol_amount > 0 ELSE ol_amount = 0 END IS NOT TRUE)`
	hammerdbSignature = `SELECT count(*) FILTER (WHERE ol_o_id <= ` + strconv.Itoa(initialDeliveredOrders) + `),
       count(*) FILTER (WHERE ol_o_id > ` + strconv.Itoa(initialDeliveredOrders) + `),
       (SELECT count(*) FROM customer),
       (SELECT count(*) FROM (SELECT FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id HAVING count(*) > 1) paid)
  FROM order_line
 WHERE ol_o_id <= ` + strconv.Itoa(OrdersPerDistrict)
)

// HammerDBData is what shows that a database was loaded by HammerDB, and how much of
// it conditions 10 and 12 can be checked for.
type HammerDBData struct {
	// DeliveredLines is the number of lines of orders 1 to 2,100, all of them with
	// an OL_AMOUNT above 0.00; UndeliveredLines that of orders 2,101 to 3,000, all of
	// them with 0.00.
	DeliveredLines, UndeliveredLines int64
	// Customers is the number of customers, Paid that of those with a payment
	// since the load, whose C_BALANCE is not compared.
	Customers, Paid int64
}

// recogniseHammerDB returns what shows that the database was loaded by HammerDB, or
// nil when it was not.
func recogniseHammerDB(ctx context.Context, conn *pgconn.PgConn) (*HammerDBData, error) {
	res := conn.ExecParams(ctx, hammerdbContradiction, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("consistency check: who loaded the data: %w", res.Err)
	}
	if string(res.Rows[0][0]) == "t" {
		return nil, nil
	}
	res = conn.ExecParams(ctx, hammerdbSignature, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("consistency check: who loaded the data: %w", res.Err)
	}
	var n [4]int64
	for i := range n {
		v, err := strconv.ParseInt(string(res.Rows[0][i]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("consistency check: who loaded the data: count %q: %w", res.Rows[0][i], err)
		}
		n[i] = v
	}
	if n[0] == 0 || n[1] == 0 { // no initial orders, or no undelivered ones
		return nil, nil
	}
	return &HammerDBData{DeliveredLines: n[0], UndeliveredLines: n[1], Customers: n[2], Paid: n[3]}, nil
}

// hammerdbPayments counts each customer's history rows; more than one means a
// payment since the load.
const hammerdbPayments = `(SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS k, sum(h_amount) AS amount, count(*) AS n
	  FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id)`

// hammerdbConditions are conditions 10 and 12 in the form HammerDB's data satisfies.
var hammerdbConditions = map[int]condition{
	10: {10, "C_BALANCE = sum(delivered OL_AMOUNT, orders > 2100) - sum(H_AMOUNT), if no payment since load", "customers", `
SELECT w, d, k, false AS after_runs,
       format('warehouse %s district %s customer %s: c_balance = %s, sum(delivered ol_amount, orders > 2100) - sum(h_amount) = %s - %s',
              w, d, k, c.balance, coalesce(ol.amount, 0.00), coalesce(h.amount, 0.00)) AS detail
  FROM (SELECT c_w_id AS w, c_d_id AS d, c_id AS k, c_balance AS balance FROM customer) c
  LEFT JOIN ` + deliveredAmounts(" AND ol_o_id > "+strconv.Itoa(initialDeliveredOrders)) + ` ol USING (w, d, k)
  LEFT JOIN ` + hammerdbPayments + ` h USING (w, d, k)
 WHERE coalesce(h.n, 0) <= 1 AND c.balance <> coalesce(ol.amount, 0.00) - coalesce(h.amount, 0.00)`},

	12: {12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT, orders > 2100), if no payment since load; C_YTD_PAYMENT = " + hammerdbYTDPayment, "customers", `
SELECT w, d, k, false AS after_runs,
       CASE WHEN c.ytd_payment <> ` + hammerdbYTDPayment + `
            THEN format('warehouse %s district %s customer %s: c_ytd_payment = %s, not the load''s ` + hammerdbYTDPayment + `, which HammerDB''s Payment keeps',
                        w, d, k, c.ytd_payment)
            ELSE format('warehouse %s district %s customer %s: c_balance + c_ytd_payment = %s + %s, sum(delivered ol_amount, orders > 2100) = %s',
                        w, d, k, c.balance, c.ytd_payment, coalesce(ol.amount, 0.00)) END AS detail
  FROM (SELECT c_w_id AS w, c_d_id AS d, c_id AS k, c_balance AS balance, c_ytd_payment AS ytd_payment FROM customer) c
  LEFT JOIN ` + deliveredAmounts(" AND ol_o_id > "+strconv.Itoa(initialDeliveredOrders)) + ` ol USING (w, d, k)
  LEFT JOIN ` + hammerdbPayments + ` h USING (w, d, k)
 WHERE c.ytd_payment <> ` + hammerdbYTDPayment + `
    OR (coalesce(h.n, 0) <= 1 AND c.balance + c.ytd_payment <> coalesce(ol.amount, 0.00))`},
}
