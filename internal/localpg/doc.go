// Package localpg runs PostgreSQL servers on this machine for benchmarks
// and tests.
//
// FindBinaries looks for an installed PostgreSQL (pg_config, PATH, and the
// usual package directories) and otherwise downloads the release from the
// Zonky embedded-postgres-binaries on Maven Central, checks its SHA-1 and
// caches it under DefaultCacheDir, so later starts work offline.
//
// Start creates a data directory with initdb and starts postgres as a
// background process listening on 127.0.0.1 and a private Unix socket:
//
//	s, err := localpg.Start(ctx, localpg.Options{
//		Name:     "bench",
//		Version:  "16",
//		Settings: []localpg.Setting{{Name: "shared_buffers", Value: "1GB"}},
//		Log:      os.Stderr,
//	})
//	if err != nil {
//		return err
//	}
//	defer s.Stop(ctx)
//	conn, err := pgx.Connect(ctx, s.DSN())
//
// A Registry keeps servers across processes, so one command can start a
// server and a later one list, stop or remove it:
//
//	reg, err := localpg.DefaultRegistry()
//	err = reg.Save(s)
//	...
//	s, err := reg.Get("bench")
//	err = s.Stop(ctx)
//
// Server directories in the registry's directory that it has no entry for,
// such as those of servers started without Save, are leftovers: List shows
// them, Get and Remove take them by name, and Prune removes those no server
// runs on. A failed Start removes what it created.
//
// StartCluster starts a primary with streaming standbys, each a Server on
// its own port, cloned through the backup functions since the downloaded
// binaries have no pg_basebackup. Its DSN names every node with
// target_session_attrs=read-write, and its methods serve failovers:
//
//	c, err := localpg.StartCluster(ctx, localpg.ClusterOptions{
//		Options:  localpg.Options{Name: "ha", Version: "17"},
//		Standbys: 1, Synchronous: localpg.SyncOn,
//	})
//	...
//	err = c.Nodes[0].Signal(syscall.SIGKILL)
//	err = c.Promote(ctx, c.Nodes[1])  // c.DSN() now reaches node 1
//	err = c.Follow(ctx, c.Nodes[0], c.Nodes[1])
//	err = c.WaitStreaming(ctx, c.Nodes[0], c.Nodes[1]) // else c.Reclone
//
// PostgreSQL refuses to run as root. When the caller is root, initdb and
// postgres run as the postgres system user, or a pgbakeoff system user
// created for the purpose, or nobody; binaries and data then live under
// /var/cache/pgbakeoff and /var/lib/pgbakeoff, which that user can reach.
package localpg
