package sbtpcc

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// Transaction names: tpcc_run.lua's functions.
const (
	NewOrder    = "new_order"
	Payment     = "payment"
	OrderStatus = "orderstatus"
	Delivery    = "delivery"
	StockLevel  = "stocklevel"
	Purge       = "purge"
)

// RunOptions are tpcc_run.lua's options.
type RunOptions struct {
	Tables, Scale int
	Schema        string // "public" if ""
	// TrxLevel is --trx_level: RR (its default), RC or SER.
	TrxLevel string
	// Purge adds the purge transaction to the mix (--enable_purge).
	Purge bool
	// Splittable starts transactions as READ WRITE or READ ONLY (--splittable).
	Splittable bool
	// Dist, when set, draws customers and items from it instead of NURand.
	Dist *keydist.Spec
}

var levels = map[string]string{"RR": "REPEATABLE READ", "RC": "READ COMMITTED", "SER": "SERIALIZABLE"}

// Check refuses options tpcc.lua would not run with.
func (o RunOptions) Check() error {
	if o.Tables < 1 || o.Tables > MaxTables {
		return engine.FieldErrorf("tables", "must be between 1 and %d, got %d", MaxTables, o.Tables)
	}
	if o.Scale < 1 || o.Scale > MaxScale {
		return engine.FieldErrorf("scale", "must be between 1 and %d, got %d", MaxScale, o.Scale)
	}
	if _, ok := levels[o.TrxLevel]; !ok {
		return engine.FieldErrorf("trx_level", "%q is unknown: use RR, RC or SER", o.TrxLevel)
	}
	return checkSchema(o.schema())
}

func (o RunOptions) schema() string {
	if o.Schema == "" {
		return "public"
	}
	return o.Schema
}

// retryStates: sysbench's PostgreSQL driver restarts an event after a deadlock,
// a serialization failure (both retried by the driver anyway) or a unique
// violation.
var retryStates = []string{"23505"}

// Scripts are the transactions in tpcc.lua's mix: each event draws
// uniform(1, 23), or (1, 24) with purge: 10 new orders, 10 payments, and one of
// each other.
func Scripts(o RunOptions) ([]*driver.Script, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	t := &terminal{o: o, tables: make([][len(bases)]string, o.Tables+1)}
	for n := 1; n <= o.Tables; n++ {
		for i, b := range bases {
			t.tables[n][i] = names(o.schema()).t(b, n)
		}
	}
	level := levels[o.TrxLevel]
	t.begin, t.beginRO = []byte("BEGIN ISOLATION LEVEL "+level), []byte("BEGIN ISOLATION LEVEL "+level)
	if o.Splittable {
		t.begin = []byte("START TRANSACTION ISOLATION LEVEL " + level + ", READ WRITE")
		t.beginRO = []byte("START TRANSACTION ISOLATION LEVEL " + level + ", READ ONLY")
	}
	if o.Dist != nil {
		var err error
		if t.customers, err = keydist.New(*o.Dist, 1, CustomersPerDistrict); err != nil {
			return nil, err
		}
		if t.items, err = keydist.New(*o.Dist, 1, Items); err != nil {
			return nil, err
		}
	}
	script := func(name string, weight int, p func(*driver.Session) error) *driver.Script {
		return &driver.Script{Name: name, Weight: weight, Program: p, RetryStates: retryStates}
	}
	scripts := []*driver.Script{
		script(NewOrder, 10, t.newOrder), script(Payment, 10, t.payment), script(OrderStatus, 1, t.orderStatus),
		script(Delivery, 1, t.delivery), script(StockLevel, 1, t.stockLevel),
	}
	if o.Purge {
		scripts = append(scripts, script(Purge, 1, t.purge))
	}
	return scripts, nil
}

// Indexes into a table set's names, in bases' order.
const (
	warehouse = iota
	district
	customer
	history
	orders
	newOrders
	orderLine
	stock
	item
)

// terminal sends tpcc_run.lua's statements: each one alone, as a query with its
// values written in, waiting for its answer, as sysbench's con:query does.
type terminal struct {
	o                RunOptions
	tables           [][len(bases)]string // [set][table]: qualified names
	begin, beginRO   []byte
	customers, items *keydist.Dist
}

