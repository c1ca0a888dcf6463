package benchkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// SetupInstall is Setup for benches that start servers of their own: the
// pgbakeoff binary, the PostgreSQL install of the version, and the scratch
// directory, with no server left running.
func SetupInstall(ctx context.Context, version string) (bin string, install *localpg.Install, dir string, cleanup func(), err error) {
	bin, srv, dir, cleanup, err := Setup(ctx, version, nil)
	if err != nil {
		return "", nil, "", nil, err
	}
	install = &localpg.Install{BinDir: srv.BinDir, Version: srv.Version, Major: srv.Major}
	if err := srv.Stop(ctx); err != nil {
		cleanup()
		return "", nil, "", nil, err
	}
	return bin, install, dir, cleanup, nil
}

// TPCBCluster starts a cluster in dir and loads TPC-B at scale into it with
// pgbakeoff's binary; stop stops and removes it.
func TPCBCluster(ctx context.Context, bin, dir string, scale int, opts localpg.ClusterOptions) (c *localpg.Cluster, t *target.Target, stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	opts.BaseDir = dir
	if c, err = localpg.StartCluster(ctx, opts); err != nil {
		return nil, nil, nil, err
	}
	stop = func() { c.Stop(context.Background()); c.Remove() }
	if out, err := exec.Command(bin, "init", "tpcb", "--scale", strconv.Itoa(scale), "--dsn", c.DSN()).CombinedOutput(); err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("init: %v\n%s", err, out)
	}
	if t, err = target.Parse(c.DSN()); err != nil {
		stop()
		return nil, nil, nil, err
	}
	return c, t, stop, nil
}
