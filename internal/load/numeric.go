package load

import "encoding/binary"

// AppendNumeric appends v/10^scale (scale at most 4) as a binary COPY field of
// type numeric: its length, then the digit count, weight, sign and display
// scale, then base-10000 digits, most significant first.
func AppendNumeric(buf []byte, v int64, scale int) []byte {
	sign := uint16(0)
	if v < 0 {
		sign, v = 0x4000, -v
	}
	pow := int64(1)
	for range scale {
		pow *= 10
	}
	ip, frac := v/pow, v%pow*(10000/pow)
	var digits [8]uint16
	n := 0
	for x := ip; x > 0; x /= 10000 {
		n++
	}
	weight := n - 1
	for i, x := n-1, ip; i >= 0; i, x = i-1, x/10000 {
		digits[i] = uint16(x % 10000)
	}
	if frac != 0 {
		digits[n] = uint16(frac)
		n++
	}
	for n > 0 && digits[n-1] == 0 {
		n--
	}
	if n == 0 {
		weight, sign = 0, 0
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(8+2*n))
	buf = binary.BigEndian.AppendUint16(buf, uint16(n))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(scale))
	for _, d := range digits[:n] {
		buf = binary.BigEndian.AppendUint16(buf, d)
	}
	return buf
}
