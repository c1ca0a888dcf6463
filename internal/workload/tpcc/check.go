package tpcc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// CheckResult is the outcome of one of the twelve consistency conditions of TPC-C
// clause 3.3.2.
type CheckResult struct {
	Number int    // 1..12, as in clauses 3.3.2.1 to 3.3.2.12
	Name   string // short description
	Passed bool
	// Skipped means the condition does not apply to this database, as condition 11
	// after Delivery transactions have run; Passed is then true and Detail says why.
	Skipped bool
	// Detail names the first three offending warehouses, districts, orders, order
	// lines or customers with their numbers, and how many there are when there are
	// more; empty when the condition holds.
	Detail string
}

// condition is one of the consistency conditions: its number, its name and what one
// offender of it is.
type condition struct {
	number int
	name   string
	unit   string // what one offender is, plural: "districts"
}

// conditionQuery tests its conditions in one query over the whole database. The
// query returns one row per offender of each condition, with the columns n (the
// condition's number), w, d, k (ids to sort by; 0 where they do not apply), detail
// (what is wrong, in words) and after_runs (true when the row is explained by
// transactions having run since the initial load, so the condition does not
// apply). Conditions that read ORDER-LINE the same way share a query, which reads
// it once for them: 4 and 6 count each order's lines, 10 and 12 sum each
// customer's delivered amounts.
type conditionQuery struct {
	conditions []condition
	sql        string
}

// single is the query of one condition, whose sql returns the columns w, d, k,
// after_runs and detail.
func single(number int, name, unit, sql string) conditionQuery {
	return conditionQuery{[]condition{{number, name, unit}},
		"SELECT " + strconv.Itoa(number) + " AS n, w, d, k, after_runs, detail FROM (" + sql + "\n) c"}
}

// deliveredAmounts sums OL_AMOUNT of delivered order lines per customer (columns
// w, d, k, amount): order lines join their orders in one hash join and are summed
// per customer in one aggregation. Conditions 10 and 12 use it; where is ANDed to
// the choice of order lines.
func deliveredAmounts(where string) string {
	return `(SELECT o_w_id AS w, o_d_id AS d, o_c_id AS k, sum(ol_amount) AS amount
	  FROM order_line
	  JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
	 WHERE ol_delivery_d IS NOT NULL` + where + `
	 GROUP BY o_w_id, o_d_id, o_c_id)`
}

// The initial population (clause 4.3.3.1) delivers orders 1 to 2,100 of every
// district and leaves 900 new orders.
const initialDeliveredOrders = 2100

