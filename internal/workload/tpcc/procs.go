package tpcc

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLStateRollback is the SQLSTATE that tpcc_new_order raises for an unused item
// number, the 1% of New-Order transactions that TPC-C clause 2.4.1.4 makes roll back
// on purpose. Clients count it as an intended rollback, not an error.
const SQLStateRollback = "TPC01"

// procedure is one of the server-side transactions: a PL/pgSQL function that runs a
// whole TPC-C transaction in one round trip.
type procedure struct {
	name      string
	signature string // argument types, as to_regprocedure reads them
	create    string
}

// The functions name their parameters as callers know them and refer to them through
// aliases, so that #variable_conflict use_column can leave every bare name in a
// query to mean a column (the parameters share names with columns such as w_id).
var procedures = []procedure{
	{"tpcc_new_order", "int, int, int, int[], int[], int[]", newOrderSQL},
	{"tpcc_payment", "int, int, int, int, int, text, numeric", paymentSQL},
	{"tpcc_order_status", "int, int, int, text", orderStatusSQL},
	{"tpcc_delivery", "int, int", deliverySQL},
	{"tpcc_stock_level", "int, int, int", stockLevelSQL},
}

// newOrderSQL is the New-Order transaction, clause 2.4.2.2. OL_AMOUNT is
// OL_QUANTITY * I_PRICE and the total applies discount and taxes, as the clause
// says. The order's stock rows are updated and its lines inserted by one statement
// rather than one pair per line: the server's cost here is mostly starting and
// ending statements, and this cuts New-Order's from about 26 to 2. Stock rows are
// locked in (supply warehouse, item) order, as the nested loop over the sorted lines
// reaches them, so that concurrent orders do not deadlock. An item named twice would
// update its stock row once, so callers name each item once. An unused item number
// (clause 2.4.2.3) leaves a line without a row; the other lines are still processed
// and then everything is rolled back by raising SQLStateRollback.
const newOrderSQL = `CREATE OR REPLACE FUNCTION tpcc_new_order(w_id int, d_id int, c_id int,
	item_ids int[], supply_w_ids int[], quantities int[]) RETURNS numeric
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	p_w_id ALIAS FOR $1;
	p_d_id ALIAS FOR $2;
	p_c_id ALIAS FOR $3;
	p_item_ids ALIAS FOR $4;
	p_supply_w_ids ALIAS FOR $5;
	p_quantities ALIAS FOR $6;
	n int := cardinality(p_item_ids);
	v_w_tax numeric;
	v_d_tax numeric;
	v_o_id int;
	v_discount numeric;
	v_last text;
	v_credit text;
	v_lines int;
	v_sum numeric;
	v_bad int;
BEGIN
	IF n IS NULL OR n < 1 OR cardinality(p_supply_w_ids) IS DISTINCT FROM n
			OR cardinality(p_quantities) IS DISTINCT FROM n THEN
		RAISE EXCEPTION 'tpcc_new_order: item_ids, supply_w_ids and quantities must have the same length, at least 1'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	WITH d AS (
		UPDATE district SET d_next_o_id = d_next_o_id + 1
		 WHERE d_w_id = p_w_id AND d_id = p_d_id
		 RETURNING d_tax, d_next_o_id - 1 AS o_id)
	SELECT d.o_id, d.d_tax, w_tax, c_discount, c_last, c_credit
	  INTO v_o_id, v_d_tax, v_w_tax, v_discount, v_last, v_credit
	  FROM d, warehouse, customer
	 WHERE w_id = p_w_id AND c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'tpcc_new_order: no district % in warehouse %, or no customer % in it', p_d_id, p_w_id, p_c_id
			USING ERRCODE = 'no_data_found';
	END IF;

	WITH o AS (
		INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (v_o_id, p_d_id, p_w_id, p_c_id, current_timestamp, NULL, n,
			CASE WHEN p_w_id = ALL (p_supply_w_ids) THEN 1 ELSE 0 END)
		RETURNING o_id),
	nw AS (
		INSERT INTO new_order (no_o_id, no_d_id, no_w_id) SELECT o_id, p_d_id, p_w_id FROM o),
	l AS (
		SELECT t.ol_number, t.i_id, t.supply_w_id, t.quantity, i.i_price, i.i_name, i.i_data
		  FROM unnest(p_item_ids, p_supply_w_ids, p_quantities) WITH ORDINALITY
		       AS t(i_id, supply_w_id, quantity, ol_number)
		  JOIN item i ON i.i_id = t.i_id
		 ORDER BY t.supply_w_id, t.i_id),
	s AS (
		UPDATE stock
		   SET s_quantity = CASE WHEN s_quantity >= l.quantity + 10 THEN s_quantity - l.quantity
		                         ELSE s_quantity - l.quantity + 91 END,
		       s_ytd = s_ytd + l.quantity,
		       -- The counters are HammerDB's smallints; they stop at its limit rather than
		       -- fail the order, as a skewed --dist reaches it in minutes.
		       s_order_cnt = least(s_order_cnt + 1, 32767),
		       s_remote_cnt = least(s_remote_cnt + CASE WHEN l.supply_w_id = p_w_id THEN 0 ELSE 1 END, 32767)
		  FROM l
		 WHERE s_i_id = l.i_id AND s_w_id = l.supply_w_id
		 RETURNING l.ol_number, l.i_id, l.supply_w_id, l.quantity, l.quantity * l.i_price AS amount,
		           CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		                       WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
		                       WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
		                       ELSE s_dist_10 END AS dist_info),
	ol AS (
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
			ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
		SELECT v_o_id, p_d_id, p_w_id, ol_number, i_id, supply_w_id, NULL, quantity, amount, dist_info FROM s
		RETURNING ol_amount)
	SELECT count(*), sum(ol_amount) INTO v_lines, v_sum FROM ol;

	IF v_lines < n THEN
		SELECT t.i_id INTO v_bad FROM unnest(p_item_ids) AS t(i_id)
		 WHERE NOT EXISTS (SELECT FROM item WHERE i_id = t.i_id) LIMIT 1;
		IF FOUND THEN
			RAISE EXCEPTION 'tpcc_new_order: item number % is not valid', v_bad USING ERRCODE = '` + SQLStateRollback + `';
		END IF;
		SELECT t.i_id INTO v_bad FROM unnest(p_item_ids, p_supply_w_ids) AS t(i_id, supply_w_id)
		 GROUP BY t.i_id, t.supply_w_id HAVING count(*) > 1 LIMIT 1;
		IF FOUND THEN
			RAISE EXCEPTION 'tpcc_new_order: item % is named twice; name each item once', v_bad
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		RAISE EXCEPTION 'tpcc_new_order: % of % order lines found no stock row in their supply warehouse', n - v_lines, n
			USING ERRCODE = 'no_data_found';
	END IF;
	RETURN round(v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax), 2);
END
$fn$`

