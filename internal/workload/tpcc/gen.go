package tpcc

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// The initial database of TPC-C clause 4.3.3.1, written in PostgreSQL's binary COPY
// format, row by row in each table's column order (see tableDDL).
//
// Every value is a pure function of the seed, the table, the warehouse and the row:
// each unit of rows (a district of orders, a thousand customers, ...) draws from its
// own generator seeded with (seed, table, warehouse, unit), so that any worker can
// generate any batch, a partition holds the same rows as the unpartitioned table,
// and warehouse 1 is the same whether 1 or 100 warehouses are loaded. Sources'
// batches are units, never crossing one.

// defaultSeed is used when LoadOptions.Seed is 0.
const defaultSeed = 0x7470_6363_5f31_3233 // "tpcc_123"

// tableID separates the generator streams of the tables.
type tableID uint64

const (
	tItem tableID = iota + 1
	tWarehouse
	tDistrict
	tCustomer
	tHistory
	tStock
	tOrders
	tOrderLine
)

// Rows per warehouse and rows per generator unit (and batch).
const (
	customersPerWarehouse = DistrictsPerWarehouse * CustomersPerDistrict
	ordersPerWarehouse    = DistrictsPerWarehouse * OrdersPerDistrict
	newOrdersPerWarehouse = DistrictsPerWarehouse * NewOrdersPerDistrict
	customerUnit          = 1000
	historyUnit           = 3000
	stockUnit             = 1000
	itemUnit              = 1000
	orderUnit             = OrdersPerDistrict // O_C_ID is a permutation per district
	orderLineUnit         = 1000              // orders
	// lineSlots is how many rows order_line's Source counts per order: the mean of
	// O_OL_CNT, so that progress counts about as many rows as are loaded, while
	// batches still hold whole orders.
	lineSlots = 10
)

// gen draws one unit's random values. It lives on the generating goroutine's stack,
// so generating a batch allocates nothing beyond the batch buffer.
type gen struct{ pcg rand.PCG }

func newGen(seed uint64, t tableID, w int, unit int64) gen {
	var g gen
	g.pcg.Seed(load.Mix(seed^uint64(t)<<56), load.Mix(uint64(w)<<32^uint64(unit)))
	return g
}

// between returns a uniform integer in [lo, hi] (the bias of the multiply-shift
// reduction is below 2^-40 for these ranges).
func (g *gen) between(lo, hi int) int {
	v, _ := bits.Mul64(g.pcg.Uint64(), uint64(hi-lo+1))
	return lo + int(v)
}

// percent reports true with probability pct/100.
func (g *gen) percent(pct int) bool { return g.between(1, 100) <= pct }

// alphabet holds the characters of random a-strings (clause 4.3.2.2), padded to 64
// entries so that indexing needs no bounds check.
var alphabet = [64]byte([]byte("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz01"))

// chars appends n random characters drawn from the first size entries of alphabet.
// Each 64-bit draw yields per characters as the digits of a base-size fraction;
// per is chosen so that the last digit's bias stays below 10^-4.
func (g *gen) chars(buf []byte, n int, offset, size uint64, per int) []byte {
	buf = slices.Grow(buf, n)
	s := buf[len(buf) : len(buf)+n]
	for i := 0; i < n; {
		x := g.pcg.Uint64()
		for k := min(n-i, per); k > 0; k-- {
			var c uint64
			c, x = bits.Mul64(x, size)
			s[i] = alphabet[(offset+c)&63]
			i++
		}
	}
	return buf[:len(buf)+n]
}

// alnum appends n random alphanumeric characters.
func (g *gen) alnum(buf []byte, n int) []byte { return g.chars(buf, n, 0, 62, 8) }

// digits appends n random decimal digits.
func (g *gen) digits(buf []byte, n int) []byte { return g.chars(buf, n, 0, 10, 14) }

// letters appends n random capital letters.
func (g *gen) letters(buf []byte, n int) []byte { return g.chars(buf, n, 10, 26, 10) }

// Binary COPY fields: a 4-byte length, then the value in the type's send format.

func fieldCount(buf []byte, n int) []byte { return append(buf, 0, byte(n)) }

func int4(buf []byte, v int) []byte {
	return binary.BigEndian.AppendUint32(append(buf, 0, 0, 0, 4), uint32(v))
}

func int2(buf []byte, v int) []byte {
	return binary.BigEndian.AppendUint16(append(buf, 0, 0, 0, 2), uint16(v))
}

