package sbtpcc

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcc"
)

// The rows of tpcc_common.lua's prepare, with its values: "name-" and five
// random letters, streets and cities of ten, zips "zip-" and five digits, texts
// of one random letter repeated, amounts that the checks balance (w_ytd 300,000,
// d_ytd 30,000, h_amount 10, c_balance -10, c_ytd_payment 10). They are written
// in PostgreSQL's binary COPY format, each table in its column order.
//
// Every value is a pure function of the seed, the table set, the table, the
// warehouse and the row: each unit of rows (a batch) draws from its own
// generator, so that any worker can generate any batch, and a batch never spans
// two warehouses.

// defaultSeed is used when LoadOptions.Seed is 0.
const defaultSeed = 0x7362_7470_6363_3031 // "sbtpcc01"

// tableID separates the generators of the tables.
type tableID uint64

const (
	tWarehouse tableID = iota + 1
	tDistrict
	tCustomer
	tHistory
	tOrders
	tNewOrders
	tOrderLine
	tStock
	tItem
)

// Rows per warehouse, and per batch.
const (
	customersPerWarehouse = Districts * CustomersPerDistrict
	ordersPerWarehouse    = Districts * OrdersPerDistrict
	newOrdersPerWarehouse = Districts * (OrdersPerDistrict - FirstNewOrder + 1)
	customerBatch         = 1000
	historyBatch          = 3000
	stockBatch            = 1000
	itemBatch             = 1000
	orderBatch            = OrdersPerDistrict // o_c_id is a permutation of a district's customers
	orderLineBatch        = 1000              // orders
	// lineSlots is how many rows order_line's Source counts per order: the mean of
	// o_ol_cnt, so that progress counts about the rows loaded while batches hold
	// whole orders.
	lineSlots = 10
)

// loadC is the C of NURand(255, 0, 999) that picks the last names of customers
// past the first 1,000; prepare draws its own per loading thread.
const loadC = 123

type gen struct{ pcg rand.PCG }

func newGen(seed uint64, set int, t tableID, w int, unit int64) gen {
	var g gen
	g.pcg.Seed(load.Mix(seed^uint64(t)<<56^uint64(set)<<40), load.Mix(uint64(w)<<32^uint64(unit)))
	return g
}

// between is sysbench.rand.uniform(lo, hi).
func (g *gen) between(lo, hi int) int {
	v, _ := bits.Mul64(g.pcg.Uint64(), uint64(hi-lo+1))
	return lo + int(v)
}

// unit is sysbench.rand.uniform_double(): [0, 1).
func (g *gen) unit() float64 { return float64(g.pcg.Uint64()>>11) * 0x1p-53 }

// cents is uniform_double()*max written with %f into a decimal(p,2) column: the
// value in hundredths, rounded.
func (g *gen) cents(max float64) int64 { return int64(math.Round(g.unit() * max * 100)) }

// chars appends n random characters of sysbench.rand.string: '@' is a lower-case
// letter, '#' a digit.
func (g *gen) chars(buf []byte, n int, first byte, size uint64) []byte {
	for i := 0; i < n; {
		x := g.pcg.Uint64()
		for k := min(n-i, 8); k > 0; k-- {
			var c uint64
			c, x = bits.Mul64(x, size)
			buf = append(buf, first+byte(c))
			i++
		}
	}
	return buf
}

func (g *gen) letters(buf []byte, n int) []byte { return g.chars(buf, n, 'a', 26) }
func (g *gen) digits(buf []byte, n int) []byte  { return g.chars(buf, n, '0', 10) }

// Binary COPY fields: a 4-byte length, then the value in its type's send format.

func fields(buf []byte, n int) []byte { return append(buf, 0, byte(n)) }

func int2(buf []byte, v int) []byte {
	return binary.BigEndian.AppendUint16(append(buf, 0, 0, 0, 2), uint16(v))
}

func int4(buf []byte, v int) []byte {
	return binary.BigEndian.AppendUint32(append(buf, 0, 0, 0, 4), uint32(v))
}

func int8(buf []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(buf, 0, 0, 0, 8), uint64(v))
}

func null(buf []byte) []byte { return append(buf, 0xff, 0xff, 0xff, 0xff) }

// text appends prefix and n random letters ("name-@@@@@").
func (g *gen) text(buf []byte, prefix string, n int) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(prefix)+n))
	return g.letters(append(buf, prefix...), n)
}

