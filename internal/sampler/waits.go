package sampler

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// waitsSQL lists what each active session of the benchmark ($1) is waiting
// on, leaving out the sampler's own two sessions and those in $2. A session of
// another user shows no state without pg_read_all_stats, and yields NULL.
// Other client sessions active in the benchmark's database come too, with
// their application_name and process ID in the last two columns: their work
// competes with the benchmark's.
const waitsSQL = `select case when state is null then null
	when wait_event is null then 'CPU'
	else wait_event_type || ':' || wait_event end,
	application_name <> $1, application_name, pid
from pg_stat_activity
where pid <> pg_backend_pid() and pid <> all($2::int[])
	and (application_name = $1 and (state = 'active' or state is null)
		or application_name <> $1 and state = 'active' and backend_type = 'client backend'
			and datname = current_database())`

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
		classes, others, hidden, err := s.pollOnce(ctx, conn)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.noteDown(err)
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
		s.waits.add(classes, others)
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

// pollOnce returns the class of each active session of the benchmark, the
// other sessions active in its database ("application_name (pid N)"), and the
// number of the benchmark's sessions hidden from the monitoring user.
func (s *Sampler) pollOnce(ctx context.Context, conn *pgconn.PgConn) (classes, others []string, hidden int, err error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	pids := []string{strconv.FormatUint(uint64(s.statsPID.Load()), 10)}
	if s.cfg.Exclude != nil {
		for _, p := range s.cfg.Exclude() {
			pids = append(pids, strconv.FormatUint(uint64(p), 10))
		}
	}
	params := [][]byte{[]byte(s.cfg.AppName), []byte("{" + strings.Join(pids, ",") + "}")}
	rr := conn.ExecPrepared(ctx, waitsStmt, params, nil, nil)
	for rr.NextRow() {
		v := rr.Values()
		switch {
		case string(v[1]) == "t":
			others = append(others, fmt.Sprintf("%s (pid %s)", cmp.Or(string(v[2]), "no application_name"), v[3]))
		case v[0] != nil:
			classes = append(classes, string(v[0]))
		default:
			hidden++
		}
	}
	_, err = rr.Close()
	return classes, others, hidden, err
}

// waitCounts gathers the polls of one sampling interval.
type waitCounts struct {
	mu      sync.Mutex
	polls   int
	seen    int // active sessions over all polls
	byClass map[string]int
	others  int            // other sessions active in the database, over all polls
	names   map[string]int // those sessions, over the whole run
}

func (w *waitCounts) add(classes, others []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byClass == nil {
		w.byClass = map[string]int{}
	}
	if len(others) > 0 && w.names == nil {
		w.names = map[string]int{}
	}
	for _, o := range others {
		w.names[o]++
	}
	w.others += len(others)
	w.polls++
	w.seen += len(classes)
	for _, c := range classes {
		w.byClass[c]++
	}
}

// take returns the interval's share of each class and the average numbers of
// the benchmark's and of other active sessions, and starts the next interval;
// ok is false when there was no poll.
func (w *waitCounts) take() (shares map[string]float64, active, others float64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.polls == 0 {
		return nil, 0, 0, false
	}
	others = float64(w.others) / float64(w.polls)
	w.others = 0
	if w.seen > 0 {
		shares = make(map[string]float64, len(w.byClass))
		for c, n := range w.byClass {
			shares[c] = float64(n) / float64(w.seen)
		}
	}
	active = float64(w.seen) / float64(w.polls)
	w.polls, w.seen, w.byClass = 0, 0, nil
	return shares, active, others, true
}

// seenOthers lists the other sessions seen active, the most often seen first,
// at most five.
func (w *waitCounts) seenOthers() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Collect(maps.Keys(w.names))
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(w.names[b]-w.names[a], strings.Compare(a, b)) })
	return out[:min(len(out), 5)]
}
