package driver_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestIntervalPhases: an interval is labelled with the phase it covers, though it
// is reported a little after the window's edge that ends it.
func TestIntervalPhases(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table kv(k int primary key, v int); insert into kv select g, 0 from generate_series(1, 100) g")
	var ivs []driver.Interval
	res, err := driver.Run(context.Background(), driver.Config{Target: parse(t, dsn), Scripts: []*driver.Script{readScript()},
		Clients: 1, Warmup: 2 * time.Second, Duration: 2 * time.Second, Interval: time.Second,
		OnInterval: func(iv driver.Interval) { ivs = append(ivs, iv) }})
	if err != nil {
		t.Fatal(err)
	}
	var got []driver.Phase
	for _, iv := range ivs {
		if iv.End.Sub(iv.Start) >= 500*time.Millisecond {
			got = append(got, iv.Phase)
		}
	}
	if want := []driver.Phase{driver.Warmup, driver.Warmup, driver.Measure, driver.Measure}; !reflect.DeepEqual(got, want) {
		t.Errorf("phases of the whole intervals %v, want %v", got, want)
	}
	for _, iv := range ivs {
		in := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
		want := driver.Measure
		switch {
		case in.Before(res.WindowStart):
			want = driver.Warmup
		case !in.Before(res.WindowEnd):
			want = driver.After
		}
		if iv.Phase != want {
			t.Errorf("interval %d (%s to %s after the start) is labelled %s; most of it is in %s", iv.Seq,
				iv.Start.Sub(res.Start), iv.End.Sub(res.Start), iv.Phase, want)
		}
	}
}
