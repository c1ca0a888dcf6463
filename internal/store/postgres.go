package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// A results store may live in a PostgreSQL database (--results postgres://...),
// where many processes write at once: the shards of a run, several users. It holds
// the same tables in the same schema versions as a SQLite store, in a schema of
// their own (pgbakeoffSchema), and the same statements run against it: the driver
// below turns SQLite's ? placeholders into PostgreSQL's $n.

// pgbakeoffSchema holds a PostgreSQL store's tables, apart from anything else in
// the database.
const pgbakeoffSchema = "pgbakeoff"

// IsPostgres tells whether a --results value names a PostgreSQL database rather
// than a file: a postgres:// or postgresql:// URI, or libpq key=value settings.
func IsPostgres(results string) bool {
	s := strings.TrimSpace(results)
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		return true
	}
	for _, f := range strings.Fields(s) {
		k, _, ok := strings.Cut(f, "=")
		switch k {
		case "host", "hostaddr", "port", "dbname", "user", "service", "sslmode":
			if ok {
				return true
			}
		}
	}
	return false
}

// checkFile refuses a results location that is to be a file but reads as a URL:
// POSTGRES://user:pw@host is no DSN libpq takes, and as a file name it would
// put the password into the file system.
func checkFile(results string) error {
	if target.LooksLikeURL(results) {
		scheme, _, _ := strings.Cut(strings.TrimSpace(results), "://")
		return fmt.Errorf("results store %s: a URL of scheme %q is neither a file nor a PostgreSQL database; write postgres:// (lower case, as libpq does) or give a file path",
			target.Redact(results), scheme)
	}
	return nil
}

// openPostgres opens the store in the database dsn names, creating its schema and
// bringing it up to date unless readOnly, when an out-of-date one is refused.
func openPostgres(ctx context.Context, dsn string, readOnly bool) (*Store, error) {
	name := target.Redact(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// Not pgx's words: they may quote the DSN, password and all.
		return nil, fmt.Errorf("results store %s: the DSN does not parse: give a postgres:// URI or key=value settings", name)
	}
	cfg.RuntimeParams["search_path"] = pgbakeoffSchema
	cfg.RuntimeParams["application_name"] = "pgbakeoff-results"
	db := sql.OpenDB(rebindConnector{stdlib.GetConnector(*cfg)})
	s := &Store{db: db, path: name, pg: true, readOnly: readOnly}
	if err := s.setupPostgres(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("results store %s: %w", name, err)
	}
	return s, nil
}

// setupPostgres migrates the schema under an advisory lock, so that processes
// opening a new store at once apply each migration once, and marks the runs of
// this host whose process is gone.
func (s *Store) setupPostgres(ctx context.Context) (err error) {
	if err := s.db.PingContext(ctx); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = rollback(tx, err)
		}
	}()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", migrationLock); err != nil {
		return fmt.Errorf("lock the schema: %w", err)
	}
	var exists bool
	if err := tx.QueryRowContext(ctx, "SELECT to_regclass('pgbakeoff.schema_version') IS NOT NULL").Scan(&exists); err != nil {
		return err
	}
	version := 0
	if exists {
		if err := tx.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&version); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
	}
	latest := len(migrations)
	switch {
	case version > latest:
		return fmt.Errorf("%w: schema version %d, this one knows up to %d", ErrSchemaTooNew, version, latest)
	case version < latest && s.readOnly && exists:
		return fmt.Errorf("schema version %d is older than this pgbakeoff's %d: a command that writes results brings it up to date", version, latest)
	case version < latest && s.readOnly:
		return fmt.Errorf("%w: the database has no pgbakeoff results (schema %s)", ErrNotStore, pgbakeoffSchema)
	}
	if version < latest {
		if !exists {
			create := "CREATE SCHEMA IF NOT EXISTS " + pgbakeoffSchema + "; CREATE TABLE schema_version (version int NOT NULL); INSERT INTO schema_version VALUES (0)"
			if _, err := tx.ExecContext(ctx, create); err != nil {
				return fmt.Errorf("create schema %s: %w", pgbakeoffSchema, err)
			}
		}
		for v := version; v < latest; v++ {
			if _, err := tx.ExecContext(ctx, postgresSQL(migrations[v])); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "UPDATE schema_version SET version = ?", latest); err != nil {
			return fmt.Errorf("set schema version %d: %w", latest, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if s.readOnly {
		return s.findAbandoned(ctx)
	}
	return s.markAbandoned(ctx)
}

// migrationLock is the advisory lock key migrations take.
var migrationLock = int64(fnvKey("pgbakeoff schema"))

func fnvKey(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64() >> 1 // a positive bigint
}

// The migrations are written for SQLite; these rules make PostgreSQL's of them:
// the same tables, columns and keys, in its types.
var postgresTypes = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\bid\s+INTEGER PRIMARY KEY\b`), "id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
	{regexp.MustCompile(`\)\s*WITHOUT ROWID;`), ");"},
	{regexp.MustCompile(`\bBLOB\b`), "BYTEA"},
	{regexp.MustCompile(`\bREAL\b`), "DOUBLE PRECISION"},
	// The 0-or-1 columns, which Go writes and reads as bool (errors.retried and
	// run_flags.invalid; intervals.retried is a count).
	{regexp.MustCompile(`\bINTEGER NOT NULL,(\s+)-- (0 or 1|1: )`), "BOOLEAN NOT NULL,${1}-- ${2}"},
	{regexp.MustCompile(`\bINTEGER\b`), "BIGINT"},
}

// postgresSQL is a SQLite migration in PostgreSQL's types.
func postgresSQL(sqlite string) string {
	for _, r := range postgresTypes {
		sqlite = r.re.ReplaceAllString(sqlite, r.with)
	}
	return sqlite
}

// rebind turns ? placeholders into $1, $2, ...; the statements have no ? inside
// quotes.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// rebindConnector opens pgx's database/sql connections, rebinding each statement.
type rebindConnector struct{ driver.Connector }

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rebindConn{conn.(*stdlib.Conn)}, nil
}

// rebindConn is pgx's connection with every statement rebound.
type rebindConn struct{ *stdlib.Conn }

func (c *rebindConn) Prepare(query string) (driver.Stmt, error) { return c.Conn.Prepare(rebind(query)) }

func (c *rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

func (c *rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

func (c *rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// postgresStudyLock holds an advisory lock for a study in the store's database,
// on a connection of its own, for as long as the study runs.
type postgresStudyLock struct {
	conn *pgx.Conn
}

func lockPostgresStudy(results, name string) (*StudyLock, error) {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(results)
	if err != nil {
		return nil, fmt.Errorf("results store %s: the DSN does not parse: give a postgres:// URI or key=value settings", target.Redact(results))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("lock study %s in %s: %w", name, target.Redact(results), err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(fnvKey("pgbakeoff study "+name))).Scan(&got); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("lock study %s in %s: %w", name, target.Redact(results), err)
	}
	if !got {
		conn.Close(ctx)
		return nil, fmt.Errorf("study %s is already running against %s: wait for it to end, or stop it", name, target.Redact(results))
	}
	return &StudyLock{pg: &postgresStudyLock{conn: conn}}, nil
}
