package pgwire

import (
	"fmt"
	"strconv"
	"strings"
)

// Protocol is how statements are sent, as pgbench's --protocol.
type Protocol int

const (
	// Prepared parses each statement once per connection and then only binds and
	// executes it (pgbench -M prepared).
	Prepared Protocol = iota
	// Extended parses, binds and executes every statement each time (-M extended).
	Extended
	// Simple sends the statement text with values written in (-M simple).
	Simple
)

// ParseProtocol reads a --protocol value.
func ParseProtocol(s string) (Protocol, error) {
	switch s {
	case "prepared", "":
		return Prepared, nil
	case "extended":
		return Extended, nil
	case "simple":
		return Simple, nil
	}
	return 0, fmt.Errorf("unknown protocol %q: use simple, extended or prepared", s)
}

func (p Protocol) String() string {
	return [...]string{"prepared", "extended", "simple"}[p]
}

// Set reads a --protocol value: Protocol is a flag (pflag.Value).
func (p *Protocol) Set(s string) error {
	v, err := ParseProtocol(s)
	if err == nil {
		*p = v
	}
	return err
}

// Type names the flag's values in help.
func (p *Protocol) Type() string { return "protocol" }

// Statement is one statement with integer parameters ($1, $2, ...), ready to be
// sent by its protocol with the values of a transaction (AppendStatement).
type Statement struct {
	protocol Protocol
	name     string // with Prepared: the name it is prepared as on every connection
	sql      string
	// With Simple, the text around its placeholders and the parameter each stands
	// for (simpleParts), split once for every connection.
	parts []string
	order []int
}

// NewStatement readies sql, which takes nparams parameters, to be sent by p; with
// Prepared it is to be prepared as name on the connection.
func NewStatement(p Protocol, name, sql string, nparams int) (*Statement, error) {
	st := &Statement{protocol: p, name: name, sql: sql}
	if p == Simple {
		var err error
		if st.parts, st.order, err = simpleParts(sql, nparams); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// AppendStatement appends st with params for its parameters, as one exchange: Bind,
// Execute and Sync of the prepared statement; Parse of its text first with
// Extended; with Simple, a Query with the values written into the text.
func (c *Conn) AppendStatement(st *Statement, params []int64) {
	switch st.protocol {
	case Prepared:
		c.AppendBind(st.name, params)
		c.AppendExecuteSync()
	case Extended:
		AppendParse(c, st.sql)
		c.AppendBind("", params)
		c.AppendExecuteSync()
	case Simple:
		at := c.beginMsg('Q')
		for i, p := range st.order {
			c.out = append(c.out, st.parts[i]...)
			c.out = strconv.AppendInt(c.out, params[p], 10)
		}
		c.out = append(c.out, st.parts[len(st.parts)-1]...)
		c.out = append(c.out, 0)
		c.endMsg(at)
	}
}

// simpleParts splits sql at $n placeholders for the simple protocol: parts[i] is
// the text before placeholder i, and the last part follows the last placeholder;
// order[i] is the parameter placeholder i stands for.
func simpleParts(sql string, nparams int) ([]string, []int, error) {
	var parts []string
	var order []int
	rest := sql
	for {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			break
		}
		j := i + 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == i+1 {
			return nil, nil, fmt.Errorf("statement %q: '$' without a parameter number", sql)
		}
		n, _ := strconv.Atoi(rest[i+1 : j])
		if n < 1 || n > nparams {
			return nil, nil, fmt.Errorf("statement %q: parameter $%d but %d given", sql, n, nparams)
		}
		parts = append(parts, rest[:i])
		order = append(order, n-1)
		rest = rest[j:]
	}
	return append(parts, rest), order, nil
}
