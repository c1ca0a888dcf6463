package driver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestDurationOverflow: durations that would carry the run's deadlines past what
// time.Time holds in nanoseconds (the year 2262) are refused before the run
// starts, instead of every transaction failing on a deadline in the past, naming
// the Config field.
func TestDurationOverflow(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.Query(t, dsn, "create table kv(k int primary key, v int); insert into kv select g, 0 from generate_series(1, 100) g")
	long := 2100000 * time.Hour // 240 years
	for _, c := range []struct {
		name string
		cfg  driver.Config
		want string
	}{
		{"duration", driver.Config{Duration: long}, "Duration"},
		{"warmup", driver.Config{Warmup: long, Duration: time.Second}, "Warmup"},
		{"together", driver.Config{Warmup: 60 * 365 * 24 * time.Hour, Duration: 60 * 365 * 24 * time.Hour}, "Warmup and Duration"},
		{"tx-timeout", driver.Config{Duration: time.Second, TxTimeout: long}, "TxTimeout"},
		{"outage-timeout", driver.Config{Duration: time.Second, OutageTimeout: long}, "OutageTimeout"},
		{"connect-timeout", driver.Config{Duration: time.Second, ConnectTimeout: long}, "ConnectTimeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Target, cfg.Scripts, cfg.Clients = parse(t, dsn), []*driver.Script{readScript()}, 1
			// Should the run start, it is stopped soon.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := driver.Run(ctx, cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "too long") {
				t.Errorf("error %v, want one saying %s is too long", err, c.want)
			}
		})
	}
}
