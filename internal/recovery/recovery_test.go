package recovery

import (
	"context"
	"maps"
	"os"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// TestTrackerFigures: two clients commit every 10 ms; a fault at 12 s stops
// client 0 for 800 ms and client 1 for 1.5 s, each losing one transaction with
// its connection, and client 1 comes back at half its pace for a second. The
// figures are those of that timeline.
func TestTrackerFigures(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	fault := t0.Add(12 * time.Second)
	tr := NewTracker(t0, []time.Time{fault}, 2, fault.Add(20*time.Second))
	commit := func(c int, at time.Time) {
		tr.Add(driver.TxEvent{Client: c, Start: at.Add(-time.Millisecond), End: at})
	}
	for at := t0; at.Before(t0.Add(30 * time.Second)); at = at.Add(10 * time.Millisecond) {
		d := at.Sub(fault)
		if d < 0 || d >= 800*time.Millisecond {
			commit(0, at)
		}
		switch {
		case d < 0 || d >= 2500*time.Millisecond:
			commit(1, at)
		case d >= 1500*time.Millisecond && (d/(10*time.Millisecond))%2 == 0:
			commit(1, at)
		}
	}
	tr.Add(driver.TxEvent{Client: 0, End: fault.Add(5 * time.Millisecond), Failed: true, SQLState: "57P01"})
	tr.Add(driver.TxEvent{Client: 1, End: fault.Add(7 * time.Millisecond), Failed: true, SQLState: "08006"})
	tr.Add(driver.TxEvent{Client: 1, End: fault.Add(900 * time.Millisecond), Failed: true, SQLState: "57P03"})
	tr.Add(driver.TxEvent{Client: 1, End: fault.Add(-time.Second), Failed: true, SQLState: "40001"}) // before: not the fault's

	f := tr.Figures(0, t0.Add(30*time.Second))
	want := Figures{FirstFailure: 5 * time.Millisecond, NoCommits: 800 * time.Millisecond,
		ClientMedian: 1510 * time.Millisecond, ClientMax: 1510 * time.Millisecond, Before: 200, InDoubt: 3}
	if f.FirstFailure != want.FirstFailure || f.NoCommits != want.NoCommits || f.ClientMax != want.ClientMax || f.Before != want.Before || f.InDoubt != want.InDoubt {
		t.Errorf("figures %+v, want %+v", f, want)
	}
	if f.Resumed != 800*time.Millisecond {
		t.Errorf("commits resumed %s after the fault, want 800ms", f.Resumed)
	}
	if f.ClientMedian != 810*time.Millisecond && f.ClientMedian != 1510*time.Millisecond {
		t.Errorf("client median %s, want one of the two clients' gaps", f.ClientMedian)
	}
	// 90% of 200 a second is 180: client 0's 100 and client 1's 50 fall short
	// until client 1 is back at full pace at 2.5 s; a second from 2.2 s holds
	// 100 + 15 + 80 = 195.
	if f.Recovered < 2*time.Second || f.Recovered > 2500*time.Millisecond {
		t.Errorf("recovered after %s, want between 2 s and 2.5 s", f.Recovered)
	}
	if f.Errors["57P01"] != 1 || f.Errors["08006"] != 1 || f.Errors["57P03"] != 1 || f.Errors["40001"] != 0 {
		t.Errorf("errors %v", f.Errors)
	}
}

// TestTrackerFirstFailure: the first failure is the first that comes from the
// fault: a serialization failure, a deadlock or a duplicate key right after it
// are the workload's own, a write refused by a standby, a connection lost or
// one refused (with no transaction failing) are the fault's.
func TestTrackerFirstFailure(t *testing.T) {
	t0 := time.Unix(5_000_000, 0)
	fault := t0.Add(10 * time.Second)
	own := []driver.TxEvent{{End: fault.Add(2 * time.Millisecond), Failed: true, SQLState: "40001"},
		{End: fault.Add(3 * time.Millisecond), Failed: true, SQLState: "40P01"},
		{End: fault.Add(4 * time.Millisecond), Failed: true, SQLState: "23505"}}
	cases := []struct {
		name   string
		events []driver.TxEvent
		lost   []time.Duration // connections lost or refused, from the fault
		want   time.Duration
	}{
		{"workload errors only", own, nil, -1},
		{"read-only", append(own, driver.TxEvent{End: fault.Add(50 * time.Millisecond), Failed: true, SQLState: "25006"}), nil, 50 * time.Millisecond},
		{"admin shutdown", append(own, driver.TxEvent{End: fault.Add(40 * time.Millisecond), Failed: true, SQLState: "57P01"}), nil, 40 * time.Millisecond},
		{"connection failure", append(own, driver.TxEvent{End: fault.Add(60 * time.Millisecond), Failed: true, SQLState: "08006"}), nil, 60 * time.Millisecond},
		{"refused", own, []time.Duration{-time.Second, 30 * time.Millisecond, 90 * time.Millisecond}, 30 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := NewTracker(t0, []time.Time{fault}, 1, fault.Add(20*time.Second))
			for at := t0; at.Before(t0.Add(20 * time.Second)); at = at.Add(10 * time.Millisecond) {
				tr.Add(driver.TxEvent{End: at})
			}
			for _, ev := range c.events {
				tr.Add(ev)
			}
			for _, d := range c.lost {
				tr.LostConnection(fault.Add(d))
			}
			f := tr.Figures(0, t0.Add(20*time.Second))
			if f.FirstFailure != c.want {
				t.Errorf("first failure %s after the fault, want %s", f.FirstFailure, c.want)
			}
			// The workload's errors still count among those after the fault.
			if f.Errors["40001"] != 1 || f.Errors["23505"] != 1 {
				t.Errorf("errors %v", f.Errors)
			}
		})
	}
}

