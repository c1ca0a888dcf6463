package recovery

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Table is the ledger's table in the target database; each run's rows carry a
// token of their own, and are deleted once counted.
const Table = "pgbakeoff_ledger"

// DefaultRate is how many commits a second the ledger makes.
const DefaultRate = 50

// Connector opens a session on the target's primary.
type Connector func(ctx context.Context) (*pgconn.PgConn, error)

// Ledger commits numbered rows beside a workload, one a tick, and remembers which
// commits the server acknowledged and which were in flight when their session
// was lost. After a fault, Reckon reads what the primary has: an acknowledged
// row that is missing is a lost commit, and a row whose commit was never
// acknowledged is one the clients could not know had happened. It works under
// any workload, since it runs beside it on a session of its own.
type Ledger struct {
	connect Connector
	token   string
	every   time.Duration
	start   time.Time // acknowledgements are kept in milliseconds since it

	mu       sync.Mutex
	acked    ackLog
	inFlight []int64
	gone     []time.Time   // when the session was found lost, in order
	commits  int64         // acknowledged
	ackedCh  chan struct{} // closed, and replaced, at each acknowledgement
	stop     context.CancelFunc
	done     chan struct{}
}

// ack is an acknowledged commit: its row and when, in milliseconds since the
// ledger's start.
type ack struct {
	seq uint32
	ms  uint32
}

// ackLog keeps the acknowledged commits in order, compactly, as a long run keeps
// one for every commit (50 a second, 180,000 an hour): each is two varints, how
// much its row number and its time in milliseconds exceed the one's before, a
// byte each as a rule.
type ackLog struct {
	buf  []byte
	n    int
	last ack
}

func (l *ackLog) add(a ack) {
	l.buf = binary.AppendUvarint(l.buf, uint64(a.seq-l.last.seq))
	l.buf = binary.AppendUvarint(l.buf, uint64(a.ms-l.last.ms))
	l.last = a
	l.n++
}

// all yields the commits in the order they were acknowledged.
func (l *ackLog) all(yield func(ack) bool) {
	var a ack
	for b := l.buf; len(b) > 0; {
		seq, k := binary.Uvarint(b)
		ms, j := binary.Uvarint(b[k:])
		b = b[k+j:]
		a = ack{a.seq + uint32(seq), a.ms + uint32(ms)}
		if !yield(a) {
			return
		}
	}
}

func (a ack) at(start time.Time) time.Time { return start.Add(time.Duration(a.ms) * time.Millisecond) }

// StartLedger creates the ledger's table when it lacks one and starts committing
// rate rows a second, under token (unique to the run), until Stop.
func StartLedger(ctx context.Context, connect Connector, token string, rate float64) (*Ledger, error) {
	conn, err := connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	_, err = conn.Exec(ctx, "create table if not exists "+Table+` (token text not null, seq bigint not null,
		at timestamptz not null default clock_timestamp(), primary key (token, seq))`).ReadAll()
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("ledger: create %s: %w", Table, err)
	}
	lctx, stop := context.WithCancel(context.Background())
	l := &Ledger{connect: connect, token: token, every: time.Duration(float64(time.Second) / rate), stop: stop, done: make(chan struct{}), ackedCh: make(chan struct{}), start: time.Now()}
	go l.run(lctx, conn)
	return l, nil
}

// run commits a row a tick, on a session it opens again after losing it.
func (l *Ledger) run(ctx context.Context, conn *pgconn.PgConn) {
	defer close(l.done)
	tick := time.NewTicker(l.every)
	defer tick.Stop()
	for seq := int64(1); ; seq++ {
		for conn == nil {
			var err error
			if conn, err = l.connect(ctx); err != nil {
				conn = nil
				if !sleep(ctx, l.every) {
					return
				}
			}
		}
		err := l.insert(conn, seq)
		l.record(seq, err)
		if err != nil {
			conn.Close(context.Background())
			conn = nil
		}
		select {
		case <-ctx.Done():
			if conn != nil {
				conn.Close(context.Background())
			}
			return
		case <-tick.C:
		}
	}
}

