package metrics_test

import (
	"os"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
