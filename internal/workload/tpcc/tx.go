package tpcc

import (
	"slices"
	"strconv"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
)

// Transaction names, in the order of Scripts' result.
const (
	NewOrder    = "new-order"
	Payment     = "payment"
	OrderStatus = "order-status"
	Delivery    = "delivery"
	StockLevel  = "stock-level"
)

// Modes: where the transactions' logic runs.
const (
	ModeServer    = "server"     // PL/pgSQL functions, one round trip each (HammerDB's stored procedures)
	ModeClientSQL = "client-sql" // prepared statements in an explicit transaction
)

// RunOptions choose how the five transactions are driven.
type RunOptions struct {
	Warehouses int
	Mode       string // ModeServer (default) or ModeClientSQL
	// Mix is "spec" (45/43/4/4/4 per deck of 100, the specification's minimums) or
	// "hammerdb" (10/10/1/1/1 per deck of 23, as HammerDB's virtual users draw).
	Mix string
	// AllWarehouses lets each client work across its share of all warehouses instead
	// of one home warehouse (HammerDB's pg_allwarehouse).
	AllWarehouses bool
	// KeyingThinking adds the specification's keying and mean thinking times
	// (clause 5.2.5.7), which cap throughput at 12.86 tpmC per warehouse.
	KeyingThinking bool
	// Isolation is the transactions' isolation level ("" for the server's default).
	Isolation string
	// Dist, when set, draws customer numbers and items from it instead of from
	// clause 2.1.6's NURand, to model other access skews.
	Dist *keydist.Spec
}

// NURand's run-time constants (clause 2.1.6): C for C_LAST must differ from the load's
// by a delta the specification allows; the others are free.
const (
	cRunLast = CLoadLast + 70
	cRunID   = 259
	cRunItem = 7911
)

var _ = func() bool {
	if !CRunLastOK(cRunLast) {
		panic("tpcc: C_RUN for C_LAST breaks clause 2.1.6.1")
	}
	return true
}()

// lastNames holds LastName(0..999), so a transaction allocates none.
var lastNames = func() [][]byte {
	n := make([][]byte, 1000)
	for i := range n {
		n[i] = []byte(LastName(i))
	}
	return n
}()