// repeated appends one random letter n times (n at most maxRun):
// string.rep(rand.string("@"), n).
func (g *gen) repeated(buf []byte, n int) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return append(buf, runs[g.between(0, 25)][:n]...)
}

// maxRun is the longest text of one letter: c_data's 500.
const maxRun = 500

// runs are each letter repeated maxRun times, copied from rather than appended a
// byte at a time.
var runs = func() (r [26][maxRun]byte) {
	for i := range r {
		for k := range r[i] {
			r[i][k] = byte('a' + i)
		}
	}
	return r
}()

// field appends s as a text field.
func field(buf []byte, s []byte) []byte {
	return append(binary.BigEndian.AppendUint32(buf, uint32(len(s))), s...)
}

// address appends street 1 and 2, city, state and zip.
func (g *gen) address(buf []byte) []byte {
	buf = g.text(buf, "street1-", 10)
	buf = g.text(buf, "street2-", 10)
	buf = g.text(buf, "city-", 10)
	buf = g.text(buf, "", 2)
	return g.digits(append(binary.BigEndian.AppendUint32(buf, 9), "zip-"...), 5)
}

// Constant fields, encoded once.
var (
	numZero         = load.AppendNumeric(nil, 0, 2)
	numTen          = load.AppendNumeric(nil, 1000, 2)
	numMinusTen     = load.AppendNumeric(nil, -1000, 2)
	numDistrictYTD  = load.AppendNumeric(nil, 3_000_000, 2)
	numWarehouseYTD = load.AppendNumeric(nil, 30_000_000, 2)
	numStockYTD     = load.AppendNumeric(nil, 0, 0)
	textOE          = field(nil, []byte("OE"))
	textGC          = field(nil, []byte("GC"))
	textBC          = field(nil, []byte("BC"))
)

// postgresEpoch is where binary timestamps count from.
var postgresEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// population generates one load's rows.
type population struct {
	seed  uint64
	scale int
	now   []byte // the server's localtimestamp at the load, as prepare's NOW() gives it
}

func newPopulation(seed uint64, scale int, now time.Time) *population {
	if seed == 0 {
		seed = defaultSeed
	}
	return &population{seed: seed, scale: scale, now: int8(nil, now.Sub(postgresEpoch).Microseconds())}
}

// sources are table set n's tables, each a Source whose batches never span two
// warehouses.
func (p *population) sources(s names, n int) []*load.Source {
	w := int64(p.scale)
	src := func(base string, rows, batch int64, gen func(buf []byte, set int, first, last int64) []byte) *load.Source {
		return &load.Source{Table: s.t(base, n), Rows: rows, BatchRows: batch, Binary: true,
			Append: func(buf []byte, first, last int64) []byte { return gen(buf, n, first, last) }}
	}
	return []*load.Source{
		src("warehouse", w, 1, p.warehouses),
		src("district", w*Districts, Districts, p.districts),
		src("customer", w*customersPerWarehouse, customerBatch, p.customers),
		src("history", w*customersPerWarehouse, historyBatch, p.history),
		src("orders", w*ordersPerWarehouse, orderBatch, p.orders),
		src("new_orders", w*newOrdersPerWarehouse, newOrdersPerWarehouse, p.newOrders),
		src("order_line", w*ordersPerWarehouse*lineSlots, orderLineBatch*lineSlots, p.orderLines),
		src("stock", w*StockPerWarehouse, stockBatch, p.stock),
		src("item", Items, itemBatch, p.items),
	}
}

// warehouses: row r is warehouse r+1.
func (p *population) warehouses(buf []byte, set int, first, last int64) []byte {
	for r := first; r < last; r++ {
		g := newGen(p.seed, set, tWarehouse, int(r)+1, 0)
		buf = fields(buf, 9)
		buf = int2(buf, int(r)+1)
		buf = g.text(buf, "name-", 5)
		buf = g.address(buf)
		buf = load.AppendNumeric(buf, g.cents(0.2), 2)
		buf = append(buf, numWarehouseYTD...)
	}
	return buf
}