func null(buf []byte) []byte { return append(buf, 0xff, 0xff, 0xff, 0xff) }

func text(buf []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint32(buf, uint32(len(s))), s...)
}

// astring appends a random a-string field of a length within [lo, hi] (clause 4.3.2.2).
func (g *gen) astring(buf []byte, lo, hi int) []byte {
	n := g.between(lo, hi)
	return g.alnum(binary.BigEndian.AppendUint32(buf, uint32(n)), n)
}

// data appends I_DATA or S_DATA: a random a-string [26 .. 50] that for 10% of the
// rows holds "ORIGINAL" at a random position (clause 4.3.3.1).
func (g *gen) data(buf []byte) []byte {
	n := g.between(26, 50)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	start := len(buf)
	buf = g.alnum(buf, n)
	if g.percent(10) {
		copy(buf[start+g.between(0, n-8):], "ORIGINAL")
	}
	return buf
}

// zip appends a zip code: 4 random digits and "11111" (clause 4.3.2.7).
func (g *gen) zip(buf []byte) []byte {
	return append(g.digits(append(buf, 0, 0, 0, 9), 4), "11111"...)
}

// address appends street 1, street 2, city, state and zip (clause 4.3.3.1).
func (g *gen) address(buf []byte) []byte {
	buf = g.astring(buf, 10, 20)
	buf = g.astring(buf, 10, 20)
	buf = g.astring(buf, 10, 20)
	buf = g.letters(append(buf, 0, 0, 0, 2), 2)
	return g.zip(buf)
}

// nurand is NURand(A, x, y) of clause 2.1.6.
func (g *gen) nurand(a, x, y, c int) int {
	return ((g.between(0, a)|g.between(x, y))+c)%(y-x+1) + x
}

// Constant fields, encoded once.
var (
	numZero2        = load.AppendNumeric(nil, 0, 2)
	numTen          = load.AppendNumeric(nil, 1000, 2)
	numMinusTen     = load.AppendNumeric(nil, -1000, 2)
	numCreditLim    = load.AppendNumeric(nil, 5_000_000, 2)
	numDistrictYTD  = load.AppendNumeric(nil, 3_000_000, 2)
	numWarehouseYTD = load.AppendNumeric(nil, 30_000_000, 2)
)

// postgresEpoch is where PostgreSQL's binary timestamps count from.
var postgresEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// population generates the tables' rows for one load.
type population struct {
	seed uint64
	now  []byte // the load time as a timestamptz field: C_SINCE, H_DATE, O_ENTRY_D, OL_DELIVERY_D
}

func newPopulation(seed uint64, now time.Time) *population {
	if seed == 0 {
		seed = defaultSeed
	}
	us := now.Sub(postgresEpoch).Microseconds()
	return &population{seed: seed, now: binary.BigEndian.AppendUint64([]byte{0, 0, 0, 8}, uint64(us))}
}

// sources returns every table's data, in tableDDL's order, for w warehouses.
func (p *population) sources(w int) []*load.Source {
	n := int64(w)
	all := make([]int, w)
	for i := range all {
		all[i] = i + 1
	}
	src := func(table string, rows, batch int64, gen func([]byte, int64, int64) []byte) *load.Source {
		return &load.Source{Table: table, Rows: rows, BatchRows: batch, Append: gen, Binary: true}
	}
	return []*load.Source{
		src("customer", n*customersPerWarehouse, customerUnit, p.customers),
		src("district", n*DistrictsPerWarehouse, 1000, p.districts),
		src("history", n*customersPerWarehouse, historyUnit, p.history),
		src("item", Items, itemUnit, p.items),
		src("warehouse", n, 1000, p.warehouses),
		src("stock", n*StockPerWarehouse, stockUnit, p.stock),
		src("new_order", n*newOrdersPerWarehouse, newOrdersPerWarehouse, p.newOrders),
		src("orders", n*ordersPerWarehouse, orderUnit, p.orders),
		p.orderLines("order_line", all),
	}
}

// orderLines is the Source of order_line rows for the warehouses ws, to load the
// table or one of its partitions. A row of the Source is one of lineSlots slots per
// order; see lineSlots.
func (p *population) orderLines(table string, ws []int) *load.Source {
	const perWarehouse = ordersPerWarehouse * lineSlots
	return &load.Source{
		Table: table, Rows: int64(len(ws)) * perWarehouse, BatchRows: orderLineUnit * lineSlots, Binary: true,
		Append: func(buf []byte, first, last int64) []byte {
			w := ws[first/perWarehouse]
			first, last = first%perWarehouse/lineSlots, (last-1)%perWarehouse/lineSlots+1
			return p.orderLinesOf(buf, w, first, last)
		},
	}
}