// Scripts builds the five transactions for the driver.
func Scripts(opt RunOptions) ([]*driver.Script, error) {
	if opt.Warehouses < 1 {
		return nil, engine.FieldErrorf("warehouses", "must be at least 1, got %d", opt.Warehouses)
	}
	weights := map[string][5]int{"spec": {45, 43, 4, 4, 4}, "": {45, 43, 4, 4, 4}, "hammerdb": {10, 10, 1, 1, 1}}
	w, ok := weights[opt.Mix]
	if !ok {
		return nil, engine.FieldErrorf("mix", "%q is unknown: use spec or hammerdb", opt.Mix)
	}
	begin := "BEGIN"
	switch opt.Isolation {
	case "":
	case "read-committed", "repeatable-read", "serializable":
		begin = "BEGIN ISOLATION LEVEL " + map[string]string{"read-committed": "READ COMMITTED", "repeatable-read": "REPEATABLE READ", "serializable": "SERIALIZABLE"}[opt.Isolation]
	default:
		return nil, engine.FieldErrorf("isolation", "%q is unknown: use read-committed, repeatable-read or serializable", opt.Isolation)
	}
	t := &terminals{warehouses: int64(opt.Warehouses), all: opt.AllWarehouses, begin: []byte(begin)}
	if opt.Dist != nil {
		var err error
		if t.customers, err = keydist.New(*opt.Dist, 1, CustomersPerDistrict); err != nil {
			return nil, err
		}
		if t.items, err = keydist.New(*opt.Dist, 1, Items); err != nil {
			return nil, err
		}
	}
	var scripts []*driver.Script
	switch opt.Mode {
	case ModeServer, "":
		if opt.Isolation != "" {
			return nil, engine.FieldErrorf("isolation", "applies to client-sql mode; in server mode set default_transaction_isolation on the server or in the DSN (options=-c default_transaction_isolation=...)")
		}
		scripts = t.serverScripts()
	case ModeClientSQL:
		scripts = t.clientScripts()
	default:
		return nil, engine.FieldErrorf("mode", "%q is unknown: use server or client-sql", opt.Mode)
	}
	// Clause 5.2.5.7: keying time, and mean think time, per transaction type.
	keying := [5]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	think := [5]time.Duration{12 * time.Second, 12 * time.Second, 10 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, s := range scripts {
		s.Weight = w[i]
		if opt.KeyingThinking {
			s.Keying, s.ThinkMean = keying[i], think[i]
		}
	}
	return scripts, nil
}

// terminals draws each transaction's input as clause 2 says.
type terminals struct {
	warehouses int64
	all        bool
	begin      []byte
	// customers and items replace NURand when set (RunOptions.Dist).
	customers, items *keydist.Dist
}

// customer draws a customer number (clause 2.1.6: NURand(1023, 1, 3000)).
func (t *terminals) customer(s *driver.Session) int64 {
	if t.customers != nil {
		return s.Draw(t.customers)
	}
	return nurand(s, 1023, 1, CustomersPerDistrict, cRunID)
}

// item draws an item number (clause 2.1.6: NURand(8191, 1, 100000)).
func (t *terminals) item(s *driver.Session) int64 {
	if t.items != nil {
		return s.Draw(t.items)
	}
	return nurand(s, 8191, 1, Items, cRunItem)
}

// home is the warehouse of this transaction: the client's own, or one of its share
// of all warehouses.
func (t *terminals) home(s *driver.Session) int64 {
	c, n := int64(s.Client()), int64(s.Clients())
	if !t.all || c >= t.warehouses {
		return c%t.warehouses + 1
	}
	share := (t.warehouses-(c+1))/n + 1
	return c + 1 + s.Uniform(0, share-1)*n
}

// district is the client's fixed district for Stock-Level (clause 2.8.1.1): clients
// sharing a warehouse get different ones.
func (t *terminals) district(s *driver.Session) int64 {
	return (int64(s.Client())/t.warehouses)%DistrictsPerWarehouse + 1
}

// other is a warehouse other than w, for remote order lines and payments.
func (t *terminals) other(s *driver.Session, w int64) int64 {
	if t.warehouses == 1 {
		return w
	}
	o := s.Uniform(1, t.warehouses-1)
	if o >= w {
		o++
	}
	return o
}

func nurand(s *driver.Session, a, x, y, c int64) int64 {
	return ((s.Uniform(0, a)|s.Uniform(x, y))+c)%(y-x+1) + x
}

// orderLine is one line of a New-Order's input.
type orderLine struct{ item, supply, quantity int64 }

// newOrderInput draws clause 2.4.1's input; the last item is unused in 1% of them,
// which makes the transaction roll back.
func (t *terminals) newOrderInput(s *driver.Session, lines []orderLine) (w, d, c int64, _ []orderLine) {
	w = t.home(s)
	d = s.Uniform(1, DistrictsPerWarehouse)
	c = t.customer(s)
	n := s.Uniform(5, 15)
	rollback := s.Uniform(1, 100) == 1
	lines = lines[:0]
	for i := range n {
		l := orderLine{item: t.item(s), supply: w, quantity: s.Uniform(1, 10)}
		// An item is drawn again when the order has it already, so that each stock
		// row is updated once per order: the functions update all of an order's
		// stock rows in one statement, which touches a row once however often it is
		// named. Clause 2.4.1.5 neither asks for nor rules out repeats.
		// A steep --dist could make redrawing loop for long: after a few tries the
		// next unused item number is taken instead.
		for try := 0; slices.ContainsFunc(lines, func(o orderLine) bool { return o.item == l.item }); try++ {
			if try < 8 {
				l.item = t.item(s)
			} else {
				l.item = l.item%Items + 1
			}
		}
		if i == n-1 && rollback {
			l.item = Items + 1
		}
		if t.warehouses > 1 && s.Uniform(1, 100) == 1 {
			l.supply = t.other(s, w)
		}
		lines = append(lines, l)
	}
	// Stock rows are locked in item order, so concurrent New-Orders do not deadlock.
	slices.SortFunc(lines, func(a, b orderLine) int { return int(a.item - b.item) })
	return w, d, c, lines
}

// paymentInput draws clause 2.5.1's input: 15% of payments are for a customer of
// another warehouse, 60% name the customer by last name (c = 0 then).
func (t *terminals) paymentInput(s *driver.Session) (w, d, cw, cd, c int64, last []byte, cents int64) {
	w = t.home(s)
	d = s.Uniform(1, DistrictsPerWarehouse)
	cw, cd = w, d
	if t.warehouses > 1 && s.Uniform(1, 100) > 85 {
		cw, cd = t.other(s, w), s.Uniform(1, DistrictsPerWarehouse)
	}
	if s.Uniform(1, 100) <= 60 {
		last = lastNames[nurand(s, 255, 0, 999, cRunLast)]
	} else {
		c = t.customer(s)
	}
	return w, d, cw, cd, c, last, s.Uniform(100, 500000)
}

// appendCents writes an amount in cents as a decimal.
func appendCents(b []byte, cents int64) []byte {
	if cents < 0 {
		b = append(b, '-')
		cents = -cents
	}
	b = strconv.AppendInt(b, cents/100, 10)
	b = append(b, '.', byte('0'+cents%100/10), byte('0'+cents%10))
	return b
}

// parseCents reads a numeric's text form ("12.5", "-3.07", "7") as cents.
func parseCents(v []byte) int64 {
	var n, frac int64
	digits := -1
	neg := false
	for _, ch := range v {
		switch {
		case ch == '-':
			neg = true
		case ch == '.':
			digits = 0
		case ch >= '0' && ch <= '9':
			if digits < 0 {
				n = n*10 + int64(ch-'0')
			} else if digits < 2 {
				frac = frac*10 + int64(ch-'0')
				digits++
			}
		}
	}
	for ; digits < 2; digits++ {
		frac *= 10
	}
	if neg {
		return -(n*100 + frac)
	}
	return n*100 + frac
}

// appendIntArray writes an int[] literal: {1,2,3}.
func appendIntArray(b []byte, n int, v func(int) int64) []byte {
	b = append(b, '{')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v(i), 10)
	}
	return append(b, '}')
}