// TestTrackerNeverRecovered: commits that stop for good are reported as not
// recovered, the time without them reaching the horizon.
func TestTrackerNeverRecovered(t *testing.T) {
	t0 := time.Unix(2_000_000, 0)
	fault := t0.Add(10 * time.Second)
	tr := NewTracker(t0, []time.Time{fault}, 1, fault.Add(5*time.Second))
	for at := t0; at.Before(fault); at = at.Add(50 * time.Millisecond) {
		tr.Add(driver.TxEvent{End: at})
	}
	f := tr.Figures(0, fault.Add(time.Minute))
	if f.Recovered != -1 || f.FirstFailure != -1 || f.NoCommits < 5*time.Second || f.ClientMax != -1 || f.Resumed != -1 {
		t.Errorf("figures %+v: want not recovered, no failure, 5 s without commits, no client back", f)
	}
}

// TestTrackerFaultsApart: two faults in one run, and one in the run's first
// second. Each fault's figures are its own: the first's gap is not the second's,
// which is longer, and the early fault's time before the run began is not a gap.
func TestTrackerFaultsApart(t *testing.T) {
	t0 := time.Unix(4_000_000, 0)
	early, f1, f2 := t0.Add(500*time.Millisecond), t0.Add(20*time.Second), t0.Add(40*time.Second)
	tr := NewTracker(t0, []time.Time{early, f1, f2}, 1, f2.Add(time.Minute))
	down := func(at time.Time, from, to time.Duration) bool { d := at.Sub(t0); return d >= from && d < to }
	for at := t0.Add(10 * time.Millisecond); at.Before(t0.Add(60 * time.Second)); at = at.Add(10 * time.Millisecond) {
		if down(at, 700*time.Millisecond, 900*time.Millisecond) || down(at, 20*time.Second, 21*time.Second) || down(at, 40*time.Second, 43*time.Second) {
			continue
		}
		tr.Add(driver.TxEvent{End: at})
	}
	end := t0.Add(60 * time.Second)
	for i, want := range []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second} {
		f := tr.Figures(i, end)
		if f.NoCommits < want || f.NoCommits > want+20*time.Millisecond || f.ClientMax < want || f.ClientMax > want+20*time.Millisecond {
			t.Errorf("fault %d: no commits %s, client %s, want %s", i, f.NoCommits, f.ClientMax, want)
		}
		if f.Recovered < 0 || f.Resumed < 0 {
			t.Errorf("fault %d: resumed %s, recovered %s", i, f.Resumed, f.Recovered)
		}
	}
	// The window's end is not a gap.
	if f := tr.Figures(2, t0.Add(59990*time.Millisecond)); f.NoCommits > 3*time.Second+20*time.Millisecond {
		t.Errorf("a gap at the window's end: %s", f.NoCommits)
	}
}

