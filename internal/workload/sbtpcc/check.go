package sbtpcc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// CheckResult is the outcome of one of tpcc_check.lua's conditions, over every
// table set and warehouse.
type CheckResult struct {
	Number int    // as tpcc_check.lua numbers them: 1 to 5, 7 to 10, 12
	Name   string // the condition
	Passed bool
	// Detail names the first three offending warehouses, and how many there are
	// when there are more; empty when the condition holds.
	Detail string
}

// condition is one of tpcc_check.lua's checks as one query over a table set,
// each table written {base}: a row per offending warehouse, its number w and what
// is wrong there. tpcc_check.lua runs each per warehouse; grouped by warehouse,
// these compare the same sums and counts, and leave out, as its comparisons with
// NULL do, the districts and customers it leaves out.
type condition struct {
	number    int
	name, sql string
}

// deliveredSums sums each customer's delivered order lines.
const deliveredSums = `(SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) AS sm FROM {orders}
	JOIN {order_line} ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
	WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) o ON o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id`

var conditions = []condition{
	{1, "sum(d_ytd) = w_ytd", `
SELECT d_w_id AS w, format('sum(d_ytd) - w_ytd = %s', sum(d_ytd) - max(w_ytd))
  FROM {district} JOIN {warehouse} ON w_id = d_w_id
 GROUP BY d_w_id HAVING sum(d_ytd) - max(w_ytd) <> 0`},
	{2, "d_next_o_id - 1 = max(o_id) = max(no_o_id)", `
SELECT d_w_id AS w, format('district %s: d_next_o_id - 1 = %s, max(o_id) = %s, max(no_o_id) = %s', d_id, d_next_o_id - 1, mo, mno)
  FROM {district}
  JOIN (SELECT o_w_id, o_d_id, max(o_id) AS mo FROM {orders} GROUP BY o_w_id, o_d_id) q ON o_w_id = d_w_id AND o_d_id = d_id
  JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS mno FROM {new_orders} GROUP BY no_w_id, no_d_id) n ON no_w_id = d_w_id AND no_d_id = d_id
 WHERE d_next_o_id - 1 <> mo OR d_next_o_id - 1 <> mno`},
	{3, "max(no_o_id) - min(no_o_id) + 1 = rows in new_orders", `
SELECT no_w_id AS w, format('district %s: max(no_o_id) - min(no_o_id) + 1 = %s, rows = %s', no_d_id, max(no_o_id) - min(no_o_id) + 1, count(*))
  FROM {new_orders} GROUP BY no_w_id, no_d_id
HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)`},
	{4, "sum(o_ol_cnt) = rows in order_line", `
SELECT o_w_id AS w, format('district %s: sum(o_ol_cnt) = %s, order_line rows = %s', o_d_id, sm1, cn)
  FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS sm1 FROM {orders} GROUP BY o_w_id, o_d_id) o
  JOIN (SELECT ol_w_id, ol_d_id, count(*) AS cn FROM {order_line} GROUP BY ol_w_id, ol_d_id) l ON ol_w_id = o_w_id AND ol_d_id = o_d_id
 WHERE sm1 <> cn`},
	{5, "o_carrier_id is null iff a new_orders row exists", `
SELECT o_w_id AS w, format('%s orders', count(*))
  FROM {orders} LEFT JOIN {new_orders} ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
 WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL)
 GROUP BY o_w_id`},
	{7, "ol_delivery_d is null iff o_carrier_id is null", `
SELECT o_w_id AS w, format('%s order lines', count(*))
  FROM {orders} JOIN {order_line} ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
 WHERE (ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) OR (o_carrier_id IS NULL AND ol_delivery_d IS NOT NULL)
 GROUP BY o_w_id`},
	{8, "w_ytd = sum(h_amount)", `
SELECT w_id AS w, format('w_ytd = %s, sum(h_amount) = %s', w_ytd, sm)
  FROM {warehouse} JOIN (SELECT h_w_id, sum(h_amount) AS sm FROM {history} GROUP BY h_w_id) h ON h_w_id = w_id
 WHERE w_ytd <> sm`},
	{9, "d_ytd = sum(h_amount) per district", `
SELECT d_w_id AS w, format('district %s: d_ytd = %s, sum(h_amount) = %s', d_id, s1, s2)
  FROM (SELECT d_w_id, d_id, sum(d_ytd) AS s1 FROM {district} GROUP BY d_w_id, d_id) d
  JOIN (SELECT h_w_id, h_d_id, sum(h_amount) AS s2 FROM {history} GROUP BY h_w_id, h_d_id) h ON h_w_id = d_w_id AND h_d_id = d_id
 WHERE s1 <> s2`},
	{10, "c_balance = sum(delivered ol_amount) - sum(h_amount)", `
SELECT c_w_id AS w, format('%s customers', count(*))
  FROM {customer} JOIN ` + deliveredSums + `
  JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) AS smh FROM {history} GROUP BY h_c_w_id, h_c_d_id, h_c_id) h
    ON h_c_w_id = c_w_id AND h_c_d_id = c_d_id AND h_c_id = c_id
 WHERE c_balance <> sm - smh GROUP BY c_w_id`},
	{12, "c_balance + c_ytd_payment = sum(delivered ol_amount)", `
SELECT c_w_id AS w, format('%s customers', count(*))
  FROM {customer} JOIN ` + deliveredSums + `
 WHERE c_balance + c_ytd_payment <> sm GROUP BY c_w_id`},
}

// shown is how many offending warehouses a failed condition's Detail names.
const shown = 3

// Check runs tpcc_check.lua's conditions on table sets 1..tables of schema, in
// one read-only snapshot, so it may run while transactions do. An error means a
// query could not run, not that a condition failed.
func Check(ctx context.Context, conn *pgconn.PgConn, schema string, tables int) (results []CheckResult, err error) {
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL work_mem = '64MB'; SET LOCAL enable_nestloop = off").ReadAll(); err != nil {
		return nil, fmt.Errorf("check: begin: %w", err)
	}
	defer func() {
		if _, endErr := conn.Exec(context.WithoutCancel(ctx), "COMMIT").ReadAll(); endErr != nil && !conn.IsClosed() {
			err = errors.Join(err, fmt.Errorf("check: commit: %w", endErr))
		}
	}()
	s := names(schema)
	for _, c := range conditions {
		r := CheckResult{Number: c.number, Name: c.name}
		var bad []string
		for n := 1; n <= tables; n++ {
			pairs := make([]string, 0, 2*len(bases))
			for _, b := range bases {
				pairs = append(pairs, "{"+b+"}", s.t(b, n))
			}
			sql := strings.NewReplacer(pairs...).Replace(c.sql) + " ORDER BY 1"
			res := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
			if res.Err != nil {
				return nil, fmt.Errorf("check %d (%s) of table set %d: %w", c.number, c.name, n, res.Err)
			}
			for _, row := range res.Rows {
				bad = append(bad, "table set "+strconv.Itoa(n)+" warehouse "+string(row[0])+": "+string(row[1]))
			}
		}
		r.Passed = len(bad) == 0
		if len(bad) > shown {
			r.Detail = strings.Join(bad[:shown], "; ") + fmt.Sprintf(" (%d warehouses in all)", len(bad))
		} else {
			r.Detail = strings.Join(bad, "; ")
		}
		results = append(results, r)
	}
	return results, nil
}
