package sbtpcc

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/load"
)

// rows decodes binary COPY tuples into their fields (nil for NULL).
func rows(t *testing.T, buf []byte, fields int) [][][]byte {
	t.Helper()
	var out [][][]byte
	for len(buf) > 0 {
		if n := int(binary.BigEndian.Uint16(buf)); n != fields {
			t.Fatalf("a tuple of %d fields, want %d", n, fields)
		}
		buf = buf[2:]
		row := make([][]byte, fields)
		for i := range row {
			n := int32(binary.BigEndian.Uint32(buf))
			buf = buf[4:]
			if n >= 0 {
				row[i], buf = buf[:n], buf[n:]
			}
		}
		out = append(out, row)
	}
	return out
}

func i2(v []byte) int   { return int(int16(binary.BigEndian.Uint16(v))) }
func i4(v []byte) int   { return int(int32(binary.BigEndian.Uint32(v))) }
func i8(v []byte) int64 { return int64(binary.BigEndian.Uint64(v)) }

// hundredths decodes a binary numeric of scale 2 or less into hundredths.
func hundredths(v []byte) int64 {
	n, weight, sign := int(binary.BigEndian.Uint16(v)), int(int16(binary.BigEndian.Uint16(v[2:]))), binary.BigEndian.Uint16(v[4:])
	var x float64
	for i := range n {
		d := float64(binary.BigEndian.Uint16(v[8+2*i:]))
		p := 1.0
		for range weight - i {
			p *= 10000
		}
		for range i - weight {
			p /= 10000
		}
		x += d * p
	}
	h := int64(x*100 + 0.5)
	if sign == 0x4000 {
		h = -h
	}
	return h
}

// TestNumeric: amounts round-trip through numeric's binary form.
func TestNumeric(t *testing.T) {
	for _, v := range []int64{0, 1, 99, 100, 1000, -1000, 123456, 999999, 3_000_000, 30_000_000, -276544} {
		if got := hundredths(load.AppendNumeric(nil, v, 2)[4:]); got != v {
			t.Errorf("numeric(%d) decodes as %d", v, got)
		}
	}
}

