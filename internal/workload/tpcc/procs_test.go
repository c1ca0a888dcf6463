package tpcc_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// loadedDatabase returns the DSN of a database of the test's own holding two loaded
// warehouses, with the functions created by the load: a copy of one load.
func loadedDatabase(t *testing.T) string {
	t.Helper()
	return pgtest.Loaded(t, "tpcc-2", func(dsn string) error {
		connect := func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
		_, err := tpcc.Load(context.Background(), connect, tpcc.LoadOptions{Warehouses: 2, Sharding: load.Sharding{Workers: 2}}, nil)
		return err
	})
}

func dial(t *testing.T, dsn string) *pgconn.PgConn {
	t.Helper()
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// call runs "select fn($1, ...)" with text parameters, as the server-mode client
// does, and returns the function's result as text.
func call(conn *pgconn.PgConn, fn string, args ...string) (string, error) {
	params := make([][]byte, len(args))
	placeholders := make([]string, len(args))
	for i, a := range args {
		params[i] = []byte(a)
		placeholders[i] = "$" + strconv.Itoa(i+1)
	}
	res := conn.ExecParams(context.Background(), "select "+fn+"("+strings.Join(placeholders, ", ")+")", params, nil, nil, nil).Read()
	if res.Err != nil {
		return "", res.Err
	}
	return string(res.Rows[0][0]), nil
}

func mustCall(t *testing.T, conn *pgconn.PgConn, fn string, args ...string) string {
	t.Helper()
	v, err := call(conn, fn, args...)
	if err != nil {
		t.Fatalf("%s(%s): %v", fn, strings.Join(args, ", "), err)
	}
	return v
}

// query returns the first column of the rows of sql.
func query(t *testing.T, conn *pgconn.PgConn, sql string) []string {
	t.Helper()
	res, err := conn.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var col []string
	for _, row := range res[len(res)-1].Rows {
		col = append(col, string(row[0]))
	}
	return col
}

func queryOne(t *testing.T, conn *pgconn.PgConn, sql string) string {
	t.Helper()
	col := query(t, conn, sql)
	if len(col) != 1 {
		t.Fatalf("%s: %d rows, want 1", sql, len(col))
	}
	return col[0]
}

func TestProceduresCreate(t *testing.T) {
	t.Parallel()
	conn := dial(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	all := []string{"tpcc_new_order", "tpcc_payment", "tpcc_order_status", "tpcc_delivery", "tpcc_stock_level"}
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"empty", func() error { return nil }, all},
		{"created", func() error { return tpcc.CreateProcedures(ctx, conn) }, nil},
		{"created-again", func() error { return tpcc.CreateProcedures(ctx, conn) }, nil},
		{"dropped-delivery", func() error {
			_, err := conn.Exec(ctx, "drop function tpcc_delivery(int, int)").ReadAll()
			return err
		}, []string{"tpcc_delivery"}},
		{"replaced-with-other-types", func() error {
			_, err := conn.Exec(ctx, "drop function tpcc_stock_level(int, int, int); "+
				"create function tpcc_stock_level(bigint, int, int) returns int language sql as 'select 0'").ReadAll()
			return err
		}, []string{"tpcc_delivery", "tpcc_stock_level"}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got, err := tpcc.MissingProcedures(ctx, conn)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: MissingProcedures = %q, want %q", s.name, got, s.want)
		}
	}
}

