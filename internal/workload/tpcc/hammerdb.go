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
//     load's values, and its history row has an H_DATA of W_NAME and D_NAME
//     separated by one space, where clause 2.5.2.2 asks for four.
//   - Its Payment writes C_BALANCE as a value worked out from what it read, not as
//     C_BALANCE - H_AMOUNT in the update, and that value is not always the balance
//     less the payment. Its functions (the default) are called through a prepared
//     statement that passes the last name as the text '$8', so a Payment by last
//     name (60% of them) finds no customer by that name and sets the balance of the
//     customer whose number it was given to 0 - H_AMOUNT; its stored procedures do
//     the same when a single customer has the name; and a Delivery or Payment that
//     changes the balance between the read and the write is lost. The customer
//     whose balance it writes always gets its history row.
//   - Its builder's shuffle of the customers over the initial orders never writes
//     the swapped-out number back, so order i gets a customer drawn from i to 3,000:
//     O_C_ID is not a permutation, and about half the customers of a district have
//     no initial order. The conditions sum per customer, so this changes nothing
//     for them.
//
// pgbakeoff's Payment (tpcc_payment, and the client-sql statements) may run on the
// same database after `init tpcc --procedures-only`, in turn with HammerDB's. It
// does what clause 2.5.2.2 says: C_BALANCE - H_AMOUNT and C_YTD_PAYMENT + H_AMOUNT
// in one update, and H_DATA of W_NAME and D_NAME separated by four spaces. Its
// Delivery adds to C_BALANCE as HammerDB's does. The H_DATA of a history row thus
// tells which Payment wrote it (the load's has 12 to 24 random characters), and a
// customer's rows tell which Payments paid them since the load. Then for every
// customer of HammerDB's data:
//
//	C_YTD_PAYMENT = 10.00 + sum(H_AMOUNT of pgbakeoff's Payment)                               (12)
//
// and for every customer that HammerDB's Payment has not paid since the load (paid by
// neither Payment, or by pgbakeoff's only):
//
//	C_BALANCE = sum(OL_AMOUNT of delivered orders after 2,100) - sum(H_AMOUNT)               (10)
//	C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of delivered orders after 2,100)              (12)
//
// A customer that HammerDB's Payment has paid may have any C_BALANCE, so theirs is
// not compared.

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
// hammerdbSignature then counts the lines, and hammerdbPayers the customers by the
// Payments that paid them since the load.
var (
	hammerdbContradiction = `SELECT EXISTS (SELECT FROM order_line WHERE ol_o_id <= ` + strconv.Itoa(OrdersPerDistrict) + `
	   AND CASE WHEN ol_o_id <= ` + strconv.Itoa(initialDeliveredOrders) + ` THEN ol_amount > 0 ELSE ol_amount = 0 END IS NOT TRUE)`
	hammerdbSignature = `SELECT count(*) FILTER (WHERE ol_o_id <= ` + strconv.Itoa(initialDeliveredOrders) + `),
       count(*) FILTER (WHERE ol_o_id > ` + strconv.Itoa(initialDeliveredOrders) + `)
  FROM order_line
 WHERE ol_o_id <= ` + strconv.Itoa(OrdersPerDistrict)
	hammerdbPayers = `SELECT count(*) FILTER (WHERE coalesce(h.hammerdb, 0) = 0 AND coalesce(h.pgbakeoff, 0) = 0),
       count(*) FILTER (WHERE coalesce(h.hammerdb, 0) = 0 AND h.pgbakeoff > 0),
       count(*) FILTER (WHERE h.hammerdb > 0 AND coalesce(h.pgbakeoff, 0) = 0),
       count(*) FILTER (WHERE h.hammerdb > 0 AND h.pgbakeoff > 0)
  FROM (SELECT c_w_id AS w, c_d_id AS d, c_id AS k FROM customer) c
  LEFT JOIN ` + hammerdbPayments + ` h USING (w, d, k)`
)

// HammerDBData is what shows that a database was loaded by HammerDB, and how many
// customers each form of conditions 10 and 12 was checked for.
type HammerDBData struct {
	// DeliveredLines is the number of lines of orders 1 to 2,100, all of them with
	// an OL_AMOUNT above 0.00; UndeliveredLines that of orders 2,101 to 3,000, all of
	// them with 0.00.
	DeliveredLines, UndeliveredLines int64
	// The customers by the Payments that paid them since the load: by neither, by
	// pgbakeoff's only, by HammerDB's only, by both. The C_BALANCE of the last two
	// is not compared.
	Unpaid, PaidByPgbakeoff, PaidByHammerDB, PaidByBoth int64
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
	lines, err := counts(ctx, conn, hammerdbSignature)
	if err != nil {
		return nil, fmt.Errorf("consistency check: who loaded the data: %w", err)
	}
	if lines[0] == 0 || lines[1] == 0 { // no initial orders, or no undelivered ones
		return nil, nil
	}
	payers, err := counts(ctx, conn, hammerdbPayers)
	if err != nil {
		return nil, fmt.Errorf("consistency check: who paid the customers: %w", err)
	}
	return &HammerDBData{DeliveredLines: lines[0], UndeliveredLines: lines[1],
		Unpaid: payers[0], PaidByPgbakeoff: payers[1], PaidByHammerDB: payers[2], PaidByBoth: payers[3]}, nil
}