// TestRowValues generates a batch of each table and checks its values against
// tpcc_common.lua's ranges and shapes.
func TestRowValues(t *testing.T) {
	p := newPopulation(0, 3, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srcs := p.sources(names("public"), 2)
	batch := func(table string, b int64) []byte {
		for _, s := range srcs {
			if s.Table == "public."+table+"2" {
				return s.Append(nil, b*s.BatchRows, min((b+1)*s.BatchRows, s.Rows))
			}
		}
		t.Fatalf("no source %s", table)
		return nil
	}
	re := func(s string) *regexp.Regexp { return regexp.MustCompile("^" + s + "$") }
	match := func(what string, r *regexp.Regexp, v []byte) {
		if !r.Match(v) {
			t.Errorf("%s %q does not match %s", what, v, r)
		}
	}
	between := func(what string, v, lo, hi int64) {
		if v < lo || v > hi {
			t.Errorf("%s = %d, outside [%d, %d]", what, v, lo, hi)
		}
	}
	one := func(what string, v []byte, lo, hi int) {
		between(what+" length", int64(len(v)), int64(lo), int64(hi))
		if len(v) == 0 || v[0] < 'a' || v[0] > 'z' || strings.Trim(string(v), string(v[:1])) != "" {
			t.Errorf("%s %q is not one letter repeated", what, v)
		}
	}
	address := func(r [][]byte) {
		match("street 1", re("street1-[a-z]{10}"), r[0])
		match("street 2", re("street2-[a-z]{10}"), r[1])
		match("city", re("city-[a-z]{10}"), r[2])
		match("state", re("[a-z]{2}"), r[3])
		match("zip", re("zip-[0-9]{5}"), r[4])
	}

	for _, r := range rows(t, batch("warehouse", 2), 9) {
		between("w_id", int64(i2(r[0])), 3, 3)
		match("w_name", re("name-[a-z]{5}"), r[1])
		address(r[2:7])
		between("w_tax", hundredths(r[7]), 0, 20)
		between("w_ytd", hundredths(r[8]), 30_000_000, 30_000_000)
	}
	for _, r := range rows(t, batch("district", 1), 11) {
		between("d_w_id", int64(i2(r[1])), 2, 2)
		address(r[3:8])
		between("d_tax", hundredths(r[8]), 0, 20)
		between("d_ytd", hundredths(r[9]), 3_000_000, 3_000_000)
		between("d_next_o_id", int64(i4(r[10])), 3001, 3001)
	}
	credit := map[string]int{}
	for _, r := range rows(t, batch("customer", 31), 21) {
		between("c_id", int64(i4(r[0])), 1001, 2000)
		between("c_d_id", int64(i2(r[1])), 1, 1)
		between("c_w_id", int64(i2(r[2])), 2, 2)
		match("c_first", re("first-[a-z]{2,10}"), r[3])
		match("c_middle", re("OE"), r[4])
		match("c_last", re("(BAR|OUGHT|ABLE|PRI|PRES|ESE|ANTI|CALLY|ATION|EING){3}"), r[5])
		address(r[6:11])
		match("c_phone", re("[0-9]{16}"), r[11])
		between("c_since", i8(r[12]), i8(p.now[4:]), i8(p.now[4:]))
		credit[string(r[13])]++
		between("c_credit_lim", i8(r[14]), 50000, 50000)
		between("c_discount", hundredths(r[15]), 0, 50)
		between("c_balance", hundredths(r[16]), -1000, -1000)
		between("c_ytd_payment", hundredths(r[17]), 1000, 1000)
		between("c_payment_cnt", int64(i2(r[18])), 1, 1)
		between("c_delivery_cnt", int64(i2(r[19])), 0, 0)
		one("c_data", r[20], 300, 500)
	}
	if len(credit) != 2 || credit["BC"] < 50 || credit["BC"] > 150 {
		t.Errorf("credit of 1,000 customers: %v, want about 10%% BC", credit)
	}
	for _, r := range rows(t, batch("history", 10), 8) {
		between("h_amount", hundredths(r[6]), 1000, 1000)
		one("h_data", r[7], 12, 24)
	}
	// District 3 of warehouse 1: o_c_id a permutation, delivered below 2101.
	seen := map[int]bool{}
	for _, r := range rows(t, batch("orders", 2), 8) {
		o := i4(r[0])
		seen[i4(r[3])] = true
		if delivered := o < FirstNewOrder; delivered != (r[5] != nil) {
			t.Errorf("order %d: carrier %v", o, r[5])
		} else if delivered {
			between("o_carrier_id", int64(i2(r[5])), 1, 10)
		}
		between("o_ol_cnt", int64(i2(r[6])), 5, 15)
	}
	if len(seen) != CustomersPerDistrict {
		t.Errorf("%d customers in a district's 3,000 orders, want each once", len(seen))
	}
	for _, r := range rows(t, batch("order_line", 3), 10) {
		o := i4(r[0])
		between("ol_i_id", int64(i4(r[4])), 1, Items)
		between("ol_quantity", int64(i2(r[7])), 5, 5)
		if o < FirstNewOrder {
			between("delivered ol_amount", hundredths(r[8]), 0, 0)
		} else {
			between("ol_amount", hundredths(r[8]), 0, 999_999)
		}
		if (o < FirstNewOrder) != (r[6] != nil) {
			t.Errorf("order %d: ol_delivery_d %v", o, r[6])
		}
		one("ol_dist_info", r[9], 24, 24)
	}
	for _, r := range rows(t, batch("stock", 150), 17) {
		between("s_quantity", int64(i2(r[2])), 10, 100)
		for d := range Districts {
			one("s_dist", r[3+d], 24, 24)
		}
		one("s_data", r[16], 26, 50)
	}
	for _, r := range rows(t, batch("item", 42), 5) {
		between("i_im_id", int64(i4(r[1])), 1, 10000)
		between("i_price", hundredths(r[3]), 100, 10100)
		match("i_name", re(`item-[0-9]{1,5}-[0-9]{1,3}\.[0-9]{0,6}(-[a-z]{0,5})?`), r[2])
		match("i_data", re(`data-item-[0-9]{1,5}-[0-9]{1,3}\.[0-9]{6}-[a-z]{5}-[a-z]{5}`), r[4])
		between("i_name length", int64(len(r[2])), 0, 24)
	}
}

// BenchmarkWarehouse generates the rows of one warehouse of a table set, as the
// loader's COPY streams do: the client's CPU per warehouse, which the server's
// cores share on one machine. The items, a table set's whole, are a tenth of it.
func BenchmarkWarehouse(b *testing.B) {
	p := newPopulation(0, 1, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srcs := p.sources(names("public"), 1)
	var buf []byte
	var bytes int64
	for b.Loop() {
		bytes = 0
		for _, src := range srcs {
			for first := int64(0); first < src.Rows; first += src.BatchRows {
				buf = src.Append(buf[:0], first, min(first+src.BatchRows, src.Rows))
				bytes += int64(len(buf))
			}
		}
	}
	b.SetBytes(bytes)
}