// warehouses generates WAREHOUSE rows [first, last): row r is warehouse r+1.
func (p *population) warehouses(buf []byte, first, last int64) []byte {
	for r := first; r < last; r++ {
		w := int(r) + 1
		g := newGen(p.seed, tWarehouse, w, 0)
		buf = fieldCount(buf, 9)
		buf = int4(buf, w)
		buf = g.astring(buf, 6, 10)
		buf = g.address(buf)
		buf = load.AppendNumeric(buf, int64(g.between(0, 2000)), 4)
		buf = append(buf, numWarehouseYTD...)
	}
	return buf
}

// districts generates DISTRICT rows [first, last), ten per warehouse.
func (p *population) districts(buf []byte, first, last int64) []byte {
	for r := first; r < last; r++ {
		w, d := int(r/DistrictsPerWarehouse)+1, int(r%DistrictsPerWarehouse)+1
		g := newGen(p.seed, tDistrict, w, int64(d))
		buf = fieldCount(buf, 11)
		buf = int4(buf, w)
		buf = int4(buf, OrdersPerDistrict+1)
		buf = int2(buf, d)
		buf = append(buf, numDistrictYTD...)
		buf = load.AppendNumeric(buf, int64(g.between(0, 2000)), 4)
		buf = g.astring(buf, 6, 10)
		buf = g.address(buf)
	}
	return buf
}

// customers generates CUSTOMER rows [first, last), a unit of customerUnit rows.
func (p *population) customers(buf []byte, first, last int64) []byte {
	w := int(first/customersPerWarehouse) + 1
	g := newGen(p.seed, tCustomer, w, first%customersPerWarehouse/customerUnit)
	for r := first; r < last; r++ {
		local := int(r % customersPerWarehouse)
		d, c := local/CustomersPerDistrict+1, local%CustomersPerDistrict+1
		buf = fieldCount(buf, 21)
		buf = append(buf, p.now...)
		buf = int4(buf, c)
		buf = int4(buf, w)
		buf = int2(buf, d)
		buf = int2(buf, 1) // c_payment_cnt
		buf = int2(buf, 0) // c_delivery_cnt
		buf = g.astring(buf, 8, 16)
		buf = text(buf, "OE")
		// C_LAST: the first 1,000 customers take each name once, the others NURand's.
		num := c - 1
		if c > 1000 {
			num = g.nurand(255, 0, 999, CLoadLast)
		}
		at := len(buf)
		buf = appendLastName(append(buf, 0, 0, 0, 0), num)
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		buf = g.address(buf)
		buf = g.digits(append(buf, 0, 0, 0, 16), 16)
		if g.percent(10) {
			buf = text(buf, "BC")
		} else {
			buf = text(buf, "GC")
		}
		buf = append(buf, numCreditLim...)
		buf = load.AppendNumeric(buf, int64(g.between(0, 5000)), 4)
		buf = append(buf, numMinusTen...)
		buf = append(buf, numTen...) // c_ytd_payment
		buf = g.astring(buf, 300, 500)
	}
	return buf
}

// history generates HISTORY rows [first, last): one per customer.
func (p *population) history(buf []byte, first, last int64) []byte {
	w := int(first/customersPerWarehouse) + 1
	g := newGen(p.seed, tHistory, w, first%customersPerWarehouse/historyUnit)
	for r := first; r < last; r++ {
		local := int(r % customersPerWarehouse)
		d, c := local/CustomersPerDistrict+1, local%CustomersPerDistrict+1
		buf = fieldCount(buf, 8)
		buf = append(buf, p.now...)
		buf = int4(buf, c)
		buf = int4(buf, w)
		buf = int4(buf, w)
		buf = int2(buf, d)
		buf = int2(buf, d)
		buf = append(buf, numTen...)
		buf = g.astring(buf, 12, 24)
	}
	return buf
}

// items generates ITEM rows [first, last).
func (p *population) items(buf []byte, first, last int64) []byte {
	g := newGen(p.seed, tItem, 0, first/itemUnit)
	for r := first; r < last; r++ {
		buf = fieldCount(buf, 5)
		buf = int4(buf, int(r)+1)
		buf = int4(buf, g.between(1, 10000))
		buf = g.astring(buf, 14, 24)
		buf = load.AppendNumeric(buf, int64(g.between(100, 10000)), 2)
		buf = g.data(buf)
	}
	return buf
}