var (
	sqlCommit   = []byte("COMMIT")
	sqlRollback = []byte("ROLLBACK")
)

// tx is one transaction's statements: its table set and a buffer to write them.
type tx struct {
	s   *driver.Session
	t   []string
	buf []byte
}

func (t *terminal) tx(s *driver.Session) *tx {
	return &tx{s: s, t: t.tables[s.Uniform(1, int64(t.o.Tables))][:], buf: make([]byte, 0, 1024)}
}

// query sends one statement, format filled with args.
func (x *tx) query(format string, args ...any) error {
	x.buf = fmt.Appendf(x.buf[:0], format, args...)
	return x.s.Query(x.buf)
}

func (x *tx) float(row, col int) float64 {
	v, _ := strconv.ParseFloat(string(x.s.Value(row, col)), 64)
	return v
}

// nurand is tpcc_common.lua's NURand(A, x, y), whose C each sysbench thread draws
// once: here a function of the client.
func nurand(s *driver.Session, a, x, y int64) int64 {
	c := int64(load.Mix(uint64(s.Client())<<16^uint64(a)) % uint64(a+1))
	return ((s.Uniform(0, a)|s.Uniform(x, y))+c)%(y-x+1) + x
}

func (t *terminal) customer(s *driver.Session) int64 {
	if t.customers != nil {
		return s.Draw(t.customers)
	}
	return nurand(s, 1023, 1, CustomersPerDistrict)
}

func (t *terminal) item(s *driver.Session) int64 {
	if t.items != nil {
		return s.Draw(t.items)
	}
	return nurand(s, 8191, 1, Items)
}

// lastName is Lastname(NURand(255, 0, 999)).
func lastName(s *driver.Session) string { return tpcc.LastName(int(nurand(s, 255, 0, 999))) }

// other is other_ware: as tpcc_run.lua writes it, its loop ends when the draw
// equals the home warehouse, so it is always the home one.
func other(home int64) int64 { return home }

// byName is the row tpcc_run.lua reads last, fetching rows 1 to namecnt/2 + 1
// with namecnt rounded up to even when above 1: its 0-based index.
func byName(namecnt int64, rows int) int {
	if namecnt > 1 && namecnt%2 == 1 {
		namecnt++
	}
	return min(int(namecnt/2), rows-1)
}

// quote writes a text literal's contents.
func quote(v []byte) string { return string(bytes.ReplaceAll(v, []byte("'"), []byte("''"))) }

// rollback ends a transaction that found no row where tpcc_run.lua expects one,
// as it does: ROLLBACK, counted as an ignored error.
func (x *tx) rollback() error {
	if err := x.s.Query(sqlRollback); err != nil {
		return err
	}
	return driver.ErrRollback
}