// TestProcedures runs each transaction on one loaded warehouse and compares what it
// did with what the clause for it says, computed here by plain queries.
func TestProcedures(t *testing.T) {
	pgtest.Long(t)
	t.Parallel()
	dsn := loadedDatabase(t)
	conn := dial(t, dsn)

	t.Run("new_order", func(t *testing.T) {
		next := queryOne(t, conn, "select d_next_o_id from district where d_w_id = 1 and d_id = 4")
		// Item 7 on a remote line first, so that the lines are processed in another
		// order than they are numbered.
		stockBefore := queryOne(t, conn, "select s_quantity || ' ' || s_ytd || ' ' || s_order_cnt || ' ' || s_remote_cnt from stock where s_w_id = 2 and s_i_id = 7")
		total := mustCall(t, conn, "tpcc_new_order", "1", "4", "21", "{7,3,9}", "{2,1,1}", "{9,5,4}")
		o := "o_w_id = 1 and o_d_id = 4 and o_id = " + next
		ol := "ol_w_id = 1 and ol_d_id = 4 and ol_o_id = " + next
		want := map[string]string{
			"select d_next_o_id - 1 from district where d_w_id = 1 and d_id = 4":                                                                                  next,
			"select o_c_id || ' ' || o_ol_cnt || ' ' || o_all_local || ' ' || (o_carrier_id is null) from orders where " + o:                                      "21 3 0 true",
			"select count(*) from new_order where no_w_id = 1 and no_d_id = 4 and no_o_id = " + next:                                                              "1",
			"select string_agg(ol_i_id || ':' || ol_supply_w_id || ':' || ol_quantity, ',' order by ol_number) from order_line where " + ol:                       "7:2:9,3:1:5,9:1:4",
			"select count(*) from order_line where ol_delivery_d is null and ol_amount = ol_quantity * (select i_price from item where i_id = ol_i_id) and " + ol: "3",
			// Clause 2.4.2.2: sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX).
			`select round(sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax), 2) from order_line, customer, warehouse, district
			  where c_w_id = 1 and c_d_id = 4 and c_id = 21 and w_id = 1 and d_w_id = 1 and d_id = 4 and ` + ol + ` group by c_discount, w_tax, d_tax`: total,
			"select count(*) from order_line where ol_dist_info = (select s_dist_04 from stock where s_w_id = 1 and s_i_id = 3) and ol_number = 2 and " + ol: "1",
			"select count(*) from order_line where ol_dist_info = (select s_dist_04 from stock where s_w_id = 2 and s_i_id = 7) and ol_number = 1 and " + ol: "1",
		}
		for q, w := range want {
			if got := queryOne(t, conn, q); got != w {
				t.Errorf("%s\n= %q, want %q", q, got, w)
			}
		}
		// Clause 2.4.2.2: S_QUANTITY drops by the quantity while 10 or more stay,
		// else 91 are added; a remote line counts in S_REMOTE_CNT.
		var q, ytd, cnt, remote int
		if _, err := fmt.Sscan(stockBefore, &q, &ytd, &cnt, &remote); err != nil {
			t.Fatal(err)
		}
		if q-9 >= 10 {
			q -= 9
		} else {
			q += 91 - 9
		}
		wantStock := fmt.Sprintf("%d %d %d %d", q, ytd+9, cnt+1, remote+1)
		if got := queryOne(t, conn, "select s_quantity || ' ' || s_ytd || ' ' || s_order_cnt || ' ' || s_remote_cnt from stock where s_w_id = 2 and s_i_id = 7"); got != wantStock {
			t.Errorf("stock of item 7 in warehouse 2 = %q, want %q (was %q)", got, wantStock, stockBefore)
		}
	})

	// One statement updates an order's stock rows, so an item may be named once.
	t.Run("new_order/item-twice", func(t *testing.T) {
		before := queryOne(t, conn, "select (select count(*) from orders) || ' ' || (select s_ytd from stock where s_w_id = 1 and s_i_id = 7)")
		_, err := call(conn, "tpcc_new_order", "1", "4", "21", "{7,3,7}", "{1,1,1}", "{2,5,4}")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "22023" || !strings.Contains(pgErr.Message, "item 7 is named twice") {
			t.Fatalf("err = %v, want SQLSTATE 22023 naming item 7", err)
		}
		if after := queryOne(t, conn, "select (select count(*) from orders) || ' ' || (select s_ytd from stock where s_w_id = 1 and s_i_id = 7)"); after != before {
			t.Errorf("the refused order changed the database: %q, was %q", after, before)
		}
	})

	t.Run("new_order/unused-item", func(t *testing.T) {
		state := `select (select d_next_o_id from district where d_w_id = 1 and d_id = 2) || ' ' ||
			(select count(*) from orders) || ' ' || (select count(*) from new_order) || ' ' ||
			(select count(*) from order_line) || ' ' || (select s_ytd from stock where s_w_id = 1 and s_i_id = 8)`
		before := queryOne(t, conn, state)
		_, err := call(conn, "tpcc_new_order", "1", "2", "5", "{8,9,100001}", "{1,1,1}", "{1,1,1}")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != tpcc.SQLStateRollback {
			t.Fatalf("err = %v, want SQLSTATE %s", err, tpcc.SQLStateRollback)
		}
		if after := queryOne(t, conn, state); after != before {
			t.Errorf("the rolled back order changed the database: %q, was %q", after, before)
		}
	})

	t.Run("new_order/bad-input", func(t *testing.T) {
		_, err := call(conn, "tpcc_new_order", "1", "2", "5", "{8,9}", "{1}", "{1,1}")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "22023" {
			t.Errorf("err = %v, want SQLSTATE 22023", err)
		}
	})

	// Clause 2.5.2.2: by last name, the customer at position ceil(n/2) of those
	// with the name sorted by C_FIRST.
	for _, parity := range []string{"odd", "even"} {
		t.Run("payment/by-name/"+parity, func(t *testing.T) {
			last := queryOne(t, conn, `select c_last from customer where c_w_id = 1 and c_d_id = 3 group by c_last
				having count(*) % 2 = `+map[string]string{"odd": "1 and count(*) > 1", "even": "0"}[parity]+` order by c_last limit 1`)
			ids := query(t, conn, "select c_id from customer where c_w_id = 1 and c_d_id = 3 and c_last = '"+last+"' order by c_first, c_id")
			want := ids[(len(ids)+1)/2-1]
			before := queryOne(t, conn, "select c_balance || ' ' || c_ytd_payment || ' ' || c_payment_cnt from customer where c_w_id = 1 and c_d_id = 3 and c_id = "+want)
			got := mustCall(t, conn, "tpcc_payment", "1", "6", "1", "3", "0", last, "12.34")
			if got != want {
				t.Fatalf("paid customer %s of %s named %s, want %s", got, ids, last, want)
			}
			var balance, ytd float64
			var cnt int
			if _, err := fmt.Sscan(before, &balance, &ytd, &cnt); err != nil {
				t.Fatal(err)
			}
			wantAfter := fmt.Sprintf("%.2f %.2f %d", balance-12.34, ytd+12.34, cnt+1)
			if after := queryOne(t, conn, "select c_balance || ' ' || c_ytd_payment || ' ' || c_payment_cnt from customer where c_w_id = 1 and c_d_id = 3 and c_id = "+want); after != wantAfter {
				t.Errorf("customer after payment: %q, want %q", after, wantAfter)
			}
			h := queryOne(t, conn, `select h_c_w_id || ' ' || h_c_d_id || ' ' || h_w_id || ' ' || h_d_id || ' ' || h_amount || ' ' || h_data
				from history where h_c_id = `+want+` and h_c_d_id = 3 order by h_date desc limit 1`)
			wantH := "1 3 1 6 12.34 " + queryOne(t, conn, "select w_name || '    ' || d_name from warehouse, district where w_id = 1 and d_w_id = 1 and d_id = 6")
			if h != wantH {
				t.Errorf("history row %q, want %q", h, wantH)
			}
		})
	}

	t.Run("payment/bad-credit", func(t *testing.T) {
		c := queryOne(t, conn, "select c_id from customer where c_w_id = 1 and c_d_id = 9 and c_credit = 'BC' order by c_id limit 1")
		data := queryOne(t, conn, "select c_data from customer where c_w_id = 1 and c_d_id = 9 and c_id = "+c)
		if got := mustCall(t, conn, "tpcc_payment", "1", "2", "1", "9", c, "", "4000.5"); got != c {
			t.Fatalf("paid customer %s, want %s", got, c)
		}
		// C_ID, C_D_ID, C_W_ID, D_ID, W_ID and H_AMOUNT go in front; 500 characters stay.
		want := c + " 9 1 2 1 4000.5|" + data
		want = want[:min(len(want), 500)]
		if got := queryOne(t, conn, "select c_data from customer where c_w_id = 1 and c_d_id = 9 and c_id = "+c); got != want {
			t.Errorf("c_data = %.60q..., want %.60q...", got, want)
		}
	})

	t.Run("order_status", func(t *testing.T) {
		for _, c := range []string{"1", "2999"} {
			want := queryOne(t, conn, `select count(*) from order_line where ol_w_id = 1 and ol_d_id = 5 and ol_o_id =
				(select max(o_id) from orders where o_w_id = 1 and o_d_id = 5 and o_c_id = `+c+`)`)
			if got := mustCall(t, conn, "tpcc_order_status", "1", "5", c, ""); got != want {
				t.Errorf("customer %s: %s order lines, want %s", c, got, want)
			}
		}
		last := queryOne(t, conn, "select c_last from customer where c_w_id = 1 and c_d_id = 5 and c_id = 1")
		if got := mustCall(t, conn, "tpcc_order_status", "1", "5", "0", last); got == "0" {
			t.Errorf("customer named %s: no order lines", last)
		}
	})

	t.Run("delivery", func(t *testing.T) {
		oldest := `select string_agg(no_o_id::text, ',' order by no_d_id) from
			(select no_d_id, min(no_o_id) as no_o_id from new_order where no_w_id = 1 group by no_d_id) x`
		delivered := queryOne(t, conn, oldest)
		count := "select count(*) from new_order"
		before, _ := strconv.Atoi(queryOne(t, conn, count))
		if got := mustCall(t, conn, "tpcc_delivery", "1", "7"); got != "10" {
			t.Errorf("delivered %s districts, want 10", got)
		}
		after, _ := strconv.Atoi(queryOne(t, conn, count))
		if before-after != 10 {
			t.Errorf("new_order rows %d -> %d, want 10 fewer", before, after)
		}
		carried := queryOne(t, conn, `select string_agg(o_id::text, ',' order by o_d_id) from orders
			where o_w_id = 1 and o_carrier_id = 7 and o_id >= `+strconv.Itoa(tpcc.FirstNewOrder))
		if carried != delivered {
			t.Errorf("orders with carrier 7: %s, want the oldest new orders %s", carried, delivered)
		}
	})

	t.Run("delivery/empty-district", func(t *testing.T) {
		before := queryOne(t, conn, "select count(*) from new_order")
		if _, err := conn.Exec(context.Background(), "begin; delete from new_order where no_w_id = 1 and no_d_id = 10").ReadAll(); err != nil {
			t.Fatal(err)
		}
		got := mustCall(t, conn, "tpcc_delivery", "1", "3")
		if _, err := conn.Exec(context.Background(), "rollback").ReadAll(); err != nil {
			t.Fatal(err)
		}
		if got != "9" {
			t.Errorf("delivered %s districts, want 9", got)
		}
		if after := queryOne(t, conn, "select count(*) from new_order"); after != before {
			t.Errorf("new_order rows %s after rollback, want %s", after, before)
		}
	})

	// A second Delivery for the warehouse waits for the first and then takes the
	// next oldest new orders, delivering none twice.
	t.Run("delivery/concurrent", func(t *testing.T) {
		other := dial(t, dsn)
		before, _ := strconv.Atoi(queryOne(t, conn, "select count(*) from new_order"))
		if _, err := conn.Exec(context.Background(), "begin").ReadAll(); err != nil {
			t.Fatal(err)
		}
		first := mustCall(t, conn, "tpcc_delivery", "1", "1")
		second := make(chan string, 1)
		go func() {
			v, err := call(other, "tpcc_delivery", "1", "2")
			if err != nil {
				v = err.Error()
			}
			second <- v
		}()
		// Statistics views keep their first snapshot for the transaction unless cleared.
		waiting := "select pg_stat_clear_snapshot(); " +
			"select count(*) from pg_stat_activity where wait_event_type = 'Lock' and query like '%tpcc_delivery%'"
		for deadline := time.Now().Add(10 * time.Second); queryOne(t, conn, waiting) == "0"; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the second delivery did not wait for the first")
			}
		}
		if _, err := conn.Exec(context.Background(), "commit").ReadAll(); err != nil {
			t.Fatal(err)
		}
		if got := <-second; first != "10" || got != "10" {
			t.Errorf("deliveries delivered %s and %s districts, want 10 and 10", first, got)
		}
		after, _ := strconv.Atoi(queryOne(t, conn, "select count(*) from new_order"))
		if before-after != 20 {
			t.Errorf("new_order rows %d -> %d, want 20 fewer", before, after)
		}
		if n := queryOne(t, conn, "select count(*) from orders o join new_order n on (n.no_w_id, n.no_d_id, n.no_o_id) = (o.o_w_id, o.o_d_id, o.o_id) where o_carrier_id is not null"); n != "0" {
			t.Errorf("%s delivered orders still have new_order rows", n)
		}
	})

	t.Run("stock_level", func(t *testing.T) {
		for _, threshold := range []string{"10", "15", "20"} {
			want := queryOne(t, conn, `select count(distinct s_i_id) from order_line, stock, district
				where d_w_id = 1 and d_id = 8 and ol_w_id = 1 and ol_d_id = 8
				and ol_o_id between d_next_o_id - 20 and d_next_o_id - 1
				and s_w_id = 1 and s_i_id = ol_i_id and s_quantity < `+threshold)
			if got := mustCall(t, conn, "tpcc_stock_level", "1", "8", threshold); got != want {
				t.Errorf("threshold %s: %s items, want %s", threshold, got, want)
			}
		}
	})

	t.Run("stock_level/no-district", func(t *testing.T) {
		_, err := call(conn, "tpcc_stock_level", "1", "11", "15")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "P0002" || !strings.Contains(pgErr.Message, "no district 11 in warehouse 1") {
			t.Errorf("err = %v, want SQLSTATE P0002 naming district 11", err)
		}
	})
}

