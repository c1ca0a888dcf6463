package pgwire

import (
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestReadSome: on a blocking connection, as an event loop reads it, an answer
// that comes in pieces is whole only once its last ReadyForQuery has come, and
// Await then reads it without waiting.
func TestReadSome(t *testing.T) {
	c, _ := open(t, pgtest.NewDatabase(t), true)
	if !c.Blocking() {
		t.Skip("no blocking socket here")
	}
	c.KeepRows(true)
	c.AppendQuery([]byte("SELECT pg_sleep(0.05)"))
	c.Queue()
	c.AppendQuery([]byte("SELECT repeat('y', 100) FROM generate_series(1, 3000)"))
	if err := c.WriteOut(); err != nil {
		t.Fatal(err)
	}
	reads := 1
	for deadline := time.Now().Add(10 * time.Second); !c.ReadSome(); reads++ {
		if time.Now().After(deadline) {
			t.Fatal("no whole answer after 10 s")
		}
	}
	if err := c.Await(); err != nil || c.Err() != nil || c.KeptRows() != 3000 {
		t.Fatalf("%v %v, %d rows", err, c.Err(), c.KeptRows())
	}
	if reads < 2 {
		t.Errorf("the answer came whole in %d read, after a pause of 50 ms", reads)
	}
}