// counts runs sql, which returns one row of counts, and returns them.
func counts(ctx context.Context, conn *pgconn.PgConn, sql string) ([]int64, error) {
	res := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	n := make([]int64, len(res.Rows[0]))
	for i, v := range res.Rows[0] {
		var err error
		if n[i], err = strconv.ParseInt(string(v), 10, 64); err != nil {
			return nil, fmt.Errorf("count %q: %w", v, err)
		}
	}
	return n, nil
}

// hammerdbPayments sums each customer's history rows (columns w, d, k, amount), and
// tells the rows of each tool's Payment by their H_DATA, W_NAME and D_NAME of the
// paying warehouse and district separated by four spaces (pgbakeoff's, as clause
// 2.5.2.2 says) or by one (HammerDB's): columns hammerdb and pgbakeoff count them,
// pgbakeoff_amount sums pgbakeoff's. Any other row, such as the load's, is neither.
const hammerdbPayments = `(SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS k, sum(h_amount) AS amount,
	       count(*) FILTER (WHERE h_data = w_name || ' ' || d_name) AS hammerdb,
	       count(*) FILTER (WHERE h_data = w_name || '    ' || d_name) AS pgbakeoff,
	       coalesce(sum(h_amount) FILTER (WHERE h_data = w_name || '    ' || d_name), 0.00) AS pgbakeoff_amount
	  FROM history
	  LEFT JOIN warehouse ON w_id = h_w_id
	  LEFT JOIN district ON d_w_id = h_w_id AND d_id = h_d_id
	 GROUP BY h_c_w_id, h_c_d_id, h_c_id)`

// hammerdbCustomerBalances tests conditions 10 and 12 in the form HammerDB's data
// satisfies, after HammerDB's transactions, pgbakeoff's or both.
var hammerdbCustomerBalances = conditionQuery{[]condition{
	{10, "C_BALANCE = sum(delivered OL_AMOUNT, orders > 2100) - sum(H_AMOUNT), unless paid by HammerDB's Payment", "customers"},
	{12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT, orders > 2100), unless paid by HammerDB's Payment; " +
		"C_YTD_PAYMENT = " + hammerdbYTDPayment + " + pgbakeoff's payments", "customers"}}, `
WITH x AS (
  SELECT w, d, k, c.balance, c.ytd_payment, coalesce(ol.amount, 0.00) AS delivered, coalesce(h.amount, 0.00) AS paid,
         coalesce(h.hammerdb, 0) AS by_hammerdb, coalesce(h.pgbakeoff, 0) AS by_pgbakeoff, coalesce(h.pgbakeoff_amount, 0.00) AS pgbakeoff_paid
    FROM (SELECT c_w_id AS w, c_d_id AS d, c_id AS k, c_balance AS balance, c_ytd_payment AS ytd_payment FROM customer) c
    LEFT JOIN ` + deliveredAmounts(" AND ol_o_id > "+strconv.Itoa(initialDeliveredOrders)) + ` ol USING (w, d, k)
    LEFT JOIN ` + hammerdbPayments + ` h USING (w, d, k))
SELECT 10 AS n, w, d, k, false AS after_runs,
       format('warehouse %s district %s customer %s: c_balance = %s, sum(delivered ol_amount, orders > 2100) - sum(h_amount) = %s - %s',
              w, d, k, balance, delivered, paid) AS detail
  FROM x WHERE by_hammerdb = 0 AND balance <> delivered - paid
UNION ALL
SELECT 12, w, d, k, false,
       CASE WHEN ytd_payment = ` + hammerdbYTDPayment + ` + pgbakeoff_paid
            THEN format('warehouse %s district %s customer %s: c_balance + c_ytd_payment = %s + %s, sum(delivered ol_amount, orders > 2100) = %s',
                        w, d, k, balance, ytd_payment, delivered)
            WHEN by_pgbakeoff = 0
            THEN format('warehouse %s district %s customer %s: c_ytd_payment = %s, not the load''s ` + hammerdbYTDPayment + `: no payment by pgbakeoff''s Payment, and HammerDB''s leaves it as it is',
                        w, d, k, ytd_payment)
            ELSE format('warehouse %s district %s customer %s: c_ytd_payment = %s, not the load''s ` + hammerdbYTDPayment + ` + %s paid by pgbakeoff''s Payment',
                        w, d, k, ytd_payment, pgbakeoff_paid) END
  FROM x
 WHERE ytd_payment <> ` + hammerdbYTDPayment + ` + pgbakeoff_paid
    OR (by_hammerdb = 0 AND balance + ytd_payment <> delivered)`}