// runMix runs n of each transaction with random inputs on one warehouse, as a
// client would, and returns how many new orders rolled back on purpose.
func runMix(t *testing.T, conn *pgconn.PgConn, n int) int {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	between := func(lo, hi int) string { return strconv.Itoa(lo + rng.IntN(hi-lo+1)) }
	rollbacks := 0
	for i := range n {
		lines := 5 + rng.IntN(11)
		items := make([]string, lines)
		supply := make([]string, lines)
		quantities := make([]string, lines)
		for l := range lines {
			items[l], supply[l], quantities[l] = between(1, tpcc.Items), "1", between(1, 10)
			for slices.Contains(items[:l], items[l]) { // tpcc_new_order takes each item once
				items[l] = between(1, tpcc.Items)
			}
		}
		if i%50 == 0 {
			items[lines-1] = strconv.Itoa(tpcc.Items + 1)
		}
		_, err := call(conn, "tpcc_new_order", "1", between(1, 10), between(1, 3000),
			"{"+strings.Join(items, ",")+"}", "{"+strings.Join(supply, ",")+"}", "{"+strings.Join(quantities, ",")+"}")
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == tpcc.SQLStateRollback:
			rollbacks++
		case err != nil:
			t.Fatalf("tpcc_new_order: %v", err)
		}

		c, last := between(1, 3000), ""
		if i%2 == 0 {
			c, last = "0", tpcc.LastName(rng.IntN(1000))
		}
		amount := between(1, 5000) + "." + between(10, 99)
		// Every district has every last name (clause 4.3.3.1), so none is missing.
		mustCall(t, conn, "tpcc_payment", "1", between(1, 10), "1", between(1, 10), c, last, amount)
		if i%10 == 0 {
			mustCall(t, conn, "tpcc_delivery", "1", between(1, 10))
			mustCall(t, conn, "tpcc_order_status", "1", between(1, 10), between(1, 3000), "")
			mustCall(t, conn, "tpcc_stock_level", "1", between(1, 10), between(10, 20))
		}
	}
	return rollbacks
}
