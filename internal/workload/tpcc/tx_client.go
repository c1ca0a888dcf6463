package tpcc

import (
	"strconv"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
)

// Client-side SQL: the same transactions as the PL/pgSQL functions, as prepared
// statements the client sends inside an explicit transaction, deciding from each
// result what to send next. Statements that only differ in the values the client
// computes are batched where TPC-C allows (order lines in one INSERT from arrays), so
// a New-Order costs about 17 round trips rather than 40.

var (
	sqlCommit   = []byte("COMMIT")
	sqlRollback = []byte("ROLLBACK")
)

// byLastName selects the customers of a district with a last name, ordered by first
// name; clause 2.5.2.2 takes the one at position ceil(n/2).
const byLastName = "select c_id from customer where c_w_id = $1 and c_d_id = $2 and c_last = $3 order by c_first"

func (t *terminals) clientScripts() []*driver.Script {
	const (
		noCustomer = iota
		noDistrict
		noOrder
		noNewOrder
		noStock
		noLines
	)
	newOrder := &driver.Script{Name: NewOrder, Statements: []string{
		noCustomer: "select c_discount, c_last, c_credit, w_tax from customer, warehouse where w_id = $1 and c_w_id = w_id and c_d_id = $2 and c_id = $3",
		noDistrict: "update district set d_next_o_id = d_next_o_id + 1 where d_w_id = $1 and d_id = $2 returning d_next_o_id - 1, d_tax",
		noOrder:    "insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) values ($1, $2, $3, $4, current_timestamp, $5, $6)",
		noNewOrder: "insert into new_order (no_o_id, no_d_id, no_w_id) values ($1, $2, $3)",
		// The item's price and data and the stock update in one round trip; no row
		// means an unused item number.
		noStock: `update stock set
				s_quantity = case when s_quantity - $3 >= 10 then s_quantity - $3 else s_quantity - $3 + 91 end,
				s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $4
			from item where i_id = $1 and s_i_id = $1 and s_w_id = $2
			returning i_price, i_name, i_data, s_quantity, s_data,
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
		if err := s.Query(t.begin); err != nil {
			return err
		}
		if err := s.Int(w).Int(d).Int(c).Exec(noCustomer); err != nil {
			return err
		}
		if err := s.Int(w).Int(d).Exec(noDistrict); err != nil {
			return err
		}
		o := s.IntValue(0, 0)
		allLocal := int64(1)
		for _, l := range ls {
			if l.supply != w {
				allLocal = 0
			}
		}
		if err := s.Int(o).Int(d).Int(w).Int(c).Int(int64(len(ls))).Int(allLocal).Exec(noOrder); err != nil {
			return err
		}
		if err := s.Int(o).Int(d).Int(w).Exec(noNewOrder); err != nil {
			return err
		}
		for i, l := range ls {
			remote := int64(0)
			if l.supply != w {
				remote = 1
			}
			if err := s.Int(l.item).Int(l.supply).Int(l.quantity).Int(remote).Int(d).Exec(noStock); err != nil {
				return err
			}
			if s.Rows() == 0 { // an unused item: the order is rolled back (clause 2.4.2.3)
				if err := s.Query(sqlRollback); err != nil {
					return err
				}
				return driver.ErrRollback
			}
			amounts[i] = parseCents(s.Value(0, 0)) * l.quantity
			copy(dist[i][:], s.Value(0, 5))
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
		if err := s.Exec(noLines); err != nil {
			return err
		}
		return s.Query(sqlCommit)
	}}

	const (
		payWarehouse = iota
		payDistrict
		payByName
		payCustomer
		payHistory
	)
	payment := &driver.Script{Name: Payment, Statements: []string{
		payWarehouse: "update warehouse set w_ytd = w_ytd + $2 where w_id = $1 returning w_name, w_street_1, w_street_2, w_city, w_state, w_zip",
		payDistrict:  "update district set d_ytd = d_ytd + $3 where d_w_id = $1 and d_id = $2 returning d_name, d_street_1, d_street_2, d_city, d_state, d_zip",
		payByName:    byLastName,
		// Bad-credit customers keep a log of payments in c_data (clause 2.5.2.2).
		payCustomer: `update customer set c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, c_payment_cnt = c_payment_cnt + 1,
				c_data = case when c_credit = 'BC' then substr(c_id || ' ' || c_d_id || ' ' || c_w_id || ' ' || $5::int || ' ' || $6::int || ' ' || $4::numeric || ' | ' || c_data, 1, 500) else c_data end
			where c_w_id = $1 and c_d_id = $2 and c_id = $3
			returning c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance`,
		payHistory: "insert into history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) values ($1, $2, $3, $4, $5, current_timestamp, $6, $7)",
	}, Program: func(s *driver.Session) error {
		w, d, cw, cd, c, last, cents := t.paymentInput(s)
		var data [24]byte
		if err := s.Query(t.begin); err != nil {
			return err
		}
		if err := s.EndParam(appendCents(s.Int(w).Param(), cents)).Exec(payWarehouse); err != nil {
			return err
		}
		h := append(data[:0], s.Value(0, 0)...)
		h = append(h, "    "...)
		if err := s.EndParam(appendCents(s.Int(w).Int(d).Param(), cents)).Exec(payDistrict); err != nil {
			return err
		}
		h = append(h, s.Value(0, 0)...)
		if last != nil {
			if err := s.Int(cw).Int(cd).Text(last).Exec(payByName); err != nil {
				return err
			}
			if s.Rows() == 0 {
				return s.Query(sqlCommit) // no such customer here; nothing to pay
			}
			c = s.IntValue((s.Rows()-1)/2, 0)
		}
		if err := s.Int(cw).Int(cd).Int(c).EndParam(appendCents(s.Param(), cents)).Int(d).Int(w).Exec(payCustomer); err != nil {
			return err
		}
		if err := s.Int(cd).Int(cw).Int(c).Int(d).Int(w).EndParam(appendCents(s.Param(), cents)).Text(h).Exec(payHistory); err != nil {
			return err
		}
		return s.Query(sqlCommit)
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
		if err := s.Query(t.begin); err != nil {
			return err
		}
		var c int64
		if s.Uniform(1, 100) <= 60 {
			if err := s.Int(w).Int(d).Text(lastNames[nurand(s, 255, 0, 999, cRunLast)]).Exec(osByName); err != nil {
				return err
			}
			if s.Rows() == 0 {
				return s.Query(sqlCommit)
			}
			c = s.IntValue((s.Rows()-1)/2, 0)
		} else {
			c = nurand(s, 1023, 1, CustomersPerDistrict, cRunID)
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

	const (
		dlNewOrder = iota
		dlOrder
		dlLines
		dlCustomer
	)
	delivery := &driver.Script{Name: Delivery, Statements: []string{
		dlNewOrder: `delete from new_order where no_w_id = $1 and no_d_id = $2
			and no_o_id = (select min(no_o_id) from new_order where no_w_id = $1 and no_d_id = $2) returning no_o_id`,
		dlOrder:    "update orders set o_carrier_id = $4 where o_w_id = $1 and o_d_id = $2 and o_id = $3 returning o_c_id",
		dlLines:    "with l as (update order_line set ol_delivery_d = current_timestamp where ol_w_id = $1 and ol_d_id = $2 and ol_o_id = $3 returning ol_amount) select coalesce(sum(ol_amount), 0) from l",
		dlCustomer: "update customer set c_balance = c_balance + $4, c_delivery_cnt = c_delivery_cnt + 1 where c_w_id = $1 and c_d_id = $2 and c_id = $3",
	}, Program: func(s *driver.Session) error {
		w, carrier := t.home(s), s.Uniform(1, 10)
		if err := s.Query(t.begin); err != nil {
			return err
		}
		var amount [32]byte
		for d := int64(1); d <= DistrictsPerWarehouse; d++ {
			if err := s.Int(w).Int(d).Exec(dlNewOrder); err != nil {
				return err
			}
			if s.Rows() == 0 {
				continue // no undelivered order in this district (clause 2.7.4.2)
			}
			o := s.IntValue(0, 0)
			if err := s.Int(w).Int(d).Int(o).Int(carrier).Exec(dlOrder); err != nil {
				return err
			}
			c := s.IntValue(0, 0)
			if err := s.Int(w).Int(d).Int(o).Exec(dlLines); err != nil {
				return err
			}
			sum := append(amount[:0], s.Value(0, 0)...)
			if err := s.Int(w).Int(d).Int(c).Text(sum).Exec(dlCustomer); err != nil {
				return err
			}
		}
		return s.Query(sqlCommit)
	}}

	const (
		slNextOrder = iota
		slCount
	)
	stockLevel := &driver.Script{Name: StockLevel, Statements: []string{
		slNextOrder: "select d_next_o_id from district where d_w_id = $1 and d_id = $2",
		slCount: `select count(distinct s_i_id) from order_line, stock
			where ol_w_id = $1 and ol_d_id = $2 and ol_o_id < $3 and ol_o_id >= $3 - 20
			and s_w_id = $1 and s_i_id = ol_i_id and s_quantity < $4`,
	}, Program: func(s *driver.Session) error {
		w, d := t.home(s), t.district(s)
		if err := s.Query(t.begin); err != nil {
			return err
		}
		if err := s.Int(w).Int(d).Exec(slNextOrder); err != nil {
			return err
		}
		if err := s.Int(w).Int(d).Int(s.IntValue(0, 0)).Int(s.Uniform(10, 20)).Exec(slCount); err != nil {
			return err
		}
		return s.Query(sqlCommit)
	}}
	return []*driver.Script{newOrder, payment, orderStatus, delivery, stockLevel}
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

var _ = strconv.Itoa
