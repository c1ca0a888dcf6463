package sampler

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// waitsSQL lists what each active session of the benchmark ($1) is waiting
// on, leaving out the sampler's own two sessions. A session of another user
// shows no state without pg_read_all_stats, and yields NULL.
const waitsSQL = `select case when state is null then null
	when wait_event is null then 'CPU'
	else wait_event_type || ':' || wait_event end
from pg_stat_activity
where application_name = $1 and (state = 'active' or state is null)
	and pid <> pg_backend_pid() and pid <> $2`

const waitsStmt = "pgbakeoff_waits"

// pollWaits polls pg_stat_activity every WaitInterval until Stop or ctx ends.
func (s *Sampler) pollWaits(ctx context.Context, conn *pgconn.PgConn) {
	defer s.wg.Done()
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	t := time.NewTicker(s.cfg.WaitInterval)
	defer t.Stop()
	var lastConnect time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		case <-t.C:
		}
		if conn == nil {
			// A server that is down is tried once an interval, not at every poll.
			if time.Since(lastConnect) < s.cfg.Interval {
				continue
			}
			lastConnect = time.Now()
			var err error
			if conn, err = s.connectWaits(ctx); err != nil {
				if ctx.Err() == nil {
					s.errs.add("wait events: %v", err)
				}
				continue
			}
		}
		classes, hidden, err := s.pollOnce(ctx, conn)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.errs.add("wait events: %v", err)
			if broken(conn, err) {
				closeConn(conn)
				conn = nil
			}
			continue
		}
		s.own.Add(1)
		if hidden > 0 {
			s.errs.add("wait events: sessions of %s belong to another user and are hidden from the monitoring user; grant it pg_read_all_stats", s.cfg.AppName)
		}
		s.waits.add(classes)
	}
}

// connectWaits opens the wait-event connection and prepares its query.
func (s *Sampler) connectWaits(ctx context.Context) (*pgconn.PgConn, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	if _, err := conn.Prepare(pctx, waitsStmt, waitsSQL, nil); err != nil {
		closeConn(conn)
		return nil, err
	}
	s.own.Add(1) // parsing runs in a transaction of its own
	return conn, nil
}

// pollOnce returns the class of each active session of the benchmark and the
// number of its sessions hidden from the monitoring user.
func (s *Sampler) pollOnce(ctx context.Context, conn *pgconn.PgConn) (classes []string, hidden int, err error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	params := [][]byte{[]byte(s.cfg.AppName), []byte(strconv.FormatUint(uint64(s.statsPID.Load()), 10))}
	rr := conn.ExecPrepared(ctx, waitsStmt, params, nil, nil)
	for rr.NextRow() {
		if v := rr.Values()[0]; v != nil {
			classes = append(classes, string(v))
		} else {
			hidden++
		}
	}
	_, err = rr.Close()
	return classes, hidden, err
}

// waitCounts gathers the polls of one sampling interval.
type waitCounts struct {
	mu      sync.Mutex
	polls   int
	seen    int // active sessions over all polls
	byClass map[string]int
}

func (w *waitCounts) add(classes []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byClass == nil {
		w.byClass = map[string]int{}
	}
	w.polls++
	w.seen += len(classes)
	for _, c := range classes {
		w.byClass[c]++
	}
}

// take returns the interval's share of each class and the average number of
// active sessions, and starts the next interval; ok is false when there was
// no poll.
func (w *waitCounts) take() (shares map[string]float64, active float64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.polls == 0 {
		return nil, 0, false
	}
	if w.seen > 0 {
		shares = make(map[string]float64, len(w.byClass))
		for c, n := range w.byClass {
			shares[c] = float64(n) / float64(w.seen)
		}
	}
	active = float64(w.seen) / float64(w.polls)
	w.polls, w.seen, w.byClass = 0, 0, nil
	return shares, active, true
}