// TestTrackerSpansEndAtNextFault: in an hour's run with a fault every five
// minutes, each fault's timeline reaches to the next fault or the run's end only,
// and a commit long after a fault is not written to that fault's timeline. As the
// clients go on past a fault's span, its figures are settled and its timeline let
// go: a long run's memory stays that of the fault under way.
func TestTrackerSpansEndAtNextFault(t *testing.T) {
	t0 := time.Unix(5_000_000, 0)
	var faults []time.Time
	for k := 1; k <= 11; k++ {
		faults = append(faults, t0.Add(time.Duration(k)*5*time.Minute))
	}
	tr := NewTracker(t0, faults, 1, t0.Add(time.Hour))
	slots := func(i int) []atomic.Int32 {
		if s := tr.spans[i].Load(); s != nil {
			return s.slots
		}
		return nil
	}
	for i := range faults {
		// The last, five minutes before the run's end, to that end.
		if want := int((before+5*time.Minute)/Resolution) + 1; len(slots(i)) != want {
			t.Errorf("fault %d: a timeline of %d slots, want %d", i, len(slots(i)), want)
		}
	}
	// A commit 30 s after the third fault is on its timeline alone (the
	// fourth's lead begins 10 s before the fourth), not on the first two's.
	late := faults[2].Add(30 * time.Second)
	tr.Add(driver.TxEvent{End: late})
	for i := range faults {
		var n int64
		for k := range slots(i) {
			n += int64(slots(i)[k].Load())
		}
		want := int64(0)
		if i == 2 {
			want = 1
		}
		if n != want {
			t.Errorf("fault %d: %d commits on its timeline, want %d", i, n, want)
		}
	}
	// Through the hour, four clients commit at once every 100 ms but for the
	// 1.5 s after each fault: every fault but the last is settled as the
	// clients pass its span's end, with the figures it would have had at the
	// run's end.
	tr = NewTracker(t0, faults, 4, t0.Add(time.Hour))
	for at := t0.Add(time.Second); at.Before(t0.Add(time.Hour)); at = at.Add(100 * time.Millisecond) {
		if i := slices.IndexFunc(faults, func(f time.Time) bool { return !at.Before(f) && at.Before(f.Add(1500*time.Millisecond)) }); i >= 0 {
			continue
		}
		var wg sync.WaitGroup
		for c := range 4 {
			wg.Go(func() { tr.Add(driver.TxEvent{Client: c, End: at}) })
		}
		wg.Wait()
	}
	for i := range faults {
		if settled := tr.spans[i].Load() == nil; settled != (i < len(faults)-1) {
			t.Errorf("fault %d: settled %v", i, settled)
		}
		f := tr.Figures(i, t0.Add(time.Hour))
		if f.NoCommits < 1500*time.Millisecond || f.NoCommits > 1600*time.Millisecond || f.Resumed < 0 || f.Recovered < 0 {
			t.Errorf("fault %d: no commits %s, resumed %s, recovered %s; want 1.5-1.6 s, both found", i, f.NoCommits, f.Resumed, f.Recovered)
		}
	}
}

// TestTrackerSettlesAsAtTheEnd: three clients through two faults. Client 2
// loses its connection 100 ms after the first fault and is back only 10 s after
// the second, when it reports the transaction it lost, as the driver does;
// client 1 has a serialization failure after the second. Each fault, settled
// while the run goes on, has the figures of a tracker that saw the same
// transactions and never settled it: the late transaction counts, and holds the
// first fault open until it comes.
func TestTrackerSettlesAsAtTheEnd(t *testing.T) {
	t0 := time.Unix(6_000_000, 0)
	faults := []time.Time{t0.Add(10 * time.Second), t0.Add(40 * time.Second)}
	end := t0.Add(60 * time.Second)
	lostAt, backAt := faults[0].Add(100*time.Millisecond), faults[1].Add(10*time.Second)
	var events []driver.TxEvent // in the order they are reported
	for at := t0.Add(10 * time.Millisecond); at.Before(end); at = at.Add(10 * time.Millisecond) {
		if at.Equal(backAt) {
			events = append(events, driver.TxEvent{Client: 2, End: lostAt, Failed: true, SQLState: "57P01"})
		}
		for c := range 3 {
			if c == 2 && !at.Before(lostAt) && at.Before(backAt) {
				continue
			}
			if c == 1 && at.Equal(faults[1].Add(50*time.Millisecond)) {
				events = append(events, driver.TxEvent{Client: c, End: at, Failed: true, SQLState: "40001"})
				continue
			}
			events = append(events, driver.TxEvent{Client: c, End: at})
		}
	}
	settling := NewTracker(t0, faults, 3, end)
	for _, ev := range events {
		settling.Add(ev)
		if ev.Client == 2 && ev.End.Equal(lostAt.Add(-10*time.Millisecond)) {
			settling.LostConnection(lostAt) // as the driver finds the loss
		}
		// Looked at every 100 ms, the clients are all past the first fault's
		// span within 200 ms of client 2's return.
		settled := settling.spans[0].Load() == nil
		if (settled && ev.End.Before(backAt)) || (!settled && ev.End.After(backAt.Add(200*time.Millisecond))) {
			t.Fatalf("at %s: fault 1 settled %v, want it held open until client 2 is back", ev.End.Sub(t0), settled)
		}
	}
	if settling.spans[0].Load() != nil || settling.spans[1].Load() == nil {
		t.Fatal("want the first fault settled and the second, the last, not")
	}
	for i := range faults {
		// A tracker that is given only what ended before the fault's span was
		// over, a lost transaction among it, never settles it.
		whole := NewTracker(t0, faults, 3, end)
		whole.LostConnection(lostAt)
		for _, ev := range events {
			if !ev.End.After(whole.nexts[i].Add(settleAfter)) {
				whole.Add(ev)
			}
		}
		got, want := settling.Figures(i, end), whole.Figures(i, end)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("fault %d settled: %+v, want %+v", i, got, want)
		}
	}
	if f := settling.Figures(0, end); f.Errors["57P01"] != 1 || f.InDoubt != 1 || f.FirstFailure != 100*time.Millisecond {
		t.Errorf("fault 1: errors %v, %d in doubt, first failure %s; want the lost transaction, in doubt, at 100ms", f.Errors, f.InDoubt, f.FirstFailure)
	}
}