// paymentSQL is the Payment transaction, clause 2.5.2.2. A customer chosen by last
// name is the one at position ceil(n/2) of the n customers with that name sorted by
// first name. For a customer with bad credit the payment's ids and amount are
// prepended to C_DATA, which keeps its first 500 characters.
const paymentSQL = `CREATE OR REPLACE FUNCTION tpcc_payment(w_id int, d_id int, c_w_id int, c_d_id int,
	c_id int, c_last text, amount numeric) RETURNS int
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	p_w_id ALIAS FOR $1;
	p_d_id ALIAS FOR $2;
	p_c_w_id ALIAS FOR $3;
	p_c_d_id ALIAS FOR $4;
	p_c_id ALIAS FOR $5;
	p_c_last ALIAS FOR $6;
	p_amount ALIAS FOR $7;
	v_c_id int;
BEGIN
	-- Each update joins the one before it, so the rows are locked in the order
	-- warehouse, district, customer whatever join order the planner picks: a row is
	-- locked only when its join row exists. A customer named by last name is the one
	-- at position ceil(n/2) of those with the name, by first name.
	WITH w AS (
		UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id RETURNING w_name),
	d AS (
		UPDATE district SET d_ytd = d_ytd + p_amount FROM w
		 WHERE d_w_id = p_w_id AND d_id = p_d_id RETURNING w.w_name, d_name),
	c AS (
		UPDATE customer
		   SET c_balance = c_balance - p_amount,
		       c_ytd_payment = c_ytd_payment + p_amount,
		       c_payment_cnt = least(c_payment_cnt + 1, 32767),
		       c_data = CASE WHEN c_credit = 'BC'
		                     THEN left(format('%s %s %s %s %s %s|', c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_amount) || c_data, 500)
		                     ELSE c_data END
		  FROM d
		 WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id
		   AND c_id = CASE WHEN p_c_id <> 0 THEN p_c_id ELSE (
		       SELECT s.c_id
		         FROM (SELECT c_id, row_number() OVER (ORDER BY c_first, c_id) AS pos, count(*) OVER () AS n
		                 FROM customer
		                WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last) s
		        WHERE s.pos = (s.n + 1) / 2) END
		 RETURNING c_id, d.w_name, d.d_name)
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
	SELECT c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, current_timestamp, p_amount, w_name || '    ' || d_name FROM c
	RETURNING h_c_id INTO v_c_id;
	IF NOT FOUND THEN
		IF p_c_id = 0 AND NOT EXISTS (SELECT FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last) THEN
			RAISE EXCEPTION 'tpcc_payment: no customer named % in warehouse % district %', p_c_last, p_c_w_id, p_c_d_id
				USING ERRCODE = 'no_data_found';
		END IF;
		RAISE EXCEPTION 'tpcc_payment: no warehouse %, district % in it, or customer % in warehouse % district %',
			p_w_id, p_d_id, p_c_id, p_c_w_id, p_c_d_id USING ERRCODE = 'no_data_found';
	END IF;
	RETURN v_c_id;
END
$fn$`

