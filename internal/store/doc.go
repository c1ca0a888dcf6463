// Package store keeps benchmark results in a SQLite file: runs, their
// per-interval measurements, encoded latency histograms, error counts and
// server statistics. Running writes the store; reporting only reads it.
//
// Every write commits at once, in WAL mode, so a process killed mid-run
// loses at most the interval it was measuring; everything written before the
// kill can be read by the next Open. Each run records the process writing it,
// and the next Open on the same host that finds that process gone marks the
// run StatusInterrupted (Abandoned lists them).
//
// Open is for writers: it creates the file, migrates the schema, and refuses
// a file that is not a store or that SQLite's quick_check finds damaged.
// OpenReadOnly is for readers: it never creates or changes a file, reads
// stores that cannot be written, and refuses a missing, empty or foreign file.
//
// The file is owner-only (0600). Open creates it so, and tightens an
// existing store, or -wal and -shm companions, that group or others can read.
// The schema is versioned in PRAGMA user_version and migrated on Open; a file
// from a newer pgbakeoff is refused with an error wrapping ErrSchemaTooNew.
//
// Histograms are stored as the bytes the caller gives; encoding them is the
// histogram package's business.
//
// Usage:
//
//	s, err := store.Open(ctx, "results.db")
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//
//	run := &store.Run{Target: dsn, Workload: "tpcb", Script: "tpcb-like@1", Clients: 8, Started: now}
//	if _, err := s.CreateRun(ctx, run); err != nil {
//		return err
//	}
//	// each tick:
//	err = s.AddInterval(ctx, run.ID, store.Interval{Seq: 1, Phase: store.PhaseMeasure, Start: t0, End: t1, Txns: 1200, TPS: 1200})
//	// at the end:
//	run.Ended, run.Status, run.Summary = time.Now(), store.StatusCompleted, summaryJSON
//	err = s.FinishRun(ctx, run)
//
//	// later, in report:
//	s, err = store.OpenReadOnly(ctx, "results.db")
//	runs, err := s.Runs(ctx, store.Filter{Workload: "tpcb", Limit: 10})
//	detail, err := s.Run(ctx, runs[0].ID)
package store
