// Command pgbakeoff benchmarks PostgreSQL deployments side by side.
package main

import (
	"os"

	"github.com/pgbakeoff/pgbakeoff/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.NewEnv()))
}