// orderStatusSQL is the Order-Status transaction, clause 2.6.2.2: the customer (by
// number or by last name as in Payment), their most recent order and its lines.
const orderStatusSQL = `CREATE OR REPLACE FUNCTION tpcc_order_status(w_id int, d_id int, c_id int, c_last text)
	RETURNS int
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	p_w_id ALIAS FOR $1;
	p_d_id ALIAS FOR $2;
	p_c_id ALIAS FOR $3;
	p_c_last ALIAS FOR $4;
	v_c_id int;
	v_balance numeric;
	v_first text;
	v_middle text;
	v_last text;
	v_o_id int;
	v_entry_d timestamptz;
	v_carrier_id int;
	v_lines int := 0;
	l record;
BEGIN
	IF p_c_id = 0 THEN
		SELECT s.c_id, s.c_balance, s.c_first, s.c_middle, p_c_last
		  INTO v_c_id, v_balance, v_first, v_middle, v_last
		  FROM (SELECT c_id, c_balance, c_first, c_middle,
		               row_number() OVER (ORDER BY c_first, c_id) AS pos, count(*) OVER () AS n
		          FROM customer
		         WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last) s
		 WHERE s.pos = (s.n + 1) / 2;
	ELSE
		SELECT c_id, c_balance, c_first, c_middle, c_last
		  INTO v_c_id, v_balance, v_first, v_middle, v_last
		  FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
	END IF;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'tpcc_order_status: no customer % % in warehouse % district %', p_c_id, p_c_last, p_w_id, p_d_id
			USING ERRCODE = 'no_data_found';
	END IF;

	SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry_d, v_carrier_id
	  FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
	 ORDER BY o_id DESC LIMIT 1;
	IF NOT FOUND THEN
		RETURN 0;
	END IF;
	FOR l IN
		SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
		  FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id
	LOOP
		v_lines := v_lines + 1;
	END LOOP;
	RETURN v_lines;
END
$fn$`