// customerBalances tests conditions 10 and 12 as clause 3.3.2 states them: each
// customer's balance and payments against the amounts delivered to them.
var customerBalances = conditionQuery{[]condition{
	{10, "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)", "customers"},
	{12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)", "customers"}}, `
WITH x AS (
  SELECT w, d, k, c.balance, c.ytd_payment, coalesce(ol.amount, 0.00) AS delivered, coalesce(h.amount, 0.00) AS paid
    FROM (SELECT c_w_id AS w, c_d_id AS d, c_id AS k, c_balance AS balance, c_ytd_payment AS ytd_payment FROM customer) c
    LEFT JOIN ` + deliveredAmounts("") + ` ol USING (w, d, k)
    LEFT JOIN (SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS k, sum(h_amount) AS amount
                 FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h USING (w, d, k))
SELECT 10 AS n, w, d, k, false AS after_runs,
       format('warehouse %s district %s customer %s: c_balance = %s, sum(delivered ol_amount) - sum(h_amount) = %s - %s',
              w, d, k, balance, delivered, paid) AS detail
  FROM x WHERE balance <> delivered - paid
UNION ALL
SELECT 12, w, d, k, false,
       format('warehouse %s district %s customer %s: c_balance + c_ytd_payment = %s + %s, sum(delivered ol_amount) = %s',
              w, d, k, balance, ytd_payment, delivered)
  FROM x WHERE balance + ytd_payment <> delivered`}

var queries = []conditionQuery{
	single(1, "W_YTD = sum(D_YTD)", "warehouses", `
SELECT w, 0 AS d, 0 AS k, false AS after_runs,
       format('warehouse %s: w_ytd = %s, sum(d_ytd) = %s', w, coalesce(x.ytd::text, 'no row'), coalesce(y.ytd::text, 'no districts')) AS detail
  FROM (SELECT w_id AS w, w_ytd AS ytd FROM warehouse) x
  FULL JOIN (SELECT d_w_id AS w, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) y USING (w)
 WHERE x.ytd IS DISTINCT FROM y.ytd`),

	// A district whose orders have all been delivered has no max(NO_O_ID); then only
	// the first equality is checked.
	single(2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", "districts", `
SELECT w, d, 0 AS k, false AS after_runs,
       format('warehouse %s district %s: d_next_o_id - 1 = %s, max(o_id) = %s, max(no_o_id) = %s',
              w, d, next_o_id - 1, coalesce(max_o_id::text, 'none'), coalesce(max_no_o_id::text, 'none')) AS detail
  FROM (SELECT d_w_id AS w, d_id AS d, d_next_o_id AS next_o_id,
               (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS max_o_id,
               (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) AS max_no_o_id
          FROM district) x
 WHERE max_o_id IS DISTINCT FROM next_o_id - 1 OR max_no_o_id <> max_o_id`),

	single(3, "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER", "districts", `
SELECT no_w_id AS w, no_d_id AS d, 0 AS k, false AS after_runs,
       format('warehouse %s district %s: max(no_o_id) - min(no_o_id) + 1 = %s, new_order rows = %s',
              no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1, count(*)) AS detail
  FROM new_order
 GROUP BY no_w_id, no_d_id
HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)`),

	// Condition 4 sums per district what condition 6 compares per order.
	{[]condition{
		{4, "sum(O_OL_CNT) = rows in ORDER-LINE", "districts"},
		{6, "O_OL_CNT = rows in ORDER-LINE for the order", "orders"}}, `
WITH x AS (
  SELECT w, d, k, o.n AS ordered, l.n AS lines
    FROM (SELECT o_w_id AS w, o_d_id AS d, o_id AS k, o_ol_cnt AS n FROM orders) o
    FULL JOIN (SELECT ol_w_id AS w, ol_d_id AS d, ol_o_id AS k, count(*) AS n
                 FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l USING (w, d, k))
SELECT 4 AS n, w, d, 0 AS k, false AS after_runs,
       format('warehouse %s district %s: sum(o_ol_cnt) = %s, order_line rows = %s', w, d, coalesce(sum(ordered), 0), coalesce(sum(lines), 0)) AS detail
  FROM x GROUP BY w, d
HAVING sum(ordered) IS DISTINCT FROM sum(lines)
UNION ALL
SELECT 6, w, d, k, false,
       format('warehouse %s district %s order %s: o_ol_cnt = %s, order_line rows = %s',
              w, d, k, coalesce(ordered::text, 'no order'), coalesce(lines, 0))
  FROM x WHERE ordered IS DISTINCT FROM lines`},

	single(5, "O_CARRIER_ID is null iff a NEW-ORDER row exists", "orders", `
SELECT w, d, k, false AS after_runs,
       format('warehouse %s district %s order %s: %s', w, d, k,
              CASE WHEN o.k IS NULL THEN 'a new_order row but no order'
                   WHEN o.carrier_id IS NULL THEN 'o_carrier_id is null but there is no new_order row'
                   ELSE 'o_carrier_id = ' || o.carrier_id || ' but there is a new_order row' END) AS detail
  FROM (SELECT o_w_id AS w, o_d_id AS d, o_id AS k, o_id, o_carrier_id AS carrier_id FROM orders) o
  FULL JOIN (SELECT no_w_id AS w, no_d_id AS d, no_o_id AS k, no_o_id FROM new_order) n USING (w, d, k)
 WHERE o.o_id IS NULL OR (o.carrier_id IS NULL) = (n.no_o_id IS NULL)`),

	single(7, "OL_DELIVERY_D is null iff O_CARRIER_ID is null", "order lines", `
SELECT ol_w_id AS w, ol_d_id AS d, ol_o_id AS k, false AS after_runs,
       format('warehouse %s district %s order %s line %s: o_carrier_id = %s, ol_delivery_d = %s',
              ol_w_id, ol_d_id, ol_o_id, ol_number, coalesce(o_carrier_id::text, 'null'), coalesce(ol_delivery_d::text, 'null')) AS detail
  FROM order_line
  JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
 WHERE (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL)`),

	single(8, "W_YTD = sum(H_AMOUNT) per warehouse", "warehouses", `
SELECT w, 0 AS d, 0 AS k, false AS after_runs,
       format('warehouse %s: w_ytd = %s, sum(h_amount) = %s', w, coalesce(x.ytd::text, 'no row'), coalesce(h.amount, 0.00)) AS detail
  FROM (SELECT w_id AS w, w_ytd AS ytd FROM warehouse) x
  FULL JOIN (SELECT h_w_id AS w, sum(h_amount) AS amount FROM history GROUP BY h_w_id) h USING (w)
 WHERE x.ytd IS DISTINCT FROM coalesce(h.amount, 0.00)`),

	single(9, "D_YTD = sum(H_AMOUNT) per district", "districts", `
SELECT w, d, 0 AS k, false AS after_runs,
       format('warehouse %s district %s: d_ytd = %s, sum(h_amount) = %s', w, d, coalesce(x.ytd::text, 'no row'), coalesce(h.amount, 0.00)) AS detail
  FROM (SELECT d_w_id AS w, d_id AS d, d_ytd AS ytd FROM district) x
  FULL JOIN (SELECT h_w_id AS w, h_d_id AS d, sum(h_amount) AS amount FROM history GROUP BY h_w_id, h_d_id) h USING (w, d)
 WHERE x.ytd IS DISTINCT FROM coalesce(h.amount, 0.00)`),

	customerBalances,

	// Orders enter ORDER and NEW-ORDER together, but Delivery removes them from
	// NEW-ORDER only: each delivery adds one to the difference, so the condition holds
	// for the initial database only. A larger difference is therefore excused; a
	// smaller one never is.
	single(11, "count(ORDER) - count(NEW-ORDER) = 2100 (initial database)", "districts", `
SELECT w, d, 0 AS k, delivered > `+strconv.Itoa(initialDeliveredOrders)+` AS after_runs,
       format('warehouse %s district %s: count(orders) - count(new_order) = %s - %s = %s', w, d, n_orders, n_new, delivered) AS detail
  FROM (SELECT d_w_id AS w, d_id AS d, coalesce(o.n, 0) AS n_orders, coalesce(n.n, 0) AS n_new,
               coalesce(o.n, 0) - coalesce(n.n, 0) AS delivered
          FROM district
          LEFT JOIN (SELECT o_w_id, o_d_id, count(*) AS n FROM orders GROUP BY o_w_id, o_d_id) o
            ON o.o_w_id = d_w_id AND o.o_d_id = d_id
          LEFT JOIN (SELECT no_w_id, no_d_id, count(*) AS n FROM new_order GROUP BY no_w_id, no_d_id) n
            ON n.no_w_id = d_w_id AND n.no_d_id = d_id) x
 WHERE delivered <> `+strconv.Itoa(initialDeliveredOrders)),
}

// shownOffenders is how many offending rows a failed condition's Detail names.
const shownOffenders = 3

// CheckReport is what Check found.
type CheckReport struct {
	Results []CheckResult // conditions 1 to 12, in order
	// HammerDB is nil for data that follows clause 4.3.3.1, as pgbakeoff's does.
	// For data loaded by HammerDB it says what shows it and how many customers
	// each tool's Payment paid, and conditions 10 and 12 are then checked in the
	// form HammerDB's data satisfies (hammerdbCustomerBalances).
	HammerDB *HammerDBData
}

// Note is text for people, to show above the results, saying how the data was
// checked when not by the conditions as clause 3.3.2 states them, and for how many
// customers each form of conditions 10 and 12 was checked; empty when it was.
func (r CheckReport) Note() string {
	h := r.HammerDB
	if h == nil {
		return ""
	}
	y := hammerdbYTDPayment
	return fmt.Sprintf("data loaded by HammerDB (all %d lines of orders 1 to 2100 have an OL_AMOUNT above 0.00 "+
		"and all %d lines of orders 2101 to 3000 have 0.00, the reverse of clause 4.3.3.1): "+
		"conditions 10 and 12 checked in the form its data satisfies, orders up to 2100 left out of the delivered amounts, "+
		"and each customer by the Payments since the load, told apart by H_DATA:\n"+
		"  %d customers paid by neither Payment since the load: C_YTD_PAYMENT = %s, and C_BALANCE as conditions 10 and 12 say\n"+
		"  %d paid by pgbakeoff's Payment only: C_YTD_PAYMENT = %s + their payments, and C_BALANCE as conditions 10 and 12 say\n"+
		"  %d paid by HammerDB's Payment only and %d by both: C_YTD_PAYMENT = %s + pgbakeoff's payments, "+
		"C_BALANCE not compared, as HammerDB's Payment may set any and leaves C_YTD_PAYMENT as it is",
		h.DeliveredLines, h.UndeliveredLines, h.Unpaid, y, h.PaidByPgbakeoff, y, h.PaidByHammerDB, h.PaidByBoth, y)
}

// Check tests the twelve consistency conditions of TPC-C clause 3.3.2 on a loaded
// database, all in one read-only snapshot, so it may run while transactions do.
// Each query reads its tables once, with hash joins and aggregates, and ten
// queries test the twelve conditions (conditionQuery); at 10 warehouses all take
// seconds.
//
// Conditions 1 to 10 and 12 hold both for the initial database and after any number
// of the five transactions as clause 2 defines them (and the tpcc_* functions
// implement them); a district whose new orders have all been delivered is held to
// the first equality of condition 2 only. Condition 11 holds only until the first
// Delivery transaction: when every offending district has more delivered orders
// than the initial 2,100, its result is Skipped.
//
// A database loaded by HammerDB, recognised from the amounts of its initial order
// lines (hammerdbSignature), is held to conditions 10 and 12 in the form its loader
// and both tools' transactions keep (hammerdbCustomerBalances), each customer by the
// Payments that paid them, and the report says so and how many customers each form
// was checked for.
//
// Check ends with COMMIT, so conn must not be in a transaction. An error means a
// query could not run, not that a condition failed; ErrNotLoaded means tables are
// missing.
func Check(ctx context.Context, conn *pgconn.PgConn) (report CheckReport, err error) {
	// Aggregating order lines per customer wants more than the default 4MB of
	// work_mem to stay in memory. Row estimates for joins of aggregates come out far too low,
	// which can tempt the planner into nested loops over tens of thousands of rows;
	// every condition is meant to run as hash or merge joins. Before PostgreSQL 13 a
	// hash aggregate cannot spill to disk, and with such estimates it could take
	// gigabytes at a thousand warehouses; sorting then is slower but bounded. SET LOCAL
	// ends with the transaction.
	begin := "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL work_mem = '64MB'; SET LOCAL enable_nestloop = off"
	if serverMajor(conn) < 13 {
		begin += "; SET LOCAL enable_hashagg = off"
	}
	if _, err := conn.Exec(ctx, begin).ReadAll(); err != nil {
		return CheckReport{}, fmt.Errorf("consistency check: begin: %w", err)
	}
	defer func() {
		end := "COMMIT"
		if err != nil {
			end = "ROLLBACK"
		}
		if _, endErr := conn.Exec(context.WithoutCancel(ctx), end).ReadAll(); endErr != nil && !conn.IsClosed() {
			err = errors.Join(err, fmt.Errorf("consistency check: %s: %w", strings.ToLower(end), endErr))
		}
		if err != nil {
			report = CheckReport{}
		}
	}()
	notLoaded := func(err error) error {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
			return fmt.Errorf("%w (%s)", ErrNotLoaded, pgErr.Message)
		}
		return err
	}
	if report.HammerDB, err = recogniseHammerDB(ctx, conn); err != nil {
		return CheckReport{}, notLoaded(err)
	}
	for _, q := range queries {
		if q.conditions[0].number == customerBalances.conditions[0].number && report.HammerDB != nil {
			q = hammerdbCustomerBalances
		}
		results, err := q.check(ctx, conn)
		if err != nil {
			return CheckReport{}, notLoaded(err)
		}
		report.Results = append(report.Results, results...)
	}
	slices.SortFunc(report.Results, func(a, b CheckResult) int { return a.Number - b.Number })
	return report, nil
}

// check runs the query and returns the result of each of its conditions.
func (q conditionQuery) check(ctx context.Context, conn *pgconn.PgConn) ([]CheckResult, error) {
	// All offenders are counted; the first few of each condition are named.
	sql := "WITH v AS (" + q.sql + "\n) SELECT n, detail, total, after_runs FROM (" +
		"SELECT n, detail, after_runs, count(*) OVER (PARTITION BY n) AS total, " +
		"row_number() OVER (PARTITION BY n ORDER BY after_runs, w, d, k, detail) AS rank FROM v) x " +
		"WHERE rank <= " + strconv.Itoa(shownOffenders) + " ORDER BY n, rank"
	res := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
	if err := res.Err; err != nil {
		return nil, fmt.Errorf("consistency %s: %w", q.names(), err)
	}
	results := make([]CheckResult, 0, len(q.conditions))
	for _, c := range q.conditions {
		r := CheckResult{Number: c.number, Name: c.name}
		var details []string
		total, excused := 0, false
		for _, row := range res.Rows {
			if string(row[0]) != strconv.Itoa(c.number) {
				continue
			}
			if len(details) == 0 {
				var err error
				if total, err = strconv.Atoi(string(row[2])); err != nil {
					return nil, fmt.Errorf("consistency condition %d: count %q: %w", c.number, row[2], err)
				}
				// Rows excused by runs sort last, so if the first is excused all are.
				excused = string(row[3]) == "t"
			}
			details = append(details, string(row[1]))
		}
		if len(details) == 0 {
			r.Passed = true
			results = append(results, r)
			continue
		}
		r.Detail = strings.Join(details, "; ")
		if total > len(details) {
			r.Detail += fmt.Sprintf(" (%d %s in all)", total, c.unit)
		}
		if excused {
			r.Passed, r.Skipped = true, true
			r.Detail = "holds only for the initial database, and Delivery transactions have run: " + r.Detail
		}
		results = append(results, r)
	}
	return results, nil
}

// names names the query's conditions: "condition 7 (its name)", or "conditions
// 4 and 6".
func (q conditionQuery) names() string {
	if len(q.conditions) == 1 {
		return fmt.Sprintf("condition %d (%s)", q.conditions[0].number, q.conditions[0].name)
	}
	n := make([]string, len(q.conditions))
	for i, c := range q.conditions {
		n[i] = strconv.Itoa(c.number)
	}
	return "conditions " + strings.Join(n, " and ")
}

// serverMajor is the server's major version from the server_version it reported
// at connection, such as "15.4 (Debian 15.4-1)" or "11.22"; 0 if unknown.
func serverMajor(conn *pgconn.PgConn) int {
	v := conn.ParameterStatus("server_version")
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(v)
	}
	major, _ := strconv.Atoi(v[:end]) // not a number: 0, taken as old
	return major
}
