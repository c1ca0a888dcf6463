package pgwire

import (
	"encoding/binary"
	"strconv"
)

// beginMsg appends a message type and a length placeholder; endMsg fills the length.
func (c *Conn) beginMsg(t byte) int {
	c.out = append(c.out, t, 0, 0, 0, 0)
	return len(c.out) - 4
}

func (c *Conn) endMsg(at int) {
	binary.BigEndian.PutUint32(c.out[at:], uint32(len(c.out)-at))
}

// AppendBind appends Bind for the named prepared statement (or "" for the unnamed
// one) with text parameters, all results in text.
func (c *Conn) AppendBind(stmt string, params []int64) {
	c.extended = true
	at := c.beginMsg('B')
	c.out = append(c.out, 0) // unnamed portal
	c.out = append(c.out, stmt...)
	c.out = append(c.out, 0, 0, 0) // statement name end, 0 parameter format codes (all text)
	c.out = binary.BigEndian.AppendUint16(c.out, uint16(len(params)))
	for _, v := range params {
		lenAt := len(c.out)
		c.out = append(c.out, 0, 0, 0, 0)
		c.out = strconv.AppendInt(c.out, v, 10)
		binary.BigEndian.PutUint32(c.out[lenAt:], uint32(len(c.out)-lenAt-4))
	}
	c.out = append(c.out, 0, 0) // 0 result format codes (all text)
	c.endMsg(at)
}

// AppendBindText appends Bind for the named prepared statement with the text
// parameters in p, all results in text.
func (c *Conn) AppendBindText(stmt string, p *Params) {
	c.extended = true
	at := c.beginMsg('B')
	c.out = append(c.out, 0)
	c.out = append(c.out, stmt...)
	c.out = append(c.out, 0, 0, 0)
	c.out = binary.BigEndian.AppendUint16(c.out, uint16(len(p.ends)))
	start := 0
	for _, end := range p.ends {
		if end < 0 {
			c.out = append(c.out, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		c.out = binary.BigEndian.AppendUint32(c.out, uint32(end-start))
		c.out = append(c.out, p.buf[start:end]...)
		start = end
	}
	c.out = append(c.out, 0, 0)
	c.endMsg(at)
}

// Params holds one statement's text parameters in one buffer, so that building
// them allocates nothing once the buffer has grown: ends[i] is where parameter i ends
// in buf, or -1 for NULL.
type Params struct {
	buf  []byte
	ends []int
}

// Reset empties p for the next statement.
func (p *Params) Reset() { p.buf, p.ends = p.buf[:0], p.ends[:0] }

func (p *Params) end() { p.ends = append(p.ends, len(p.buf)) }

// Int adds an integer parameter.
func (p *Params) Int(v int64) {
	p.buf = strconv.AppendInt(p.buf, v, 10)
	p.end()
}

// Text adds a text parameter.
func (p *Params) Text(v []byte) {
	p.buf = append(p.buf, v...)
	p.end()
}

// Null adds a NULL parameter.
func (p *Params) Null() { p.ends = append(p.ends, -1) }

// Start begins a parameter the caller appends piece by piece to the bytes it
// returns, and End ends it with what the caller appended.
func (p *Params) Start() []byte { return p.buf }

func (p *Params) End(buf []byte) {
	p.buf = buf
	p.end()
}

// AppendParse appends Parse of sql, a string or bytes, as the unnamed statement,
// parameter types inferred.
func AppendParse[S ~string | ~[]byte](c *Conn, sql S) {
	at := c.beginMsg('P')
	c.out = append(c.out, 0)
	c.out = append(c.out, sql...)
	c.out = append(c.out, 0, 0, 0)
	c.endMsg(at)
}

// AppendDescribePortal asks for the unnamed portal's RowDescription, which the
// extended protocol sends only when asked: it names the columns.
func (c *Conn) AppendDescribePortal() {
	c.out = append(c.out, 'D', 0, 0, 0, 6, 'P', 0)
}

// AppendExecute appends Execute of the unnamed portal (all rows), and AppendSync a
// Sync: apart, for a pipeline.
func (c *Conn) AppendExecute() { c.out = append(c.out, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) }
func (c *Conn) AppendSync()    { c.out = append(c.out, 'S', 0, 0, 0, 4) }

// AppendExecuteSync appends Execute of the unnamed portal (all rows) and Sync.
func (c *Conn) AppendExecuteSync() {
	c.out = append(c.out, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, 'S', 0, 0, 0, 4)
}

// AppendQuery appends a simple-protocol Query.
func (c *Conn) AppendQuery(sql []byte) {
	at := c.beginMsg('Q')
	c.out = append(c.out, sql...)
	c.out = append(c.out, 0)
	c.endMsg(at)
}

// Queue marks the exchange just written (ending in Sync or a simple Query) as sent
// ahead of the next: Await reads its answer first and keeps only its error.
func (c *Conn) Queue() { c.queued++ }

// Pending is how many bytes of requests wait to be sent.
func (c *Conn) Pending() int { return len(c.out) }

// Discard drops the requests written and not sent.
func (c *Conn) Discard() { c.out, c.queued = c.out[:0], 0 }

// KeepRows makes the answers that follow keep their rows, for Value.
func (c *Conn) KeepRows(keep bool) { c.keep = keep }

// KeepResults makes the next answer keep its rows and, apart, each of its results
// with its column names (Results, Result, Columns); off, it keeps neither.
func (c *Conn) KeepResults(keep bool) { c.results, c.keep = keep, keep }
