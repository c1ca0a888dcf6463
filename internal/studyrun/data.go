package studyrun

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/load"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// datasetFingerprint changes when the target or the data loaded into it changes
// (the database's name carries the load options), so a resumed study loads again
// only what the file's edits require.
func datasetFingerprint(t *study.Target, db string) string {
	return db + "@" + t.Fingerprint()
}

func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

// databaseExists reports whether the target's cluster has the database.
func databaseExists(ctx context.Context, conn *pgconn.PgConn, name string) (bool, error) {
	rows, err := target.Query(ctx, conn, "select count(*) from pg_database where datname = "+quoteLiteral(name))
	if err != nil {
		return false, err
	}
	return rows[0][0] == "1", nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// dropDatabase drops the database, ending sessions still in it where the server
// can (13 and later).
func dropDatabase(ctx context.Context, conn *pgconn.PgConn, versionNum int, name string) error {
	// Before 13 a session left in it (by a crashed run) would make the drop fail. Best
	// effort: a role may not end others' sessions, and then the drop says why.
	_, _ = target.Query(ctx, conn, "select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = "+quoteLiteral(name)+" and pid <> pg_backend_pid()")
	sql := "drop database if exists " + quoteIdent(name)
	if versionNum >= 130000 {
		sql += " with (force)"
	}
	_, err := target.Query(ctx, conn, sql)
	return err
}

// loadDatasets loads every dataset the study needs into every target, except
// those a previous `study run` loaded into the same target with the same options.
func loadDatasets(ctx context.Context, sr *Runner, s *study.Study, st *store.Store, state *store.Study, targets []*studyTarget, wls []*studyWorkload) error {
	prev, err := st.StudyDatasets(ctx, state.ID)
	if err != nil {
		return err
	}
	loaded := map[string]store.Dataset{}
	for _, d := range prev {
		loaded[d.Target+"/"+d.Name] = d
	}
	for _, t := range targets {
		t.fresh = map[string]bool{}
		conn, err := t.tgt.Connect(ctx)
		if err != nil {
			return fmt.Errorf("target %s: %w", t.t.Name, err)
		}
		err = func() error {
			defer conn.Close(context.Background())
			for _, sw := range wls {
				db := sw.database()
				if sw.w.Database != "" || sw.source != nil || t.fresh[db] {
					continue
				}
				fp := datasetFingerprint(t.t, db)
				exists, err := databaseExists(ctx, conn, db)
				if err != nil {
					return err
				}
				if d, ok := loaded[t.t.Name+"/"+db]; ok && d.Fingerprint == fp && exists {
					fmt.Fprintf(sr.Out, "%s: %s is loaded (since %s)\n", t.t.Name, sw.describe(), d.Loaded.Local().Format(time.DateTime))
					t.fresh[db] = false
					continue
				}
				resume := false
				if _, known := loaded[t.t.Name+"/"+db]; !known && exists {
					// The study's own database, never recorded as loaded: a load
					// that was interrupted, which may go on where it stopped.
					var note string
					if resume, note, err = resumableIn(ctx, t.tgt.WithDatabase(db), sw); err != nil {
						return err
					}
					if note != "" {
						fmt.Fprintf(sr.Out, "%s: the previous load into database %s %s\n", t.t.Name, db, note)
					}
				}
				if !resume {
					if err := dropDatabase(ctx, conn, t.info.VersionNum, db); err != nil {
						return fmt.Errorf("drop database %s: %w", db, err)
					}
					if _, err := target.Query(ctx, conn, "create database "+quoteIdent(db)); err != nil {
						return fmt.Errorf("create database %s: %w", db, err)
					}
				}
				fmt.Fprintf(sr.Out, "%s: loading %s into database %s\n", t.t.Name, sw.describe(), db)
				start := time.Now()
				if err := sr.load(ctx, t, db, sw, resume); err != nil {
					return err
				}
				t.fresh[db] = true
				d := store.Dataset{Target: t.t.Name, Name: db, Fingerprint: fp, Loaded: sr.Now(), LoadS: time.Since(start).Seconds()}
				if err := st.SetStudyDataset(ctx, state.ID, d); err != nil {
					return err
				}
			}
			return nil
		}()
		if err != nil {
			return fmt.Errorf("target %s: %w", t.t.Name, err)
		}
	}
	return nil
}

// prepareRun gives a run its data as the workload's dataset policy says, then
// vacuums and checkpoints as it asks, so every run starts from the same state.
func prepareRun(ctx context.Context, sr *Runner, t *studyTarget, sw *studyWorkload) error {
	switch sw.w.Dataset {
	case study.DatasetClone:
		conn, err := t.tgt.Connect(ctx)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		run := sw.runDatabase()
		if err := dropDatabase(ctx, conn, t.info.VersionNum, run); err != nil {
			return fmt.Errorf("drop database %s: %w", run, err)
		}
		sql := "create database " + quoteIdent(run) + " template " + quoteIdent(sw.database())
		if t.info.VersionNum >= 150000 {
			// Copying the files is faster than logging every page of a large dataset.
			sql += " strategy file_copy"
		}
		if _, err := target.Query(ctx, conn, sql); err != nil {
			return fmt.Errorf("clone %s: %w", sw.database(), err)
		}
	case study.DatasetReload:
		if !t.fresh[sw.database()] {
			if err := sr.load(ctx, t, sw.database(), sw.loader(), false); err != nil {
				return err
			}
		}
	}
	t.fresh[sw.database()] = false

	var sqls []string
	switch sw.w.Vacuum {
	case study.VacuumAnalyze:
		sqls = append(sqls, "analyze")
	case study.VacuumPlain:
		sqls = append(sqls, "vacuum analyze")
	case study.VacuumFreeze:
		sqls = append(sqls, "vacuum freeze analyze")
	}
	if sw.w.Checkpoint {
		if t.priv.checkpoint {
			sqls = append(sqls, "checkpoint")
		} else if !t.warnedCheckpoint {
			t.warnedCheckpoint = true
			fmt.Fprintf(sr.Log, "warning: %s may not CHECKPOINT (it needs superuser or pg_checkpoint): runs on %s start without one\n", t.tgt.Config.User, t.t.Name)
		}
	}
	if len(sqls) == 0 {
		return nil
	}
	conn, err := t.tgt.WithDatabase(sw.runDatabase()).Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, sql := range sqls {
		if _, err := target.Query(ctx, conn, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// resumableIn is resumable for a study's dataset database.
func resumableIn(ctx context.Context, tgt *target.Target, sw *studyWorkload) (bool, string, error) {
	conn, err := tgt.Connect(ctx)
	if err != nil {
		return false, "", err
	}
	defer conn.Close(context.Background())
	return load.Resumable(ctx, conn, sw.kind.Name(), sw.data, false)
}

// load loads the workload's data into database db of t, its progress shown on
// Out and as live metrics; an interrupted load says how to go on.
func (sr *Runner) load(ctx context.Context, t *studyTarget, db string, sw *studyWorkload, resume bool) error {
	tgt := t.tgt.WithDatabase(db)
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return tgt.Connect(ctx) }
	p := load.NewProgress(sr.Out, sr.TTY, sw.kind.Name(), 0, "rows")
	sr.Metrics.Load(t.t.Name, sw.w.Name, "rows", p)
	done, err := sw.data.Load(ctx, connect, resume, p)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: the load did not finish; `study run` again resumes it", engine.ErrInterrupted)
		}
		return fmt.Errorf("load %s: %w", sw.kind.Name(), err)
	}
	fmt.Fprintln(sr.Out, done)
	return nil
}