func (p *population) districts(buf []byte, set int, first, last int64) []byte {
	for r := first; r < last; r++ {
		w, d := int(r/Districts)+1, int(r%Districts)+1
		g := newGen(p.seed, set, tDistrict, w, int64(d))
		buf = fields(buf, 11)
		buf = int2(buf, d)
		buf = int2(buf, w)
		buf = g.text(buf, "name-", 5)
		buf = g.address(buf)
		buf = load.AppendNumeric(buf, g.cents(0.2), 2)
		buf = append(buf, numDistrictYTD...)
		buf = int4(buf, OrdersPerDistrict+1)
	}
	return buf
}

// lastName appends c_last: the first 1,000 customers of a district take each
// name once, the others NURand(255, 0, 999)'s.
func (g *gen) lastName(buf []byte, c int) []byte {
	num := c - 1
	if c > 1000 {
		num = ((g.between(0, 255) | g.between(0, 999)) + loadC) % 1000
	}
	return field(buf, []byte(tpcc.LastName(num)))
}

func (p *population) customers(buf []byte, set int, first, last int64) []byte {
	w := int(first/customersPerWarehouse) + 1
	g := newGen(p.seed, set, tCustomer, w, first%customersPerWarehouse/customerBatch)
	for r := first; r < last; r++ {
		local := int(r % customersPerWarehouse)
		d, c := local/CustomersPerDistrict+1, local%CustomersPerDistrict+1
		buf = fields(buf, 21)
		buf = int4(buf, c)
		buf = int2(buf, d)
		buf = int2(buf, w)
		buf = g.text(buf, "first-", g.between(2, 10))
		buf = append(buf, textOE...)
		buf = g.lastName(buf, c)
		buf = g.address(buf)
		buf = g.digits(binary.BigEndian.AppendUint32(buf, 16), 16)
		buf = append(buf, p.now...)
		if g.between(1, 100) > 10 {
			buf = append(buf, textGC...)
		} else {
			buf = append(buf, textBC...)
		}
		buf = int8(buf, 50000)
		buf = load.AppendNumeric(buf, g.cents(0.5), 2)
		buf = append(buf, numMinusTen...)
		buf = append(buf, numTen...)
		buf = int2(buf, 1) // c_payment_cnt
		buf = int2(buf, 0) // c_delivery_cnt
		buf = g.repeated(buf, g.between(300, 500))
	}
	return buf
}

// history: one row per customer, of 10.00.
func (p *population) history(buf []byte, set int, first, last int64) []byte {
	w := int(first/customersPerWarehouse) + 1
	g := newGen(p.seed, set, tHistory, w, first%customersPerWarehouse/historyBatch)
	for r := first; r < last; r++ {
		local := int(r % customersPerWarehouse)
		d, c := local/CustomersPerDistrict+1, local%CustomersPerDistrict+1
		buf = fields(buf, 8)
		buf = int4(buf, c)
		buf = int2(buf, d)
		buf = int2(buf, w)
		buf = int2(buf, d)
		buf = int2(buf, w)
		buf = append(buf, p.now...)
		buf = append(buf, numTen...)
		buf = g.repeated(buf, g.between(12, 24))
	}
	return buf
}

// lineCount is o_ol_cnt, uniform in [5, 15]. orders and order_line are generated
// apart, so it is a hash of the order rather than a draw from a stream.
func (p *population) lineCount(set, w, d, o int) int {
	h := load.Mix(load.Mix(load.Mix(p.seed^uint64(tOrderLine)<<56^uint64(set)<<40)^uint64(w)) ^ uint64(d)<<16 ^ uint64(o))
	return 5 + int(h%11)
}

