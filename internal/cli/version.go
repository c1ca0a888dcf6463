package cli

import (
	"fmt"
	"runtime"

	"github.com/pgbakeoff/pgbakeoff/internal/machine"
)

// version says which build this is, as runs record it (machine.Version), and the
// Go that built it.
func version() string {
	return fmt.Sprintf("%s (%s, %s/%s)", machine.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
