package pgwire

import (
	"encoding/binary"

	"github.com/jackc/pgx/v5/pgconn"
)

// What the last answer said, as Await left it. Values alias the read buffers, which
// the next request reuses.

// Err is the first SQL error of the last answer, nil if none.
func (c *Conn) Err() *pgconn.PgError { return c.err }

// Outcome is the last answer's outcome: ErrCopy if a statement started COPY, else
// its first SQL error, else nil.
func (c *Conn) Outcome() error {
	if c.copied {
		return ErrCopy
	}
	if c.err != nil {
		return c.err
	}
	return nil
}

// InTransaction reports whether the session is inside a transaction block, as the
// last ReadyForQuery said.
func (c *Conn) InTransaction() bool { return c.status != 'I' }

// Results is how many results the last answer kept (KeepResults).
func (c *Conn) Results() int { return len(c.sets) }

// Result describes result r: whether it has rows at all (a result set, even an
// empty one, as opposed to a command's completion), and its rows, for Value, as
// rows first to last-1.
func (c *Conn) Result(r int) (tuples bool, first, last int) {
	rs := c.sets[r]
	return rs.desc >= 0, rs.first, rs.last
}

// Columns calls f with each column name of result r, in order.
func (c *Conn) Columns(r int, f func(i int, name []byte) error) error {
	rs := c.sets[r]
	if rs.desc < 0 {
		return nil
	}
	b := c.kept[rs.desc:rs.descEnd]
	if len(b) < 2 {
		return nil
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	for i := 0; i < n; i++ {
		end := 0
		for end < len(b) && b[end] != 0 {
			end++
		}
		if err := f(i, b[:end]); err != nil {
			return err
		}
		if end+19 > len(b) {
			break
		}
		b = b[end+19:] // the name's NUL and 18 bytes of table, column, type and format
	}
	return nil
}

// KeptRows is how many rows the last answer kept (KeepRows).
func (c *Conn) KeptRows() int { return len(c.rowAt) }

// Value is column col of kept row row in text form; nil for NULL.
func (c *Conn) Value(row, col int) []byte {
	b := c.kept[c.rowAt[row]:]
	if row+1 < len(c.rowAt) {
		b = c.kept[c.rowAt[row]:c.rowAt[row+1]]
	}
	if len(b) < 2 || col >= int(binary.BigEndian.Uint16(b)) {
		return nil
	}
	b = b[2:]
	for i := 0; ; i++ {
		n := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if i == col {
			if n < 0 {
				return nil
			}
			return b[:n]
		}
		if n > 0 {
			b = b[n:]
		}
	}
}

// IntValue is Value parsed as an integer; 0 for NULL or text that is not one.
func (c *Conn) IntValue(row, col int) int64 {
	v := c.Value(row, col)
	var n int64
	neg := false
	for i, ch := range v {
		switch {
		case ch == '-' && i == 0:
			neg = true
		case ch >= '0' && ch <= '9':
			n = n*10 + int64(ch-'0')
		default:
			if neg {
				return -n
			}
			return n
		}
	}
	if neg {
		return -n
	}
	return n
}