// orders: a district per batch; o_c_id runs through a random permutation of the
// district's customers, the first 2,100 orders are delivered.
func (p *population) orders(buf []byte, set int, first, last int64) []byte {
	w := int(first/ordersPerWarehouse) + 1
	unit := first % ordersPerWarehouse / orderBatch
	d := int(unit) + 1
	g := newGen(p.seed, set, tOrders, w, unit)
	var perm [CustomersPerDistrict]uint16
	for i := range perm {
		perm[i] = uint16(i + 1)
	}
	for i := range len(perm) - 1 {
		j := g.between(i, len(perm)-1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for r := first; r < last; r++ {
		o := int(r%OrdersPerDistrict) + 1
		buf = fields(buf, 8)
		buf = int4(buf, o)
		buf = int2(buf, d)
		buf = int2(buf, w)
		buf = int4(buf, int(perm[o-1]))
		buf = append(buf, p.now...)
		if o < FirstNewOrder {
			buf = int2(buf, g.between(1, 10))
		} else {
			buf = null(buf)
		}
		buf = int2(buf, p.lineCount(set, w, d, o))
		buf = int2(buf, 1) // o_all_local
	}
	return buf
}

// newOrders: orders 2101..3000 of each district.
func (p *population) newOrders(buf []byte, _ int, first, last int64) []byte {
	const perDistrict = OrdersPerDistrict - FirstNewOrder + 1
	for r := first; r < last; r++ {
		local := int(r % newOrdersPerWarehouse)
		buf = fields(buf, 3)
		buf = int4(buf, FirstNewOrder+local%perDistrict)
		buf = int2(buf, local/perDistrict+1)
		buf = int2(buf, int(r/newOrdersPerWarehouse)+1)
	}
	return buf
}

// orderLines: rows [first, last) are lineSlots slots per order; a batch holds
// orderLineBatch whole orders of one warehouse. Delivered lines have a date and
// an amount of 0, the others none and a random one.
func (p *population) orderLines(buf []byte, set int, first, last int64) []byte {
	const perWarehouse = ordersPerWarehouse * lineSlots
	w := int(first/perWarehouse) + 1
	first, last = first%perWarehouse/lineSlots, (last-1)%perWarehouse/lineSlots+1
	g := newGen(p.seed, set, tOrderLine, w, first/orderLineBatch)
	for r := first; r < last; r++ {
		d, o := int(r/OrdersPerDistrict)+1, int(r%OrdersPerDistrict)+1
		delivered := o < FirstNewOrder
		for n := range p.lineCount(set, w, d, o) {
			buf = fields(buf, 10)
			buf = int4(buf, o)
			buf = int2(buf, d)
			buf = int2(buf, w)
			buf = int2(buf, n+1)
			buf = int4(buf, g.between(1, Items))
			buf = int2(buf, w) // ol_supply_w_id
			if delivered {
				buf = append(buf, p.now...)
			} else {
				buf = null(buf)
			}
			buf = int2(buf, 5) // ol_quantity
			if delivered {
				buf = append(buf, numZero...)
			} else {
				buf = load.AppendNumeric(buf, g.cents(9999.99), 2)
			}
			buf = g.repeated(buf, 24)
		}
	}
	return buf
}

func (p *population) stock(buf []byte, set int, first, last int64) []byte {
	w := int(first/StockPerWarehouse) + 1
	g := newGen(p.seed, set, tStock, w, first%StockPerWarehouse/stockBatch)
	for r := first; r < last; r++ {
		buf = fields(buf, 17)
		buf = int4(buf, int(r%StockPerWarehouse)+1)
		buf = int2(buf, w)
		buf = int2(buf, g.between(10, 100))
		for range Districts {
			buf = g.repeated(buf, 24)
		}
		buf = append(buf, numStockYTD...)
		buf = int2(buf, 0) // s_order_cnt
		buf = int2(buf, 0) // s_remote_cnt
		buf = g.repeated(buf, g.between(26, 50))
	}
	return buf
}

// items: i_price is uniform_double()*100+1; i_name shows it with %f's six
// decimals, cut to 24 characters, and i_data holds the whole name, cut to 50.
func (p *population) items(buf []byte, set int, first, last int64) []byte {
	g := newGen(p.seed, set, tItem, 0, first/itemBatch)
	var name, data [64]byte
	for r := first; r < last; r++ {
		im := g.between(1, 10000)
		micros := 1_000_000 + int64(g.unit()*100_000_000) // the price in millionths, as %f prints it
		n := append(name[:0], "item-"...)
		n = strconv.AppendInt(n, int64(im), 10)
		n = append(n, '-')
		n = strconv.AppendInt(n, micros/1_000_000, 10)
		n = append(n, '.')
		n = strconv.AppendInt(n, 1_000_000+micros%1_000_000, 10)
		n = append(n[:len(n)-7], n[len(n)-6:]...) // the fraction's six digits, zeros kept
		n = g.letters(append(n, '-'), 5)
		d := g.letters(append(append(append(data[:0], "data-"...), n...), '-'), 5)
		buf = fields(buf, 5)
		buf = int4(buf, int(r)+1)
		buf = int4(buf, im)
		buf = field(buf, n[:min(len(n), 24)])
		buf = load.AppendNumeric(buf, (micros+5000)/10000, 2)
		buf = field(buf, d[:min(len(d), 50)])
	}
	return buf
}
