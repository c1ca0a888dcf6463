package outage

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSeconds: overlapping outages count once, apart ones each, in any order.
func TestSeconds(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	o := []Outage{
		{Client: 1, Start: at(10), End: at(14)},
		{Client: 0, Start: at(0), End: at(5)},
		{Client: 2, Start: at(3), End: at(8)},
		{Client: 3, Start: at(11), End: at(12)},
	}
	if got := Seconds(o); got != 12 {
		t.Errorf("%g s, want 12: 0 to 8 and 10 to 14", got)
	}
	if o[0].Client != 1 {
		t.Error("the outages given were reordered")
	}
	if got := Seconds(nil); got != 0 {
		t.Errorf("no outage: %g s", got)
	}
}

// TestAllDown: the book notes when the last running client loses its connection,
// and forgets it once one has one again or stops, with a notice each time.
func TestAllDown(t *testing.T) {
	b := NewBook(func(s string) string { return s })
	b.Running(2)
	noticed := func() bool {
		select {
		case <-b.Changed():
			return true
		default:
			return false
		}
	}
	b.Lost()
	if since, _ := b.AllDownSince(); !since.IsZero() || noticed() || b.Down() != 1 {
		t.Fatal("one client of two down: all down")
	}
	b.Lost()
	if since, _ := b.AllDownSince(); since.IsZero() || !noticed() {
		t.Fatal("both down: not all down, or no notice")
	}
	b.Ended(Outage{Client: 0, Recovered: true})
	if since, _ := b.AllDownSince(); !since.IsZero() || !noticed() {
		t.Fatal("one back: still all down, or no notice")
	}
	b.ClientDone() // the client that came back stops: the other is all there is
	if since, _ := b.AllDownSince(); since.IsZero() || !noticed() {
		t.Fatal("the only running client down: not all down")
	}
	if len(b.Outages()) != 1 {
		t.Errorf("%d outages ended, want 1", len(b.Outages()))
	}
}

// TestConnectFailed: failed attempts count by cause, the most frequent first, with
// an example scrubbed of the password; the last one's cause is kept.
func TestConnectFailed(t *testing.T) {
	b := NewBook(func(s string) string { return strings.ReplaceAll(s, "secret", "xxx") })
	refused := errors.New("dial secret: " + syscall.ECONNREFUSED.Error())
	b.ConnectFailed(errors.Join(refused, syscall.ECONNREFUSED))
	b.ConnectFailed(syscall.ECONNREFUSED)
	b.ConnectFailed(syscall.ECONNRESET)
	errs := b.ConnectErrors()
	if len(errs) != 2 || errs[0].Cause != "connection refused" || errs[0].Count != 2 || strings.Contains(errs[0].Example, "secret") {
		t.Errorf("%+v", errs)
	}
	if _, last := b.AllDownSince(); last != "connection reset" {
		t.Errorf("last cause %q", last)
	}
	if n := b.TickConnectErrors(); n != 3 || b.TickConnectErrors() != 0 {
		t.Errorf("%d attempts in the tick, want 3 and then none", n)
	}
}

// TestReconnected: reconnections count the outages that ended connected, and the
// time down grows while some client is down and stands still while none is.
func TestReconnected(t *testing.T) {
	b := NewBook(func(s string) string { return s })
	b.Running(2)
	if n, down := b.Reconnected(); n != 0 || down != 0 {
		t.Fatalf("nothing lost: %d reconnects, %s down", n, down)
	}
	b.Lost()
	b.Lost()
	time.Sleep(20 * time.Millisecond) // time passing while down, the figure measured
	b.Ended(Outage{Client: 0, Recovered: true})
	_, mid := b.Reconnected()
	b.Ended(Outage{Client: 1}) // the client stops without a connection
	n, down := b.Reconnected()
	if n != 1 || down < 20*time.Millisecond || down < mid {
		t.Fatalf("%d reconnects, %s down (%s with one still down); want 1 and at least 20ms", n, down, mid)
	}
	time.Sleep(5 * time.Millisecond)
	if _, again := b.Reconnected(); again != down {
		t.Errorf("nobody down, yet the time down went from %s to %s", down, again)
	}
}

// TestOutagesKept: the book gives back each outage as it was ended, times to
// the microsecond, words and counts, in the order they began.
func TestOutagesKept(t *testing.T) {
	b := NewBook(func(s string) string { return s })
	t0 := time.Now()
	want := []Outage{
		{Client: 7, Start: t0.Add(time.Second), End: t0.Add(1500 * time.Millisecond), Cause: "57P01", Error: "FATAL: terminating connection", Attempts: 3, FailedTx: 1, Recovered: true},
		{Client: 2, Start: t0.Add(-time.Millisecond), End: t0.Add(2 * time.Second), Cause: "connection refused", Error: "dial: refused", Attempts: 9},
		{Client: 3, Start: t0.Add(time.Second + time.Microsecond), End: t0.Add(3 * time.Second), Cause: "57P01", Error: "FATAL: terminating connection", Attempts: 1, Recovered: true},
	}
	for _, o := range want {
		b.Lost()
		b.Ended(o)
	}
	got := b.Outages()
	order := []int{1, 0, 2}
	for i, o := range got {
		w := want[order[i]]
		near := func(a, b time.Time) bool { return a.Sub(b).Abs() < time.Microsecond }
		if !near(o.Start, w.Start) || !near(o.End, w.End) {
			t.Errorf("outage %d: %s to %s, want %s to %s", i, o.Start, o.End, w.Start, w.End)
		}
		o.Start, o.End = w.Start, w.End
		if o != w {
			t.Errorf("outage %d: %+v, want %+v", i, o, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d outages, want %d", len(got), len(want))
	}
}

// TestManyOutagesKept: a fault's worth of outages of a thousand clients, three
// times over, come back whole across the book's chunks, in the order they began.
func TestManyOutagesKept(t *testing.T) {
	b := NewBook(func(s string) string { return s })
	t0 := time.Now()
	const n = 3000
	for i := range n {
		// Ended out of the order they began: later clients began earlier.
		start := t0.Add(time.Duration(n-i) * time.Millisecond)
		b.Lost()
		b.Ended(Outage{Client: i, Start: start, End: start.Add(time.Duration(i) * time.Second), Cause: "57P01", Error: "terminating", Attempts: i%5 + 1, FailedTx: i % 2, Recovered: i%3 > 0})
	}
	got := b.Outages()
	if len(got) != n {
		t.Fatalf("%d outages, want %d", len(got), n)
	}
	for k, o := range got {
		i := n - 1 - k
		start := t0.Add(time.Duration(n-i) * time.Millisecond)
		if o.Client != i || o.Attempts != i%5+1 || o.FailedTx != i%2 || o.Recovered != (i%3 > 0) || o.Cause != "57P01" || o.Error != "terminating" ||
			o.Start.Sub(start).Abs() >= time.Microsecond || o.End.Sub(start.Add(time.Duration(i)*time.Second)).Abs() >= time.Microsecond {
			t.Fatalf("outage %d: %+v, want client %d's", k, o, i)
		}
	}
}