func (t *terminal) newOrder(s *driver.Session) error {
	x := t.tx(s)
	w, d, c := s.Uniform(1, int64(t.o.Scale)), s.Uniform(1, Districts), t.customer(s)
	lines := s.Uniform(5, 15)
	rbk := s.Uniform(1, 100)
	var items, supply, qty [15]int64
	allLocal := 1
	for i := range lines {
		items[i] = t.item(s)
		if i+1 == lines-1 && rbk == 1 {
			items[i] = -1 // an unused item: the order rolls back
		}
		supply[i] = w
		if s.Uniform(1, 100) == 1 {
			supply[i], allLocal = other(w), 0
		}
		qty[i] = s.Uniform(1, 10)
	}
	if err := s.Query(t.begin); err != nil {
		return err
	}
	if err := x.query("SELECT c_discount, c_last, c_credit, w_tax FROM %s, %s WHERE w_id = %d AND c_w_id = w_id AND c_d_id = %d AND c_id = %d",
		x.t[customer], x.t[warehouse], w, d, c); err != nil {
		return err
	}
	if s.Rows() == 0 {
		return x.rollback()
	}
	discount, wTax := x.float(0, 0), x.float(0, 3)
	if err := x.query("SELECT d_next_o_id, d_tax FROM %s WHERE d_w_id = %d AND d_id = %d FOR UPDATE", x.t[district], w, d); err != nil {
		return err
	}
	if s.Rows() == 0 {
		return x.rollback()
	}
	o, dTax := s.IntValue(0, 0), x.float(0, 1)
	if err := x.query("UPDATE %s SET d_next_o_id = %d WHERE d_id = %d AND d_w_id= %d", x.t[district], o+1, d, w); err != nil {
		return err
	}
	if err := x.query("INSERT INTO %s (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (%d,%d,%d,%d,NOW(),%d,%d)",
		x.t[orders], o, d, w, c, lines, allLocal); err != nil {
		return err
	}
	if err := x.query("INSERT INTO %s (no_o_id, no_d_id, no_w_id) VALUES (%d,%d,%d)", x.t[newOrders], o, d, w); err != nil {
		return err
	}
	for i := range lines {
		if err := x.query("SELECT i_price, i_name, i_data FROM %s WHERE i_id = %d", x.t[item], items[i]); err != nil {
			return err
		}
		if s.Rows() == 0 {
			return x.rollback()
		}
		price := x.float(0, 0)
		if err := x.query("SELECT s_quantity, s_data, s_dist_%02d s_dist FROM %s WHERE s_i_id = %d AND s_w_id= %d FOR UPDATE",
			d, x.t[stock], items[i], supply[i]); err != nil {
			return err
		}
		if s.Rows() == 0 {
			return x.rollback()
		}
		q, dist := s.IntValue(0, 0), quote(s.Value(0, 2))
		if q > qty[i] {
			q -= qty[i]
		} else {
			q = q - qty[i] + 91
		}
		if err := x.query("UPDATE %s SET s_quantity = %d WHERE s_i_id = %d AND s_w_id= %d", x.t[stock], q, items[i], supply[i]); err != nil {
			return err
		}
		// tpcc_run.lua writes the amount with %d: truncated to whole units.
		amount := int64(float64(qty[i]) * price * (1 + wTax + dTax) * (1 - discount))
		if err := x.query("INSERT INTO %s (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (%d,%d,%d,%d,%d,%d,%d,%d,'%s')",
			x.t[orderLine], o, d, w, i+1, items[i], supply[i], qty[i], amount, dist); err != nil {
			return err
		}
	}
	return s.Query(sqlCommit)
}

func (t *terminal) payment(s *driver.Session) error {
	x := t.tx(s)
	w, d, c := s.Uniform(1, int64(t.o.Scale)), s.Uniform(1, Districts), t.customer(s)
	h := s.Uniform(1, 5000)
	last := lastName(s)
	named := s.Uniform(1, 100) <= 60
	cw, cd := w, d
	if s.Uniform(1, 100) > 85 {
		cw, cd = other(w), s.Uniform(1, Districts)
	}
	if err := s.Query(t.begin); err != nil {
		return err
	}
	if err := x.query("UPDATE %s SET w_ytd = w_ytd + %d WHERE w_id = %d", x.t[warehouse], h, w); err != nil {
		return err
	}
	if err := x.query("SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM %s WHERE w_id = %d", x.t[warehouse], w); err != nil {
		return err
	}
	if s.Rows() == 0 {
		return x.rollback()
	}
	wName := string(s.Value(0, 5))
	if err := x.query("UPDATE %s SET d_ytd = d_ytd + %d WHERE d_w_id = %d AND d_id= %d", x.t[district], h, w, d); err != nil {
		return err
	}
	if err := x.query("SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM %s WHERE d_w_id = %d AND d_id = %d", x.t[district], w, d); err != nil {
		return err
	}
	if s.Rows() == 0 {
		return x.rollback()
	}
	dName := string(s.Value(0, 5))
	if named {
		if err := x.query("SELECT count(c_id) namecnt FROM %s WHERE c_w_id = %d AND c_d_id= %d AND c_last='%s'", x.t[customer], cw, cd, last); err != nil {
			return err
		}
		n := s.IntValue(0, 0)
		if err := x.query("SELECT c_id FROM %s WHERE c_w_id = %d AND c_d_id= %d AND c_last='%s' ORDER BY c_first", x.t[customer], cw, cd, last); err != nil {
			return err
		}
		if s.Rows() == 0 {
			return x.rollback()
		}
		c = s.IntValue(byName(n, s.Rows()), 0)
	}
	if err := x.query("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_since FROM %s WHERE c_w_id = %d AND c_d_id= %d AND c_id=%d FOR UPDATE",
		x.t[customer], cw, cd, c); err != nil {
		return err
	}
	if s.Rows() == 0 {
		return x.rollback()
	}
	bad := string(s.Value(0, 9)) == "BC"
	balance, ytd := x.float(0, 12)-float64(h), x.float(0, 13)+float64(h)
	if bad {
		if err := x.query("SELECT c_data FROM %s WHERE c_w_id = %d AND c_d_id=%d AND c_id= %d", x.t[customer], cw, cd, c); err != nil {
			return err
		}
		data := fmt.Sprintf("| %4d %2d %4d %2d %4d $%7.2f %12d %24s", c, cd, cw, d, w, float64(h), time.Now().Unix(), s.Value(0, 0))
		data = data[:min(len(data), 500)]
		if err := x.query("UPDATE %s SET c_balance=%f, c_ytd_payment=%f, c_data='%s' WHERE c_w_id = %d AND c_d_id=%d AND c_id=%d",
			x.t[customer], balance, ytd, quote([]byte(data)), cw, cd, c); err != nil {
			return err
		}
	} else if err := x.query("UPDATE %s SET c_balance=%f, c_ytd_payment=%f WHERE c_w_id = %d AND c_d_id=%d AND c_id=%d",
		x.t[customer], balance, ytd, cw, cd, c); err != nil {
		return err
	}
	hData := quote(fmt.Appendf(nil, "%10s %10s   ", wName, dName))
	if err := x.query("INSERT INTO %s (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (%d,%d,%d,%d,%d,NOW(),%d,'%s')",
		x.t[history], cd, cw, c, d, w, h, hData); err != nil {
		return err
	}
	return s.Query(sqlCommit)
}

