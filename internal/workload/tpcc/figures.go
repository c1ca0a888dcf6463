package tpcc

import (
	"fmt"
	"io"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// Figures are TPC-C's own results, printed beside the common ones and, in JSON,
// at the top level of the summary.
type Figures struct {
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

// ResponseTime is clause 5.2.5.3's check of one transaction type's 90th percentile.
type ResponseTime struct {
	Transaction string  `json:"transaction"`
	P90Ms       float64 `json:"p90_ms"`
	LimitMs     float64 `json:"limit_ms"`
	Passed      bool    `json:"passed"`
}

func (f *Figures) Scope(s *engine.Summary) string {
	return fmt.Sprintf("mix: %s, %d warehouses, %s mode, %d clients", s.Script, f.Warehouses, f.Mode, s.Clients)
}

func (f *Figures) WriteText(w io.Writer, _ *engine.Summary) {
	fmt.Fprintf(w, "NOPM: %.0f (database), client New-Orders per minute %.0f (%+.2f%%)\n", f.NOPM, f.ClientNewOrdersPerMin, f.NOPMDiffPct)
	fmt.Fprintf(w, "TPM: %.0f (this database), %.0f (whole cluster, as HammerDB counts)\n", f.TPM, f.TPMCluster)
	if f.EfficiencyPct > 0 {
		fmt.Fprintf(w, "efficiency: %.1f%% of 12.86 tpmC per warehouse\n", f.EfficiencyPct)
	}
}

func (f *Figures) Headline(s *engine.Summary) string {
	return fmt.Sprintf("%.0f NOPM, %.0f TPM, p99 %.2f ms", f.NOPM, f.TPMCluster, s.LatencyMs.P99)
}

// Measure: NOPM, and TPM as HammerDB counts it, the whole cluster's.
func (f *Figures) Measure(name string) (float64, bool) {
	switch name {
	case "NOPM":
		return f.NOPM, true
	case "TPM":
		return f.TPMCluster, true
	}
	return 0, false
}
