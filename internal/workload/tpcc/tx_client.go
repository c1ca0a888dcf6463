package tpcc

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
)

// Client-side SQL: the same transactions as the PL/pgSQL functions, as prepared
// statements the client sends inside an explicit transaction, deciding from each
// result what to send next. Statements run on sets where TPC-C allows (all of an
// order's stock rows in one UPDATE, its lines in one INSERT), and a statement whose
// answer the client does not need before going on travels with the next one (BEGIN
// with the first statement, the last statement with COMMIT): a New-Order costs three
// round trips, where one per row and per step would be about 40.

var (
	sqlCommit   = []byte("COMMIT")
	sqlRollback = []byte("ROLLBACK")
)

// byLastName selects the customers of a district with a last name, ordered by first
// name; clause 2.5.2.2 takes the one at position ceil(n/2).
const byLastName = "select c_id from customer where c_w_id = $1 and c_d_id = $2 and c_last = $3 order by c_first"

func (t *terminals) clientScripts() []*driver.Script {
	const (
		noDistrict = iota
		noOrder
		noNewOrder
		noStock
		noLines
	)
	newOrder := &driver.Script{Name: NewOrder, Statements: []string{
		noDistrict: `with d as (update district set d_next_o_id = d_next_o_id + 1 where d_w_id = $1 and d_id = $2
				returning d_next_o_id - 1 as o_id, d_tax)
			select o_id, d_tax, w_tax, c_discount, c_last, c_credit from d, warehouse, customer
			where w_id = $1 and c_w_id = $1 and c_d_id = $2 and c_id = $3`,
		noOrder:    "insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) values ($1, $2, $3, $4, current_timestamp, $5, $6)",
		noNewOrder: "insert into new_order (no_o_id, no_d_id, no_w_id) values ($1, $2, $3)",
		// The items' prices and data and the stock updates in one statement, locking
		// stock rows in (supply warehouse, item) order; a line without a row is an
		// unused item number. $4 is the home warehouse, $5 the district.
		noStock: `update stock set
				s_quantity = case when s_quantity - l.q >= 10 then s_quantity - l.q else s_quantity - l.q + 91 end,
				s_ytd = s_ytd + l.q, s_order_cnt = least(s_order_cnt + 1, 32767),
				s_remote_cnt = least(s_remote_cnt + case when l.s = $4 then 0 else 1 end, 32767)
			from (select l.n, l.i, l.s, l.q, i_price, i_name, i_data
				from unnest($1::int[], $2::int[], $3::int[]) with ordinality as l(i, s, q, n) join item on i_id = l.i
				order by l.s, l.i) l
			where s_i_id = l.i and s_w_id = l.s
			returning l.n, l.i_price, l.i_name, l.i_data, s_quantity, s_data,
				case $5::int when 1 then s_dist_01 when 2 then s_dist_02 when 3 then s_dist_03 when 4 then s_dist_04
					when 5 then s_dist_05 when 6 then s_dist_06 when 7 then s_dist_07 when 8 then s_dist_08
					when 9 then s_dist_09 else s_dist_10 end`,
		noLines: `insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)
			select $1, $2, $3, n, i, s, q, a, d from unnest($4::int[], $5::int[], $6::int[], $7::int[], $8::numeric[], $9::text[]) as l(n, i, s, q, a, d)`,
	}, Program: func(s *driver.Session) error {
		var buf [15]orderLine
		var amounts [15]int64
		var dist [15][24]byte
		w, d, c, ls := t.newOrderInput(s, buf[:0])
		if err := s.SendQuery(t.begin).Int(w).Int(d).Int(c).Exec(noDistrict); err != nil {
			return err
		}
		if s.Rows() != 1 {
			return noData("new-order: no district %d, warehouse or customer %d in warehouse %d", d, c, w)
		}
		o := s.IntValue(0, 0)
		allLocal := int64(1)
		for _, l := range ls {
			if l.supply != w {
				allLocal = 0
			}
		}
		s.Int(o).Int(d).Int(w).Int(c).Int(int64(len(ls))).Int(allLocal).Send(noOrder)
		s.Int(o).Int(d).Int(w).Send(noNewOrder)
		s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].item }))
		s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].supply }))
		s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].quantity }))
		if err := s.Int(w).Int(d).Exec(noStock); err != nil {
			return err
		}
		if s.Rows() < len(ls) { // an unused item: the order is rolled back (clause 2.4.2.3)
			if err := s.Query(sqlRollback); err != nil {
				return err
			}
			return driver.ErrRollback
		}
		for r := range s.Rows() {
			i := s.IntValue(r, 0) - 1
			if i < 0 || int(i) >= len(ls) {
				return noData("new-order: the stock update returned line %d of %d", i+1, len(ls))
			}
			amounts[i] = parseCents(s.Value(r, 1)) * ls[i].quantity
			copy(dist[i][:], s.Value(r, 6))
		}
		s.Int(o).Int(d).Int(w)
		s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return int64(i + 1) }))
		s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].item }))
		s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].supply }))
		s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].quantity }))
		b := append(s.Param(), '{')
		for i := range ls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCents(b, amounts[i])
		}
		s.EndParam(append(b, '}'))
		b = append(s.Param(), '{')
		for i := range ls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendQuoted(b, dist[i][:])
		}
		s.EndParam(append(b, '}'))
		return s.Send(noLines).Query(sqlCommit)
	}}

	const (
		payWarehouse = iota
		payByName
		payCustomer
		payHistory
	)
	payment := &driver.Script{Name: Payment, Statements: []string{
		// Warehouse, then district, as the functions lock them.
		payWarehouse: `with w as (update warehouse set w_ytd = w_ytd + $3 where w_id = $1
				returning w_name, w_street_1, w_street_2, w_city, w_state, w_zip)
			update district set d_ytd = d_ytd + $3 from w where d_w_id = $1 and d_id = $2
			returning w_name, w_street_1, w_street_2, w_city, w_state, w_zip,
				d_name, d_street_1, d_street_2, d_city, d_state, d_zip`,
		payByName: byLastName,
		// Bad-credit customers keep a log of payments in c_data (clause 2.5.2.2).
		payCustomer: `update customer set c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, c_payment_cnt = least(c_payment_cnt + 1, 32767),
				c_data = case when c_credit = 'BC' then substr(c_id || ' ' || c_d_id || ' ' || c_w_id || ' ' || $5::int || ' ' || $6::int || ' ' || $4::numeric || ' | ' || c_data, 1, 500) else c_data end
			where c_w_id = $1 and c_d_id = $2 and c_id = $3
			returning c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance`,
		payHistory: "insert into history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) values ($1, $2, $3, $4, $5, current_timestamp, $6, $7)",
	}, Program: func(s *driver.Session) error {
		w, d, cw, cd, c, last, cents := t.paymentInput(s)
		var data [24]byte
		if err := s.SendQuery(t.begin).Int(w).Int(d).EndParam(appendCents(s.Param(), cents)).Exec(payWarehouse); err != nil {
			return err
		}
		if s.Rows() != 1 {
			return noData("payment: no warehouse %d or no district %d in it", w, d)
		}
		h := append(data[:0], s.Value(0, 0)...)
		h = append(h, "    "...)
		h = append(h, s.Value(0, 6)...)
		if last != nil {
			if err := s.Int(cw).Int(cd).Text(last).Exec(payByName); err != nil {
				return err
			}
			if s.Rows() == 0 {
				return noData("payment: no customer named %s in warehouse %d district %d", last, cw, cd)
			}
			c = s.IntValue((s.Rows()-1)/2, 0)
		}
		s.Int(cw).Int(cd).Int(c).EndParam(appendCents(s.Param(), cents)).Int(d).Int(w).Send(payCustomer)
		return s.Int(cd).Int(cw).Int(c).Int(d).Int(w).EndParam(appendCents(s.Param(), cents)).Text(h).Send(payHistory).Query(sqlCommit)
	}}

	const (
		osByName = iota
		osCustomer
		osOrder
		osLines
	)
	orderStatus := &driver.Script{Name: OrderStatus, Statements: []string{
		osByName:   byLastName,
		osCustomer: "select c_balance, c_first, c_middle, c_last from customer where c_w_id = $1 and c_d_id = $2 and c_id = $3",
		osOrder:    "select o_id, o_entry_d, o_carrier_id from orders where o_w_id = $1 and o_d_id = $2 and o_c_id = $3 order by o_id desc limit 1",
		osLines:    "select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d from order_line where ol_w_id = $1 and ol_d_id = $2 and ol_o_id = $3",
	}, Program: func(s *driver.Session) error {
		w, d := t.home(s), s.Uniform(1, DistrictsPerWarehouse)
		s.SendQuery(t.begin)
		var c int64
		if s.Uniform(1, 100) <= 60 {
			last := lastNames[nurand(s, 255, 0, 999, cRunLast)]
			if err := s.Int(w).Int(d).Text(last).Exec(osByName); err != nil {
				return err
			}
			if s.Rows() == 0 {
				return noData("order-status: no customer named %s in warehouse %d district %d", last, w, d)
			}
			c = s.IntValue((s.Rows()-1)/2, 0)
		} else {
			c = t.customer(s)
		}
		if err := s.Int(w).Int(d).Int(c).Exec(osCustomer); err != nil {
			return err
		}
		if err := s.Int(w).Int(d).Int(c).Exec(osOrder); err != nil {
			return err
		}
		if s.Rows() > 0 {
			if err := s.Int(w).Int(d).Int(s.IntValue(0, 0)).Exec(osLines); err != nil {
				return err
			}
		}
		return s.Query(sqlCommit)
	}}

	// One statement per district, as in the function: the oldest new order (FOR
	// UPDATE makes a concurrent Delivery wait and take the next), its order, lines
	// and customer.
	const dlDistrict = 0
	delivery := &driver.Script{Name: Delivery, Statements: []string{
		dlDistrict: `with n as (
				delete from new_order where no_w_id = $1 and no_d_id = $2
					and no_o_id = (select no_o_id from new_order where no_w_id = $1 and no_d_id = $2
						order by no_o_id limit 1 for update)
				returning no_o_id),
			o as (update orders set o_carrier_id = $3 from n where o_w_id = $1 and o_d_id = $2 and o_id = n.no_o_id
				returning o_id, o_c_id),
			l as (update order_line set ol_delivery_d = current_timestamp from o
				where ol_w_id = $1 and ol_d_id = $2 and ol_o_id = o.o_id returning ol_amount)
			update customer set c_balance = c_balance + (select coalesce(sum(ol_amount), 0) from l),
				c_delivery_cnt = c_delivery_cnt + 1
			from o where c_w_id = $1 and c_d_id = $2 and c_id = o.o_c_id
			returning o.o_id`,
	}, Program: func(s *driver.Session) error {
		w, carrier := t.home(s), s.Uniform(1, 10)
		s.SendQuery(t.begin)
		for d := int64(1); d <= DistrictsPerWarehouse; d++ {
			// A district without undelivered orders returns no row and is skipped
			// (clause 2.7.4.2).
			if err := s.Int(w).Int(d).Int(carrier).Exec(dlDistrict); err != nil {
				return err
			}
		}
		return s.Query(sqlCommit)
	}}

	// The district's next order number is read by the counting statement itself.
	const slCount = 0
	stockLevel := &driver.Script{Name: StockLevel, Statements: []string{
		slCount: `select count(distinct s_i_id) from district
			join order_line on ol_w_id = d_w_id and ol_d_id = d_id and ol_o_id >= d_next_o_id - 20 and ol_o_id < d_next_o_id
			join stock on s_w_id = d_w_id and s_i_id = ol_i_id
			where d_w_id = $1 and d_id = $2 and s_quantity < $3`,
	}, Program: func(s *driver.Session) error {
		w, d := t.home(s), t.district(s)
		if err := s.SendQuery(t.begin).Int(w).Int(d).Int(s.Uniform(10, 20)).Exec(slCount); err != nil {
			return err
		}
		return s.Query(sqlCommit)
	}}
	return []*driver.Script{newOrder, payment, orderStatus, delivery, stockLevel}
}

// noData is the error of a transaction that found a row missing which the loaded
// database always has: it fails the transaction, not the connection.
func noData(format string, a ...any) error {
	return &pgconn.PgError{Severity: "ERROR", Code: "P0002", Message: fmt.Sprintf(format, a...)}
}

// appendQuoted writes v as a double-quoted array element.
func appendQuoted(b, v []byte) []byte {
	b = append(b, '"')
	for _, ch := range v {
		if ch == '"' || ch == '\\' {
			b = append(b, '\\')
		}
		b = append(b, ch)
	}
	return append(b, '"')
}