func (t *terminal) orderStatus(s *driver.Session) error {
	x := t.tx(s)
	w, d, c := s.Uniform(1, int64(t.o.Scale)), s.Uniform(1, Districts), t.customer(s)
	last := lastName(s)
	named := s.Uniform(1, 100) <= 60
	if err := s.Query(t.beginRO); err != nil {
		return err
	}
	if named {
		if err := x.query("SELECT count(c_id) namecnt FROM %s WHERE c_w_id = %d AND c_d_id= %d AND c_last='%s'", x.t[customer], w, d, last); err != nil {
			return err
		}
		n := s.IntValue(0, 0)
		if err := x.query("SELECT c_balance, c_first, c_middle, c_id FROM %s WHERE c_w_id = %d AND c_d_id= %d AND c_last='%s' ORDER BY c_first", x.t[customer], w, d, last); err != nil {
			return err
		}
		if s.Rows() == 0 {
			return x.rollback()
		}
		c = s.IntValue(byName(n, s.Rows()), 3)
	} else if err := x.query("SELECT c_balance, c_first, c_middle, c_last FROM %s WHERE c_w_id = %d AND c_d_id=%d AND c_id=%d", x.t[customer], w, d, c); err != nil {
		return err
	}
	if err := x.query("SELECT o_id, o_carrier_id, o_entry_d FROM %s WHERE o_w_id = %d AND o_d_id = %d AND o_c_id = %d ORDER BY o_id DESC", x.t[orders], w, d, c); err != nil {
		return err
	}
	// As tpcc_run.lua fills its format: the district number where the order's
	// would go, so the lines read are those of order d.
	if err := x.query("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM %s WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", x.t[orderLine], w, d, d); err != nil {
		return err
	}
	return s.Query(sqlCommit)
}

