package engine

import (
	"os"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) {
	// Golden files hold times as this zone prints them.
	time.Local = time.UTC
	os.Exit(pgtest.Run(m))
}
