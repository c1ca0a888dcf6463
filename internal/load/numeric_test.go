package load

import (
	"bytes"
	"testing"
)

// TestNumeric: values in numeric's binary form, as the server sends them.
func TestNumeric(t *testing.T) {
	cases := []struct {
		name  string
		v     int64
		scale int
		want  []uint16 // ndigits, weight, sign, dscale, digits...
	}{
		{"0.00", 0, 2, []uint16{0, 0, 0, 2}},
		{"-10.00", -1000, 2, []uint16{1, 0, 0x4000, 2, 10}},
		{"300000.00", 30_000_000, 2, []uint16{1, 1, 0, 2, 30}},
		{"9999.99", 999_999, 2, []uint16{2, 0, 0, 2, 9999, 9900}},
		{"0.0500", 500, 4, []uint16{1, 0xffff, 0, 4, 500}},
		{"12345.67", 1_234_567, 2, []uint16{3, 1, 0, 2, 1, 2345, 6700}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendNumeric(nil, tc.v, tc.scale)
			var want []byte
			want = append(want, 0, 0, 0, byte(2*len(tc.want)))
			for _, w := range tc.want {
				want = append(want, byte(w>>8), byte(w))
			}
			if !bytes.Equal(got, want) {
				t.Errorf("AppendNumeric(%d, %d) = %x, want %x", tc.v, tc.scale, got, want)
			}
		})
	}
}