// TestReckon: acknowledged rows missing are lost; rows in flight are in doubt
// when present, unknown when not. The RPO runs from the earliest lost commit's
// acknowledgement to the failure: the primary's end where it is known, else
// the last acknowledgement before the session was lost; a single lost commit
// has one of the ledger's intervals at least, not 0.
func TestReckon(t *testing.T) {
	t0 := time.Unix(3_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var acked []ack
	for i := range uint32(10) {
		acked = append(acked, ack{i + 1, i * 100})
	}
	acked = append(acked, ack{13, 1500}) // on the new primary
	gone := []time.Time{ms(950)}
	all := map[int64]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 12: true, 13: true}
	r := reckon(t0, acked, []int64{11, 12, 12}, gone, all)
	r.Every = 20 * time.Millisecond
	want := Reckoning{Acknowledged: 11, Lost: 3, LostFrom: ms(700), LostTo: ms(900), LastAck: ms(900), InDoubt: 1, Unknown: 1, Every: 20 * time.Millisecond}
	if r != want {
		t.Errorf("reckoning %+v, want %+v", r, want)
	}
	cases := []struct {
		name    string
		present map[int64]bool
		failed  []time.Time
		want    time.Duration
	}{
		{"three lost", all, nil, 200 * time.Millisecond},
		{"three lost, primary killed", all, []time.Time{ms(200), ms(930)}, 230 * time.Millisecond},
		{"one lost", merge(all, 8, 9), nil, 20 * time.Millisecond},
		{"one lost, primary killed", merge(all, 8, 9), []time.Time{ms(960)}, 60 * time.Millisecond},
		{"one lost long before", merge(all, 9, 10), nil, 200 * time.Millisecond},
		{"none lost", merge(all, 8, 9, 10), nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := reckon(t0, acked, nil, gone, c.present)
			r.Every = 20 * time.Millisecond
			if got := r.RPO(c.failed...); got != c.want {
				t.Errorf("RPO %s, want %s (%+v)", got, c.want, r)
			}
		})
	}
}