// stock generates STOCK rows [first, last).
func (p *population) stock(buf []byte, first, last int64) []byte {
	w := int(first/StockPerWarehouse) + 1
	g := newGen(p.seed, tStock, w, first%StockPerWarehouse/stockUnit)
	for r := first; r < last; r++ {
		buf = fieldCount(buf, 17)
		buf = int4(buf, int(r%StockPerWarehouse)+1)
		buf = int4(buf, w)
		buf = int4(buf, 0) // s_ytd
		buf = int2(buf, g.between(10, 100))
		buf = int2(buf, 0) // s_order_cnt
		buf = int2(buf, 0) // s_remote_cnt
		for range DistrictsPerWarehouse {
			buf = g.alnum(append(buf, 0, 0, 0, 24), 24)
		}
		buf = g.data(buf)
	}
	return buf
}

// newOrders generates NEW_ORDER rows [first, last): orders 2101..3000 of each district.
func (p *population) newOrders(buf []byte, first, last int64) []byte {
	for r := first; r < last; r++ {
		local := int(r % newOrdersPerWarehouse)
		buf = fieldCount(buf, 3)
		buf = int4(buf, int(r/newOrdersPerWarehouse)+1)
		buf = int4(buf, FirstNewOrder+local%NewOrdersPerDistrict)
		buf = int2(buf, local/NewOrdersPerDistrict+1)
	}
	return buf
}

// lineCount is O_OL_CNT of an order, random within [5 .. 15]. ORDERS and ORDER_LINE
// are generated apart, so it comes from a hash of the order rather than a stream.
func (p *population) lineCount(w, d, o int) int {
	h := load.Mix(load.Mix(load.Mix(p.seed^uint64(tOrderLine)<<56)^uint64(w)) ^ uint64(d)<<16 ^ uint64(o))
	return 5 + int(h%11)
}

// orders generates ORDERS rows [first, last), one district per unit.
func (p *population) orders(buf []byte, first, last int64) []byte {
	w := int(first/ordersPerWarehouse) + 1
	unit := first % ordersPerWarehouse / orderUnit
	d := int(unit) + 1
	g := newGen(p.seed, tOrders, w, unit)
	// O_C_ID is taken in turn from a random permutation of the customers.
	var perm [CustomersPerDistrict]uint16
	for i := range perm {
		perm[i] = uint16(i + 1)
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := g.between(0, i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for r := first; r < last; r++ {
		o := int(r%OrdersPerDistrict) + 1
		buf = fieldCount(buf, 8)
		buf = append(buf, p.now...)
		buf = int4(buf, o)
		buf = int4(buf, w)
		buf = int4(buf, int(perm[o-1]))
		buf = int2(buf, d)
		if o < FirstNewOrder {
			buf = int2(buf, g.between(1, 10))
		} else {
			buf = null(buf)
		}
		buf = int2(buf, p.lineCount(w, d, o))
		buf = int2(buf, 1) // o_all_local
	}
	return buf
}

// orderLinesOf generates the ORDER_LINE rows of warehouse w's orders [first, last),
// numbered from 0 across its districts, a unit of orderLineUnit orders.
func (p *population) orderLinesOf(buf []byte, w int, first, last int64) []byte {
	g := newGen(p.seed, tOrderLine, w, first/orderLineUnit)
	for r := first; r < last; r++ {
		d, o := int(r/OrdersPerDistrict)+1, int(r%OrdersPerDistrict)+1
		delivered := o < FirstNewOrder
		for n := range p.lineCount(w, d, o) {
			buf = fieldCount(buf, 10)
			if delivered {
				buf = append(buf, p.now...)
			} else {
				buf = null(buf)
			}
			buf = int4(buf, o)
			buf = int4(buf, w)
			buf = int4(buf, g.between(1, Items))
			buf = int4(buf, w) // ol_supply_w_id
			buf = int2(buf, d)
			buf = int2(buf, n+1)
			buf = int2(buf, 5) // ol_quantity
			if delivered {
				buf = append(buf, numZero2...)
			} else {
				buf = load.AppendNumeric(buf, int64(g.between(1, 999_999)), 2)
			}
			buf = g.alnum(append(buf, 0, 0, 0, 24), 24)
		}
	}
	return buf
}
