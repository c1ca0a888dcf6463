package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// runLabels name every run's figures; a figure of one script and phase adds
// script and phase.
var (
	runLabels    = []string{"target", "workload", "clients", "shard"}
	scriptLabels = append(runLabels[:len(runLabels):len(runLabels)], "script", "phase")
)

// names are the figures' names, in the order described.
var names []string

func newDesc(name, help string, labels []string, more ...string) *prometheus.Desc {
	names = append(names, "pgbakeoff_"+name)
	return prometheus.NewDesc("pgbakeoff_"+name, help, append(labels[:len(labels):len(labels)], more...), nil)
}

// The figures pgbakeoff exports; docs/metrics.md lists them.
var (
	descTransactions = newDesc("transactions_total", "Transactions committed, by the phase they ended in (warmup, measure, after).", scriptLabels)
	descRolledBack   = newDesc("rolled_back_total", "Transactions rolled back on purpose by their script.", scriptLabels)
	descFailed       = newDesc("failed_transactions_total", "Transactions that failed on their last try, or lost their connection.", scriptLabels)
	descRetried      = newDesc("retried_transactions_total", "Transactions that ended after more than one try.", scriptLabels)
	descRetries      = newDesc("retries_total", "Tries made again after a serialization failure or deadlock.", scriptLabels)
	descLatency      = newDesc("transaction_latency_seconds", "Latency of the transactions that ended (committed or rolled back on purpose), from their start or, open-loop, their arrival.", scriptLabels)
	descErrors       = newDesc("errors_total", "Failed transactions and retried tries by SQLSTATE (empty for a lost connection); retried tells which.", runLabels, "script", "sqlstate", "retried")
	descThroughput   = newDesc("throughput_tps", "Transactions committed a second over the last interval.", runLabels)
	descIntervals    = newDesc("intervals_total", "Intervals (one a second) the run has measured.", runLabels)
	descActive       = newDesc("run_active", "1 while the run's clients run, 0 once it has ended.", runLabels)
	descDown         = newDesc("clients_down", "Clients without a connection at the last interval's end.", runLabels)
	descReconnects   = newDesc("reconnects_total", "Lost connections made again.", runLabels)
	descConnFailures = newDesc("reconnect_failures_total", "Failed attempts to connect again.", runLabels)
	descOutage       = newDesc("outage_seconds_total", "Seconds during which at least one client had no connection.", runLabels)
	descLag          = newDesc("schedule_lag_seconds", "Open-loop runs: the mean wait of the last interval's transactions between their arrival and their start.", runLabels)
	descSkipped      = newDesc("skipped_total", "Open-loop runs: arrivals skipped for starting later than the latency limit.", runLabels)
	descLate         = newDesc("late_total", "Transactions that ended later than the latency limit after their arrival.", runLabels)

	descServerCounters = map[string]*prometheus.Desc{
		"commits":      newDesc("server_commits_total", "Transactions the server committed in the benchmark's database, pgbakeoff's own left out.", runLabels),
		"rollbacks":    newDesc("server_rollbacks_total", "Transactions the server rolled back in the benchmark's database.", runLabels),
		"wal_bytes":    newDesc("server_wal_bytes_total", "Bytes of WAL the server wrote.", runLabels),
		"blks_read":    newDesc("server_blocks_read_total", "Blocks the server read from outside shared_buffers.", runLabels),
		"blks_hit":     newDesc("server_blocks_hit_total", "Blocks the server found in shared_buffers.", runLabels),
		"checkpoints":  newDesc("server_checkpoints_total", "Checkpoints the server made.", runLabels),
		"autovacuums":  newDesc("server_autovacuums_total", "Autovacuum runs on the benchmark's database.", runLabels),
		"autoanalyzes": newDesc("server_autoanalyzes_total", "Autoanalyze runs on the benchmark's database.", runLabels),
	}
	// The sampler's rates, turned back into counts by their sample's length.
	serverRates = map[string]bool{"commits": true, "rollbacks": true, "wal_bytes": true, "blks_read": true, "blks_hit": true}

	descServerGauges = map[string]*prometheus.Desc{
		"active_sessions": newDesc("server_active_sessions", "The benchmark's sessions active on the server, averaged over the last sample.", runLabels),
		"other_sessions":  newDesc("server_other_sessions", "Other client sessions active in the same database, averaged over the last sample.", runLabels),
		"server_cpu":      newDesc("server_cpu_cores", "Cores busy running the server's processes (a server on this machine).", runLabels),
	}
	descWaits = newDesc("server_wait_share", "Share of the benchmark's active sessions in each wait event over the last sample (CPU: none).", runLabels, "wait_event")

	descLoadDone  = newDesc("load_done", "Units (rows, warehouses) a load has copied.", []string{"target", "workload", "unit"})
	descLoadTotal = newDesc("load_total", "Units a load copies in all, once known.", []string{"target", "workload", "unit"})

	descStudyPlanned = newDesc("study_runs_planned", "Runs in the study's plan.", []string{"study"})
	descStudyMade    = newDesc("study_runs_made", "Runs of the plan made, before this process and by it.", []string{"study"})
	descStudyFailed  = newDesc("study_runs_failed", "Runs this process made that failed (made again by the next study run).", []string{"study"})
)

// Names are the names of the figures pgbakeoff exports (a histogram's series
// add _bucket, _sum and _count).
func Names() []string { return slices.Clone(names) }

func allDescs() []*prometheus.Desc {
	ds := []*prometheus.Desc{descTransactions, descRolledBack, descFailed, descRetried, descRetries, descLatency, descErrors,
		descThroughput, descIntervals, descActive, descDown, descReconnects, descConnFailures, descOutage, descLag, descSkipped, descLate,
		descWaits, descLoadDone, descLoadTotal, descStudyPlanned, descStudyMade, descStudyFailed}
	for _, d := range descServerCounters {
		ds = append(ds, d)
	}
	for _, d := range descServerGauges {
		ds = append(ds, d)
	}
	return ds
}
