package engine

// TPCCFigures are TPC-C's own results, printed beside the common ones and, in JSON,
// at the top level of the summary.
type TPCCFigures struct {
	Mode       string `json:"mode"`
	Mix        string `json:"mix"`
	Warehouses int    `json:"warehouses"`
	// NOPM is HammerDB's: sum(district.d_next_o_id)'s growth over the window, per minute.
	NOPM float64 `json:"nopm"`
	// TPM is pg_stat_database's commits plus rollbacks per minute over the window, for
	// the benchmark database and, as HammerDB counts, for the whole cluster.
	TPM                   float64        `json:"tpm"`
	TPMCluster            float64        `json:"tpm_cluster"`
	ClientNewOrdersPerMin float64        `json:"client_new_orders_per_min"`
	NOPMDiffPct           float64        `json:"nopm_diff_pct"`
	EfficiencyPct         float64        `json:"efficiency_pct,omitempty"`
	ResponseTimes         []ResponseTime `json:"response_time_limits"`
}

// responseTime is clause 5.2.5.3's check of one transaction type's 90th percentile.
type ResponseTime struct {
	Transaction string  `json:"transaction"`
	P90Ms       float64 `json:"p90_ms"`
	LimitMs     float64 `json:"limit_ms"`
	Passed      bool    `json:"passed"`
}

// SysbenchFigures are sysbench's own results: its query counts, split as its report
// splits them.
type SysbenchFigures struct {
	Tables       int     `json:"tables"`
	TableSize    int64   `json:"table_size"`
	Dist         string  `json:"dist"`
	ReadQueries  int64   `json:"read_queries"`
	WriteQueries int64   `json:"write_queries"`
	OtherQueries int64   `json:"other_queries"`
	Queries      int64   `json:"queries"`
	QPS          float64 `json:"qps"`
	// IgnoredErrors is what sysbench calls the errors after which it restarts an
	// event: the retries.
	IgnoredErrors int64 `json:"ignored_errors"`
}
