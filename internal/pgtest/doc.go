// Package pgtest gives tests a real PostgreSQL server: one per test
// binary, started on first use and stopped after the tests.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
//
//	func TestLoad(t *testing.T) {
//		dsn := pgtest.NewDatabase(t) // empty database, dropped after the test
//		conn, err := pgx.Connect(ctx, dsn)
//		...
//	}
//
// Tests that need the same data in place share one load: Loaded fills a
// database once per test binary and gives each test a copy of it.
//
// The server is a localpg server in a temporary directory, running the
// version named by PGBAKEOFF_TEST_PG_VERSION, else the newest installed
// one, else a download of localpg.FallbackVersion (cached for later runs).
// It runs with fsync off and max_connections 200. Set PGBAKEOFF_TEST_DSN
// to use an existing server instead; its user must be able to create
// databases. A server that cannot be started fails the tests that need it.
package pgtest
