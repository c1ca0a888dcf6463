package driver

import (
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
)

// SetYieldEvery changes how often clients waiting in the kernel yield, so that a
// test can compare runs with and without (see pgwire.SetYieldEvery).
func SetYieldEvery(d time.Duration) (restore func()) { return pgwire.SetYieldEvery(d) }
