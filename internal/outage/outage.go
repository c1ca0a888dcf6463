// Package outage keeps a run's book of lost connections: how many clients are
// down, since when every one of them has been, each client's outage once it ends,
// and the failed attempts to connect again, by cause. It stands apart from the
// driver's transactions, which only report a loss, an attempt and a reconnection,
// so that what a run reports of a server that went away (and when no client has
// had a connection at all) is kept in one place, and tested without a server.
package outage

import (
	"encoding/binary"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
)

// Outage is a span during which one client had no connection.
type Outage struct {
	Client     int
	Start, End time.Time // the loss noticed; connected again, or the run ended
	Cause      string    // why the connection was lost: see connfail.Cause
	Error      string    // the error that ended it, password removed
	Attempts   int       // connection attempts, the successful one included
	FailedTx   int       // transactions lost with the connection
	Recovered  bool      // connected again before the run ended
}

// ConnectErrorCount is how often reconnecting failed for one cause. A failed attempt
// is not a transaction: a run counts it apart from its failed ones.
type ConnectErrorCount struct {
	Cause   string // see connfail.Cause
	Count   int64
	Example string // password removed
}

// Seconds is the wall time during which at least one client had lost its
// connection: the union of the clients' outages.
func Seconds(outages []Outage) float64 {
	o := append([]Outage(nil), outages...)
	sort.Slice(o, func(i, j int) bool { return o[i].Start.Before(o[j].Start) })
	var total time.Duration
	var curS, curE time.Time
	for i, x := range o {
		if i == 0 || x.Start.After(curE) {
			total += curE.Sub(curS)
			curS, curE = x.Start, x.End
		} else if x.End.After(curE) {
			curE = x.End
		}
	}
	total += curE.Sub(curS)
	return total.Seconds()
}

// Book is a run's book of lost connections. It is written only as connections are
// lost and made, and read as the run ticks and ends.
type Book struct {
	scrub   func(string) string // removes the password from an error's words
	changed chan struct{}
	tickErr atomic.Int64 // failed attempts since the last TickConnectErrors

	mu sync.Mutex
	// Clients running and without a connection; see update.
	live, down   int
	allDownSince time.Time // zero unless every running client is down
	lastErr      string    // the cause of the last failed attempt
	// The outages that ended, as keep records them.
	chunks    [][]byte
	kept      int
	lastStart int64             // the last one's start, µs from epoch
	epoch     time.Time         // the kept outages' times are offsets from it
	words     []string          // their causes and errors, each once
	wordAt    map[string]uint32 // the index of each in words
	// The wall time some client was down, as Seconds counts it: whole stretches
	// before anyDownSince, and the one going on since it (zero when none is).
	downBefore   time.Duration
	anyDownSince time.Time
	reconnects   int64 // outages that ended connected again
	connErrs     map[string]*ConnectErrorCount
}

// NewBook makes an empty book; scrub removes the password from the errors it keeps.
func NewBook(scrub func(string) string) *Book {
	return &Book{scrub: scrub, changed: make(chan struct{}, 1), connErrs: map[string]*ConnectErrorCount{},
		epoch: time.Now(), wordAt: map[string]uint32{}}
}

// The book keeps each ended outage as a record of varints in chunks of bytes: a
// long run of many clients through many faults keeps one per client and fault,
// about a dozen bytes each, where the Outage is a hundred. Times are kept to the
// microsecond, from the book's epoch; words (causes and errors) once each.
const chunkSize = 16 << 10

// keep appends o to the book's records; b.mu is held.
func (b *Book) keep(o Outage) {
	if len(b.chunks) == 0 || len(b.chunks[len(b.chunks)-1])+7*binary.MaxVarintLen64 > chunkSize {
		b.chunks = append(b.chunks, make([]byte, 0, chunkSize))
	}
	attempts := uint64(o.Attempts) << 1
	if o.Recovered {
		attempts |= 1
	}
	start := o.Start.Sub(b.epoch).Microseconds()
	c := &b.chunks[len(b.chunks)-1]
	*c = binary.AppendVarint(*c, start-b.lastStart) // outages end out of order: a signed step
	*c = binary.AppendVarint(*c, o.End.Sub(b.epoch).Microseconds()-start)
	for _, v := range []uint64{uint64(o.Client), attempts, uint64(o.FailedTx), uint64(b.word(o.Cause)), uint64(b.word(o.Error))} {
		*c = binary.AppendUvarint(*c, v)
	}
	b.lastStart = start
	b.kept++
}

// word is w's index in the book's words, added if new; b.mu is held.
func (b *Book) word(w string) uint32 {
	i, ok := b.wordAt[w]
	if !ok {
		i = uint32(len(b.words))
		b.words = append(b.words, w)
		b.wordAt[w] = i
	}
	return i
}