// insert commits row seq. Stopping does not cancel it, so that the last commit
// is not taken for one lost; a server that stalls it (a synchronous standby gone)
// leaves it in flight after insertTimeout.
func (l *Ledger) insert(conn *pgconn.PgConn, seq int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), insertTimeout)
	defer cancel()
	_, err := conn.ExecParams(ctx, "insert into "+Table+" (token, seq) values ($1, $2)",
		[][]byte{[]byte(l.token), []byte(strconv.FormatInt(seq, 10))}, nil, nil, nil).Close()
	return err
}

// insertTimeout is how long one of the ledger's commits may take.
const insertTimeout = 10 * time.Second

// record notes how the commit of row seq ended: acknowledged, refused by the
// server (not committed), or lost with its session (in flight).
func (l *Ledger) record(seq int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pe, refused := errors.AsType[*pgconn.PgError](err)
	switch {
	case err == nil:
		l.acked.add(ack{uint32(seq), uint32(time.Since(l.start).Milliseconds())})
		l.commits++
		close(l.ackedCh)
		l.ackedCh = make(chan struct{})
	case refused && !connectionLost(pe.Code):
		// The server refused it: not committed.
	default:
		l.inFlight = append(l.inFlight, seq)
		l.gone = append(l.gone, time.Now())
	}
}

// Commits are the ledger's commits acknowledged so far, to leave out of the
// server's counts of the workload's.
func (l *Ledger) Commits() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.commits
}

// WaitCommits waits until n commits have been acknowledged, or ctx ends.
func (l *Ledger) WaitCommits(ctx context.Context, n int64) error {
	for {
		l.mu.Lock()
		got, next := l.commits, l.ackedCh
		l.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d commits acknowledged, waiting for %d: %w", got, n, ctx.Err())
		case <-next:
		}
	}
}

// AckedAfter is how many commits were acknowledged after t.
func (l *Ledger) AckedAfter(t time.Time) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for a := range l.acked.all {
		if a.at(l.start).After(t) {
			n++
		}
	}
	return n
}

// Stop ends the ledger's commits.
func (l *Ledger) Stop() {
	l.stop()
	<-l.done
}

// Reckoning is what the primary holds of the ledger's commits after the run.
type Reckoning struct {
	Acknowledged int64
	// Lost are acknowledged commits missing on the primary, the earliest
	// acknowledged at LostFrom and the latest at LostTo. LastAck is the last
	// commit acknowledged before the ledger found its session lost, after
	// LostFrom: the primary's last word before it went away.
	Lost                      int64
	LostFrom, LostTo, LastAck time.Time
	// InDoubt are rows present whose commit was in flight when the session was
	// lost; Unknown those in flight that are absent (never committed).
	InDoubt, Unknown int64
	// Every is the interval between the ledger's commits.
	Every time.Duration
}

// RPO is the recovery point: the window of acknowledged work lost, from the
// acknowledgement of the earliest lost commit to the failure that lost it.
// The failure is the first of failed (the instants the primary was taken
// away, where known) at or after LostFrom, else LastAck. A commit is made
// within Every of the one before it, so the window is never shorter than
// Every: a single lost commit acknowledged just before the failure has an RPO
// of Every. 0 when nothing was lost.
func (r Reckoning) RPO(failed ...time.Time) time.Duration {
	if r.Lost == 0 {
		return 0
	}
	end := r.LastAck
	for _, t := range slices.SortedFunc(slices.Values(failed), time.Time.Compare) {
		if !t.Before(r.LostFrom) {
			end = t
			break
		}
	}
	return max(end.Sub(r.LostFrom), r.Every)
}

// Reckon reads the ledger's rows on the primary, compares them with what was
// acknowledged, and deletes them. Stop first.
func (l *Ledger) Reckon(ctx context.Context) (Reckoning, error) {
	rs, err := l.ReckonFaults(ctx, nil)
	if len(rs) == 0 {
		return Reckoning{}, err
	}
	return rs[0], err
}

// Failure is when a fault began, and when it took the primary away where that
// is known (zero otherwise: a command's fault).
type Failure struct{ Began, Stopped time.Time }