// serverScripts call the PL/pgSQL functions that procs.go creates.
func (t *terminals) serverScripts() []*driver.Script {
	newOrder := &driver.Script{Name: NewOrder, RollbackState: SQLStateRollback,
		Statements: []string{"select tpcc_new_order($1, $2, $3, $4, $5, $6)"},
		Program: func(s *driver.Session) error {
			var buf [15]orderLine
			w, d, c, ls := t.newOrderInput(s, buf[:0])
			s.Int(w).Int(d).Int(c)
			s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].item }))
			s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].supply }))
			s.EndParam(appendIntArray(s.Param(), len(ls), func(i int) int64 { return ls[i].quantity }))
			return s.Exec(0)
		}}
	payment := &driver.Script{Name: Payment,
		Statements: []string{"select tpcc_payment($1, $2, $3, $4, $5, $6, $7)"},
		Program: func(s *driver.Session) error {
			w, d, cw, cd, c, last, cents := t.paymentInput(s)
			s.Int(w).Int(d).Int(cw).Int(cd).Int(c)
			if last == nil {
				s.Null()
			} else {
				s.Text(last)
			}
			s.EndParam(appendCents(s.Param(), cents))
			return s.Exec(0)
		}}
	orderStatus := &driver.Script{Name: OrderStatus,
		Statements: []string{"select tpcc_order_status($1, $2, $3, $4)"},
		Program: func(s *driver.Session) error {
			w, d := t.home(s), s.Uniform(1, DistrictsPerWarehouse)
			s.Int(w).Int(d)
			if s.Uniform(1, 100) <= 60 {
				s.Int(0).Text(lastNames[nurand(s, 255, 0, 999, cRunLast)])
			} else {
				s.Int(t.customer(s)).Null()
			}
			return s.Exec(0)
		}}
	delivery := &driver.Script{Name: Delivery,
		Statements: []string{"select tpcc_delivery($1, $2)"},
		Program: func(s *driver.Session) error {
			return s.Int(t.home(s)).Int(s.Uniform(1, 10)).Exec(0)
		}}
	stockLevel := &driver.Script{Name: StockLevel,
		Statements: []string{"select tpcc_stock_level($1, $2, $3)"},
		Program: func(s *driver.Session) error {
			return s.Int(t.home(s)).Int(t.district(s)).Int(s.Uniform(10, 20)).Exec(0)
		}}
	return []*driver.Script{newOrder, payment, orderStatus, delivery, stockLevel}
}