// keptOutages are the outages the book keeps, in the order they ended; b.mu is held.
func (b *Book) keptOutages() []Outage {
	out := make([]Outage, 0, b.kept)
	var start int64
	for _, c := range b.chunks {
		for len(c) > 0 {
			var v [7]int64
			for k := range v {
				var n int
				if k < 2 {
					v[k], n = binary.Varint(c)
				} else {
					var u uint64
					u, n = binary.Uvarint(c)
					v[k] = int64(u)
				}
				c = c[n:]
			}
			start += v[0]
			out = append(out, Outage{Client: int(v[2]), Start: b.epoch.Add(time.Duration(start) * time.Microsecond),
				End: b.epoch.Add(time.Duration(start+v[1]) * time.Microsecond), Attempts: int(v[3] >> 1), Recovered: v[3]&1 == 1,
				FailedTx: int(v[4]), Cause: b.words[v[5]], Error: b.words[v[6]]})
		}
	}
	return out
}

// Running notes that n clients have begun, each with a connection.
func (b *Book) Running(n int) {
	b.mu.Lock()
	b.live = n
	b.mu.Unlock()
}

// Lost notes that a client has lost its connection.
func (b *Book) Lost() {
	b.mu.Lock()
	b.down++
	b.update()
	b.mu.Unlock()
}

// Ended records a client's outage as over: connected again, or the client stops.
func (b *Book) Ended(o Outage) {
	b.mu.Lock()
	b.down--
	b.keep(o)
	if o.Recovered {
		b.reconnects++
	}
	b.update()
	b.mu.Unlock()
}

// ClientDone notes that a client has stopped for good.
func (b *Book) ClientDone() {
	b.mu.Lock()
	b.live--
	b.update()
	b.mu.Unlock()
}

// update notes when every running client lost its connection, and signals
// Changed; b.mu is held.
func (b *Book) update() {
	switch {
	case b.down > 0 && b.anyDownSince.IsZero():
		b.anyDownSince = time.Now()
	case b.down == 0 && !b.anyDownSince.IsZero():
		b.downBefore += time.Since(b.anyDownSince)
		b.anyDownSince = time.Time{}
	}
	all := b.live > 0 && b.down >= b.live
	switch {
	case all && b.allDownSince.IsZero():
		b.allDownSince = time.Now()
	case !all && !b.allDownSince.IsZero():
		b.allDownSince = time.Time{}
	default:
		return
	}
	select {
	case b.changed <- struct{}{}:
	default: // a notice is already pending; the reader reads the state anew
	}
}

// Changed receives a notice when every running client has lost its connection, or
// one has it again: AllDownSince has changed.
func (b *Book) Changed() <-chan struct{} { return b.changed }

// AllDownSince is when every running client lost its connection (zero if one has
// one), and the cause of the last failure to connect again.
func (b *Book) AllDownSince() (time.Time, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.allDownSince, b.lastErr
}

// Down is how many clients have no connection now.
func (b *Book) Down() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.down
}

// Reconnected is how many lost connections were made again, and for how long
// until now some client was without one: the live figures that Outages and
// Seconds give once the run has ended.
func (b *Book) Reconnected() (reconnects int64, down time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	down = b.downBefore
	if !b.anyDownSince.IsZero() {
		down += time.Since(b.anyDownSince)
	}
	return b.reconnects, down
}

// ConnectFailed counts a failed attempt to connect.
func (b *Book) ConnectFailed(err error) {
	cause := connfail.Cause(err)
	b.tickErr.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastErr = cause
	e := b.connErrs[cause]
	if e == nil {
		e = &ConnectErrorCount{Cause: cause, Example: b.scrub(err.Error())}
		b.connErrs[cause] = e
	}
	e.Count++
}

// TickConnectErrors is how many attempts to connect failed since it was last called.
func (b *Book) TickConnectErrors() int64 { return b.tickErr.Swap(0) }

// Outages are the outages that have ended, in the order they began.
func (b *Book) Outages() []Outage {
	b.mu.Lock()
	o := b.keptOutages()
	b.mu.Unlock()
	sort.Slice(o, func(i, j int) bool { return o[i].Start.Before(o[j].Start) })
	return o
}

// ConnectErrors are the failed attempts to connect, by cause, the most frequent first.
func (b *Book) ConnectErrors() []ConnectErrorCount {
	b.mu.Lock()
	var errs []ConnectErrorCount
	for _, e := range b.connErrs {
		errs = append(errs, *e)
	}
	b.mu.Unlock()
	sort.Slice(errs, func(i, j int) bool { return errs[i].Count > errs[j].Count })
	return errs
}