// ReckonFaults is Reckon with the commits told apart by the fault that lost
// them: one reckoning for each of faults (in the order they were done), or one
// for the run when there are none. A fault's failure is when it stopped the
// primary, else the first loss of the ledger's session after it began, else
// when it began. A commit acknowledged at t belongs to the first failure at or
// after t, one after the last failure to the last fault; a commit in flight
// when the session was lost, to the last failure before that. Their counts add
// up to the run's.
func (l *Ledger) ReckonFaults(ctx context.Context, faults []Failure) ([]Reckoning, error) {
	conn, err := l.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer conn.Close(context.Background())
	res := conn.ExecParams(ctx, "select seq from "+Table+" where token = $1", [][]byte{[]byte(l.token)}, nil, nil, nil).Read()
	if err := res.Err; err != nil {
		return nil, fmt.Errorf("ledger: read %s: %w", Table, err)
	}
	present := make(map[int64]bool, len(res.Rows))
	for _, row := range res.Rows {
		seq, _ := strconv.ParseInt(string(row[0]), 10, 64)
		present[seq] = true
	}
	l.mu.Lock()
	acked := make([]ack, 0, l.acked.n)
	for a := range l.acked.all {
		acked = append(acked, a)
	}
	rs := reckonFaults(l.start, acked, l.inFlight, l.gone, present, faults)
	l.mu.Unlock()
	for i := range rs {
		rs[i].Every = l.every
	}
	_, err = conn.ExecParams(ctx, "delete from "+Table+" where token = $1", [][]byte{[]byte(l.token)}, nil, nil, nil).Close()
	return rs, err
}

// reckonFaults reckons the commits of each fault's share (see ReckonFaults).
func reckonFaults(start time.Time, acked []ack, inFlight []int64, gone []time.Time, present map[int64]bool, faults []Failure) []Reckoning {
	if len(faults) <= 1 {
		return []Reckoning{reckon(start, acked, inFlight, gone, present)}
	}
	failed := make([]time.Time, len(faults))
	for i, f := range faults {
		failed[i] = f.Stopped
		if failed[i].IsZero() {
			failed[i] = f.Began
			k := slices.IndexFunc(gone, func(g time.Time) bool { return !g.Before(f.Began) })
			if k >= 0 && (i == len(faults)-1 || gone[k].Before(faults[i+1].Began)) {
				failed[i] = gone[k]
			}
		}
	}
	acks := make([][]ack, len(faults))
	for _, a := range acked {
		at := a.at(start)
		i := slices.IndexFunc(failed, func(f time.Time) bool { return !f.Before(at) })
		if i < 0 {
			i = len(faults) - 1
		}
		acks[i] = append(acks[i], a)
	}
	flights, gones := make([][]int64, len(faults)), make([][]time.Time, len(faults))
	for k, g := range gone {
		i := 0
		for j, f := range failed {
			if !f.After(g) {
				i = j
			}
		}
		flights[i], gones[i] = append(flights[i], inFlight[k]), append(gones[i], g)
	}
	rs := make([]Reckoning, len(faults))
	for i := range faults {
		rs[i] = reckon(start, acks[i], flights[i], gones[i], present)
	}
	return rs
}

// reckon compares the acknowledged and in-flight commits with the rows present;
// gone are the instants the ledger found its session lost, start the ledger's.
func reckon(start time.Time, acked []ack, inFlight []int64, gone []time.Time, present map[int64]bool) Reckoning {
	r := Reckoning{Acknowledged: int64(len(acked))}
	for _, a := range acked {
		if present[int64(a.seq)] {
			continue
		}
		at := a.at(start)
		if r.Lost == 0 || at.Before(r.LostFrom) {
			r.LostFrom = at
		}
		if at.After(r.LostTo) {
			r.LostTo = at
		}
		r.Lost++
	}
	if r.Lost > 0 {
		r.LastAck = lastAckBefore(start, acked, r.LostFrom, gone)
	}
	for _, seq := range slices.Compact(slices.Sorted(slices.Values(inFlight))) {
		if present[seq] {
			r.InDoubt++
		} else {
			r.Unknown++
		}
	}
	return r
}

// lastAckBefore is the last acknowledgement before the first loss of the
// session after from; with no loss after from (the rows vanished under a
// session that lived on), the last acknowledgement of all.
func lastAckBefore(start time.Time, acked []ack, from time.Time, gone []time.Time) time.Time {
	var last time.Time
	i := slices.IndexFunc(gone, func(g time.Time) bool { return !g.Before(from) })
	for _, a := range acked {
		if i >= 0 && !a.at(start).Before(gone[i]) {
			break
		}
		last = a.at(start)
	}
	return last
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