func (t *terminal) delivery(s *driver.Session) error {
	x := t.tx(s)
	w, carrier := s.Uniform(1, int64(t.o.Scale)), s.Uniform(1, 10)
	if err := s.Query(t.begin); err != nil {
		return err
	}
	for d := 1; d <= Districts; d++ {
		if err := x.query("SELECT no_o_id FROM %s WHERE no_d_id = %d AND no_w_id = %d ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE", x.t[newOrders], d, w); err != nil {
			return err
		}
		if s.Rows() == 0 {
			continue
		}
		o := s.IntValue(0, 0)
		if err := x.query("DELETE FROM %s WHERE no_o_id = %d AND no_d_id = %d AND no_w_id = %d", x.t[newOrders], o, d, w); err != nil {
			return err
		}
		if err := x.query("SELECT o_c_id FROM %s WHERE o_id = %d AND o_d_id = %d AND o_w_id = %d", x.t[orders], o, d, w); err != nil {
			return err
		}
		if s.Rows() == 0 {
			return x.rollback()
		}
		c := s.IntValue(0, 0)
		if err := x.query("UPDATE %s SET o_carrier_id = %d WHERE o_id = %d AND o_d_id = %d AND o_w_id = %d", x.t[orders], carrier, o, d, w); err != nil {
			return err
		}
		if err := x.query("UPDATE %s SET ol_delivery_d = NOW() WHERE ol_o_id = %d AND ol_d_id = %d AND ol_w_id = %d", x.t[orderLine], o, d, w); err != nil {
			return err
		}
		if err := x.query("SELECT SUM(ol_amount) sm FROM %s WHERE ol_o_id = %d AND ol_d_id = %d AND ol_w_id = %d", x.t[orderLine], o, d, w); err != nil {
			return err
		}
		sum := x.float(0, 0)
		if err := x.query("UPDATE %s SET c_balance = c_balance + %f, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = %d AND c_d_id = %d AND c_w_id = %d",
			x.t[customer], sum, c, d, w); err != nil {
			return err
		}
	}
	return s.Query(sqlCommit)
}

func (t *terminal) stockLevel(s *driver.Session) error {
	x := t.tx(s)
	w, d, level := s.Uniform(1, int64(t.o.Scale)), s.Uniform(1, Districts), s.Uniform(10, 20)
	if err := s.Query(t.beginRO); err != nil {
		return err
	}
	if err := x.query("SELECT d_next_o_id FROM %s WHERE d_id = %d AND d_w_id= %d", x.t[district], d, w); err != nil {
		return err
	}
	if s.Rows() == 0 {
		return x.rollback()
	}
	o := s.IntValue(0, 0)
	if err := x.query("SELECT COUNT(DISTINCT (s_i_id)) FROM %s, %s WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id < %d AND ol_o_id >= %d AND s_w_id= %d AND s_i_id=ol_i_id AND s_quantity < %d",
		x.t[orderLine], x.t[stock], w, d, o, o-20, w, level); err != nil {
		return err
	}
	return s.Query(sqlCommit)
}

// purge removes, in ten transactions, a delivered order of a customer with more
// than one since the load, its lines, and ten history rows of its district: what
// keeps tpcc_run.lua's data from growing without bound.
func (t *terminal) purge(s *driver.Session) error {
	for range 10 {
		x := t.tx(s)
		w, d := s.Uniform(1, int64(t.o.Scale)), s.Uniform(1, Districts)
		if err := s.Query(t.begin); err != nil {
			return err
		}
		if err := x.query("SELECT min(no_o_id) mo FROM %s WHERE no_w_id = %d AND no_d_id = %d", x.t[newOrders], w, d); err != nil {
			return err
		}
		if s.Rows() > 0 && s.Value(0, 0) != nil {
			mo := s.IntValue(0, 0)
			if err := x.query("SELECT o_id FROM %[1]s o, (SELECT o_c_id,o_w_id,o_d_id,count(distinct o_id) FROM %[1]s WHERE o_w_id=%[2]d AND o_d_id=%[3]d AND o_id > 2100 AND o_id < %[4]d GROUP BY o_c_id,o_d_id,o_w_id having count( distinct o_id) > 1 limit 1) t WHERE t.o_w_id=o.o_w_id and t.o_d_id=o.o_d_id and t.o_c_id=o.o_c_id limit 1",
				x.t[orders], w, d, mo); err != nil {
				return err
			}
			if s.Rows() > 0 {
				del := s.IntValue(0, 0)
				if err := x.query("DELETE FROM %s where ol_w_id=%d AND ol_d_id=%d AND ol_o_id=%d", x.t[orderLine], w, d, del); err != nil {
					return err
				}
				if err := x.query("DELETE FROM %s where o_w_id=%d AND o_d_id=%d and o_id=%d", x.t[orders], w, d, del); err != nil {
					return err
				}
				if err := x.query("DELETE FROM %[1]s where ctid IN (SELECT ctid FROM %[1]s WHERE h_w_id=%[2]d AND h_d_id=%[3]d LIMIT 10)", x.t[history], w, d); err != nil {
					return err
				}
			}
		}
		if err := s.Query(sqlCommit); err != nil {
			return err
		}
	}
	return nil
}
