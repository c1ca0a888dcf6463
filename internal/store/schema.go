package store

import (
	"context"
	"database/sql"
	"fmt"
)

// applicationID marks a SQLite file as a pgbakeoff results store ("pgbk"),
// so Open refuses to add tables to some other program's database.
const applicationID = 0x7067626b

// migrations are applied in order; the store's PRAGMA user_version is the
// number applied so far. Append only: never edit a migration that has shipped.
//
// Times are TEXT in UTC with a fixed-width layout (timeLayout), so they sort
// as text and read well in the sqlite3 shell. Maps are JSON objects.
var migrations = []string{
	// 1: runs and what they measured.
	`
CREATE TABLE runs (
	id              INTEGER PRIMARY KEY,
	target          TEXT NOT NULL,
	workload        TEXT NOT NULL,
	script          TEXT NOT NULL,
	clients         INTEGER NOT NULL,
	params          TEXT NOT NULL,  -- JSON object
	server_version  TEXT NOT NULL,
	settings        TEXT NOT NULL,  -- JSON object
	labels          TEXT NOT NULL,  -- JSON object
	started         TEXT NOT NULL,
	ended           TEXT,           -- NULL while running
	status          TEXT NOT NULL,
	client_cpu_user REAL NOT NULL,  -- seconds
	client_cpu_sys  REAL NOT NULL,
	summary         TEXT            -- JSON; NULL while running
);
CREATE INDEX runs_started ON runs (started);
CREATE INDEX runs_workload_started ON runs (workload, started);

CREATE TABLE intervals (
	run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,
	phase       TEXT NOT NULL,
	start_time  TEXT NOT NULL,
	end_time    TEXT NOT NULL,
	txns        INTEGER NOT NULL,
	failed      INTEGER NOT NULL,
	retried     INTEGER NOT NULL,
	tps         REAL NOT NULL,
	lat_avg_ms  REAL NOT NULL,
	lat_p50_ms  REAL NOT NULL,
	lat_p90_ms  REAL NOT NULL,
	lat_p95_ms  REAL NOT NULL,
	lat_p99_ms  REAL NOT NULL,
	lat_p999_ms REAL NOT NULL,
	lat_max_ms  REAL NOT NULL,
	errors      INTEGER NOT NULL,
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE histograms (
	run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	tx_type TEXT NOT NULL,
	kind    TEXT NOT NULL,
	encoded BLOB NOT NULL,          -- hdrhistogram-go snapshot
	PRIMARY KEY (run_id, tx_type, kind)
);

CREATE TABLE errors (
	run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	sqlstate TEXT NOT NULL,
	tx_type  TEXT NOT NULL,
	retried  INTEGER NOT NULL,      -- 0 or 1
	class    TEXT NOT NULL,
	count    INTEGER NOT NULL,
	example  TEXT NOT NULL,
	PRIMARY KEY (run_id, sqlstate, tx_type, retried)
) WITHOUT ROWID;

CREATE TABLE server_stats (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	point  TEXT NOT NULL,
	at     TEXT NOT NULL,
	PRIMARY KEY (run_id, point)
) WITHOUT ROWID;

CREATE TABLE server_stat_values (
	run_id INTEGER NOT NULL,
	point  TEXT NOT NULL,
	name   TEXT NOT NULL,           -- pg_stat_database column
	value  INTEGER NOT NULL,
	PRIMARY KEY (run_id, point, name),
	FOREIGN KEY (run_id, point) REFERENCES server_stats (run_id, point) ON DELETE CASCADE
) WITHOUT ROWID;
`,
	// 2: the server sampled during runs, why a run is not to be trusted, and studies.
	`
CREATE TABLE samples (
	run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	start_time TEXT NOT NULL,
	end_time   TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE sample_values (
	run_id INTEGER NOT NULL,
	seq    INTEGER NOT NULL,
	name   TEXT NOT NULL,           -- e.g. commits, wal_bytes, server_cpu, wait:LWLock:WALWrite
	value  REAL NOT NULL,
	PRIMARY KEY (run_id, seq, name),
	FOREIGN KEY (run_id, seq) REFERENCES samples (run_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE run_flags (
	run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	flag    TEXT NOT NULL,          -- restarted, failover, client_cpu, errors, dip, checkpoint
	invalid INTEGER NOT NULL,       -- 1: the run's figures are not to be trusted; 0: a note
	reason  TEXT NOT NULL,
	PRIMARY KEY (run_id, flag)
) WITHOUT ROWID;

CREATE TABLE studies (
	id      INTEGER PRIMARY KEY,
	name    TEXT NOT NULL UNIQUE,
	file    TEXT NOT NULL,          -- the study file's path when last run
	spec    TEXT NOT NULL,          -- its text then
	created TEXT NOT NULL,
	updated TEXT NOT NULL
);

-- The latest attempt at each cell of a study's matrix.
CREATE TABLE study_runs (
	study_id    INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
	key         TEXT NOT NULL,      -- target/workload/clients/repetition
	fingerprint TEXT NOT NULL,      -- of what the cell measures, to notice edits
	run_id      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
	status      TEXT NOT NULL,
	PRIMARY KEY (study_id, key)
);

-- Datasets a study has loaded, so a resumed study does not load them again.
CREATE TABLE study_datasets (
	study_id    INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
	target      TEXT NOT NULL,
	dataset     TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	loaded      TEXT NOT NULL,
	load_s      REAL NOT NULL,
	PRIMARY KEY (study_id, target, dataset)
);
`,
	// 3: how many clients were without a connection in each interval.
	`
ALTER TABLE intervals ADD COLUMN down INTEGER NOT NULL DEFAULT 0;           -- clients without a connection at its end
ALTER TABLE intervals ADD COLUMN connect_errors INTEGER NOT NULL DEFAULT 0; -- failed attempts to connect again
`,
	// 4: the process writing each run, so a run whose process is gone can be told
	// from one still going. pid 0: not recorded (runs of older versions).
	`
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';      -- os.Hostname of the process
ALTER TABLE runs ADD COLUMN pid_start TEXT NOT NULL DEFAULT ''; -- when it started, to tell it from a later one with the same pid
`,
	// 5: the shards of a run that have arrived, for their common start.
	`
CREATE TABLE shard_arrivals (
	grp     TEXT NOT NULL,          -- the run's shard group
	shard   INTEGER NOT NULL,       -- from 0
	shards  INTEGER NOT NULL,
	host    TEXT NOT NULL,
	pid     INTEGER NOT NULL,
	arrived TEXT NOT NULL,          -- on the server's clock
	deadline TEXT NOT NULL,         -- when it gives up waiting, on the server's clock
	PRIMARY KEY (grp, shard)
);
`,
	// 6: the prices a study looked up in the clouds' price lists, kept with it so
	// that its reports show the price its runs were compared at.
	`
CREATE TABLE study_prices (
	study_id  INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
	target    TEXT NOT NULL,
	query     TEXT NOT NULL,        -- the lookup it answers
	price     TEXT NOT NULL,        -- the price looked up, as JSON
	looked_up TEXT NOT NULL,
	PRIMARY KEY (study_id, target)
);
`,
	// 7: what each arriving shard runs, so that shards of one group given
	// different options are refused when they meet, not after the window.
	`
ALTER TABLE shard_arrivals ADD COLUMN plan TEXT NOT NULL DEFAULT '';
`,
}

// migrate applies the pending migrations in one transaction. The version is
// read inside the (immediate, so write-locked) transaction, so two processes
// opening a new file at once do not both apply the same migration.
func migrate(ctx context.Context, db *sql.DB, path string) (err error) {
	latest := len(migrations)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() {
		if err != nil {
			err = rollback(tx, err)
		}
	}()

	var appID, version, objects int
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return fmt.Errorf("read application_id: %w", err)
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	switch {
	case appID != applicationID && (appID != 0 || version != 0 || objects != 0):
		return &notStore{path: path, why: fmt.Sprintf("a SQLite database of another program, application_id %#x", appID)}
	case version > latest:
		return fmt.Errorf("%w: schema version %d, this one knows up to %d",
			ErrSchemaTooNew, version, latest)
	case version == latest:
		return tx.Commit()
	}

	for v := version; v < latest; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
	}
	// PRAGMAs take no bind parameters; both values are integers from this file.
	set := fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, latest)
	if _, err := tx.ExecContext(ctx, set); err != nil {
		return fmt.Errorf("set schema version %d: %w", latest, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