// deliverySQL is the Delivery transaction, clause 2.7.4.2, for all ten districts in
// one statement. FOR UPDATE on each district's oldest new order makes a concurrent
// Delivery for the same warehouse wait and then take the next one instead of
// delivering an order twice.
const deliverySQL = `CREATE OR REPLACE FUNCTION tpcc_delivery(w_id int, carrier_id int) RETURNS int
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	p_w_id ALIAS FOR $1;
	p_carrier_id ALIAS FOR $2;
	v_delivered int;
BEGIN
	WITH n AS (
		DELETE FROM new_order
		 USING (SELECT d, (SELECT no_o_id FROM new_order
		                    WHERE no_w_id = p_w_id AND no_d_id = d
		                    ORDER BY no_o_id LIMIT 1 FOR UPDATE) AS o
		          FROM generate_series(1, 10) AS d) oldest
		 WHERE no_w_id = p_w_id AND no_d_id = oldest.d AND no_o_id = oldest.o
		 RETURNING no_d_id, no_o_id),
	o AS (
		UPDATE orders SET o_carrier_id = p_carrier_id FROM n
		 WHERE o_w_id = p_w_id AND o_d_id = n.no_d_id AND o_id = n.no_o_id
		 RETURNING o_d_id, o_id, o_c_id),
	l AS (
		UPDATE order_line SET ol_delivery_d = current_timestamp FROM o
		 WHERE ol_w_id = p_w_id AND ol_d_id = o.o_d_id AND ol_o_id = o.o_id
		 RETURNING ol_d_id, ol_amount),
	t AS (
		SELECT o.o_d_id, o.o_c_id, (SELECT coalesce(sum(ol_amount), 0) FROM l WHERE l.ol_d_id = o.o_d_id) AS total FROM o),
	c AS (
		UPDATE customer SET c_balance = c_balance + t.total, c_delivery_cnt = c_delivery_cnt + 1
		  FROM t
		 WHERE c_w_id = p_w_id AND c_d_id = t.o_d_id AND c_id = t.o_c_id
		 RETURNING 1)
	SELECT count(*) INTO v_delivered FROM c;
	RETURN v_delivered;
END
$fn$`

// stockLevelSQL is the Stock-Level transaction, clause 2.8.2.2: distinct items of
// the district's last 20 orders whose stock in the warehouse is below threshold. The
// district's next order number is read by the same statement, which then has only
// the arguments as parameters: its cached generic plan serves every call, where a
// separate statement's order-number range made the server plan it anew each time.
const stockLevelSQL = `CREATE OR REPLACE FUNCTION tpcc_stock_level(w_id int, d_id int, threshold int) RETURNS int
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
	p_w_id ALIAS FOR $1;
	p_d_id ALIAS FOR $2;
	p_threshold ALIAS FOR $3;
	v_low int;
BEGIN
	SELECT count(DISTINCT s_i_id) INTO v_low
	  FROM district
	  JOIN order_line ON ol_w_id = d_w_id AND ol_d_id = d_id
	                 AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id
	  JOIN stock ON s_w_id = d_w_id AND s_i_id = ol_i_id
	 WHERE d_w_id = p_w_id AND d_id = p_d_id AND s_quantity < p_threshold;
	IF v_low = 0 AND NOT EXISTS (SELECT FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id) THEN
		RAISE EXCEPTION 'tpcc_stock_level: no district % in warehouse %', p_d_id, p_w_id USING ERRCODE = 'no_data_found';
	END IF;
	RETURN v_low;
END
$fn$`

// CreateProcedures creates or replaces the five functions that run the TPC-C
// transactions on the server: tpcc_new_order, tpcc_payment, tpcc_order_status,
// tpcc_delivery and tpcc_stock_level. It is idempotent, and creates all of them or
// none.
func CreateProcedures(ctx context.Context, conn *pgconn.PgConn) error {
	stmts := make([]string, len(procedures))
	for i, p := range procedures {
		stmts[i] = p.create
	}
	// One simple query runs in one implicit transaction.
	if _, err := conn.Exec(ctx, strings.Join(stmts, ";\n")).ReadAll(); err != nil {
		return fmt.Errorf("create the TPC-C functions: %w", err)
	}
	return nil
}

// MissingProcedures returns the names of those of the five functions that are not
// visible with their argument types in the connection's search path, in the order
// CreateProcedures creates them; nil when all are there.
func MissingProcedures(ctx context.Context, conn *pgconn.PgConn) ([]string, error) {
	values := make([]string, len(procedures))
	for i, p := range procedures {
		values[i] = fmt.Sprintf("(%d, '%s', '%s(%s)')", i, p.name, p.name, p.signature)
	}
	sql := "SELECT name FROM (VALUES " + strings.Join(values, ", ") + ") AS p(i, name, sig) " +
		"WHERE to_regprocedure(sig) IS NULL ORDER BY i"
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("look for the TPC-C functions: %w", err)
	}
	var missing []string
	for _, row := range res[0].Rows {
		missing = append(missing, string(row[0]))
	}
	return missing, nil
}