// TestReckonFaults: two faults, each losing the commits acknowledged just
// before it. The first, a command's, took the primary away at an instant only
// the ledger's lost session tells, some time after it began: the commits made
// in between are its own, not the next fault's. The shares add up to the run's
// reckoning.
func TestReckonFaults(t *testing.T) {
	t0 := time.Unix(3_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var acked []ack
	for n := range uint32(31) {
		if n > 0 && n != 14 && n != 24 {
			acked = append(acked, ack{n, (n - 1) * 100}) // row n at (n-1)*100 ms
		}
	}
	// The command begins at 900 ms; the session is found lost at 1310 ms, row
	// 14 in flight and absent, rows 11 to 13 lost. The second fault stops the
	// primary at 2250 ms: rows 21 to 23 lost, row 24 in flight and present.
	gone := []time.Time{ms(1310), ms(2310)}
	present := map[int64]bool{}
	for seq := int64(1); seq <= 30; seq++ {
		if (seq < 11 || seq > 14) && (seq < 21 || seq > 23) {
			present[seq] = true
		}
	}
	faults := []Failure{{Began: ms(900)}, {Began: ms(2240), Stopped: ms(2250)}}
	rs := reckonFaults(t0, acked, []int64{14, 24}, gone, present, faults)
	want := []Reckoning{
		{Acknowledged: 13, Lost: 3, LostFrom: ms(1000), LostTo: ms(1200), LastAck: ms(1200), Unknown: 1},
		{Acknowledged: 15, Lost: 3, LostFrom: ms(2000), LostTo: ms(2200), LastAck: ms(2200), InDoubt: 1},
	}
	if len(rs) != 2 || rs[0] != want[0] || rs[1] != want[1] {
		t.Fatalf("reckonings\n%+v\nwant\n%+v", rs, want)
	}
	if a, b := rs[0].RPO(), rs[1].RPO(ms(2250)); a != 200*time.Millisecond || b != 250*time.Millisecond {
		t.Errorf("RPOs %s and %s, want 200ms (to the last acknowledgement) and 250ms (to the stop)", a, b)
	}
	all := reckon(t0, acked, []int64{14, 24}, gone, present)
	if all.Lost != rs[0].Lost+rs[1].Lost || all.Acknowledged != rs[0].Acknowledged+rs[1].Acknowledged ||
		all.InDoubt+all.Unknown != rs[0].InDoubt+rs[0].Unknown+rs[1].InDoubt+rs[1].Unknown {
		t.Errorf("the shares %+v do not add up to the run's %+v", rs, all)
	}
}

// merge is present with the rows seqs too.
func merge(present map[int64]bool, seqs ...int64) map[int64]bool {
	out := maps.Clone(present)
	for _, s := range seqs {
		out[s] = true
	}
	return out
}

// TestLedgerThroughCrash: the ledger commits through a server killed and started
// again, and with synchronous commits nothing it was told of is lost.
func TestLedgerThroughCrash(t *testing.T) {
	pgtest.Long(t)
	own := pgtest.OwnServer(t, localpg.Setting{Name: "synchronous_commit", Value: "on"})
	connect := func(ctx context.Context) (*pgconn.PgConn, error) {
		return pgconn.Connect(ctx, own.Server().DSN())
	}
	l, err := StartLedger(t.Context(), connect, "crash-test", 200)
	if err != nil {
		t.Fatal(err)
	}
	waitCommits(t, l, 50)
	if err := own.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := own.Restart(); err != nil {
		t.Fatal(err)
	}
	before := l.Commits()
	waitCommits(t, l, before+50)
	l.Stop()
	r, err := l.Reckon(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost != 0 || r.Acknowledged != l.Commits() || r.Acknowledged < before+50 {
		t.Errorf("reckoning %+v after %d commits", r, l.Commits())
	}
	// Counted, the rows are gone.
	if got := pgtest.Query(t, own.Server().DSN(), "select count(*) from "+Table); got != "0" {
		t.Errorf("%s rows left after reckoning", got)
	}
}

// waitCommits waits until the ledger has n acknowledged commits.
func waitCommits(t *testing.T, l *Ledger, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := l.WaitCommits(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// The ack log gives back every commit as it was added, whatever the steps between
// them, in about two bytes a commit at the ledger's pace.
func TestAckLog(t *testing.T) {
	var want []ack
	var l ackLog
	for i := range uint32(20000) {
		a := ack{seq: i + 1, ms: i * 20}
		switch {
		case i == 7: // a row refused or lost: its number skipped
			a.seq = 9
		case i > 7 && i < 12:
			a.seq += 300
		case i == 15000: // an hour's stall
			a.ms += 3_600_000
		}
		if len(want) > 0 && a.ms < want[len(want)-1].ms {
			a.ms = want[len(want)-1].ms
		}
		if len(want) > 0 && a.seq <= want[len(want)-1].seq {
			a.seq = want[len(want)-1].seq + 1
		}
		want = append(want, a)
		l.add(a)
	}
	var got []ack
	for a := range l.all {
		got = append(got, a)
	}
	if !slices.Equal(got, want) || l.n != len(want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%d acks back of %d (n %d), the first difference at %d", len(got), len(want), l.n, i)
	}
	if per := float64(len(l.buf)) / float64(l.n); per > 2.1 {
		t.Errorf("%.2f bytes a commit, want about 2", per)
	}
	n := 0
	for range l.all {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("stopped after %d, want 3", n)
	}
}
