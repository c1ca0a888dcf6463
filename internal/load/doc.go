// Package load streams generated rows into PostgreSQL with COPY, over several
// connections at once, and shows progress while it does.
//
// A workload describes each table's data as a Source: rows numbered from 0, produced
// in batches that any worker can generate on its own from the batch index. Load splits
// the batches into Tasks and runs them on a pool of connections:
//
//	tasks := load.Split(accounts, 4)          // four ranges of one table
//	err := load.Run(ctx, connect, tasks, 2, progress)
package load
