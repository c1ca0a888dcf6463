package tpcc_test

import (
	"os"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestMain starts one PostgreSQL server for all of the package's tests, internal and
// external: a test binary may have only one TestMain, so it lives here alone.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
