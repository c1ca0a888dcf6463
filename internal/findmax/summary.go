package findmax

import (
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// Summary is a search's result as `find-max --json` prints it.
type Summary struct {
	SchemaVersion int     `json:"schema_version"` // engine.SchemaVersion
	Objective     string  `json:"objective"`
	Quantile      float64 `json:"quantile"`
	LimitMs       float64 `json:"limit_ms"`
	// MaxRate is null when no rate met the objective; LowerBound: it is the
	// closed-loop run's throughput, which met it, and the answer is at least it.
	MaxRate    *float64      `json:"max_rate"`
	LowerBound bool          `json:"lower_bound,omitempty"`
	Answer     string        `json:"answer"`
	Above      float64       `json:"lowest_rate_not_met"`
	Ceiling    float64       `json:"ceiling_tps"`
	Confirmed  int           `json:"confirmed"`
	Confirm    int           `json:"confirmations_asked"`
	Budget     bool          `json:"budget_spent"`
	Unreliable string        `json:"unreliable,omitempty"`
	Sure       string        `json:"how_sure"`
	Steps      []SummaryStep `json:"runs"`
}

// SummaryStep is one run of the search: its rate (0 for the closed-loop run),
// throughput, latency at the objective's percentile, and whether it met it.
type SummaryStep struct {
	RunID   int64   `json:"run_id"`
	Rate    float64 `json:"rate"`
	TPS     float64 `json:"tps"`
	Latency float64 `json:"latency_ms"`
	Failed  int64   `json:"failed"`
	Met     bool    `json:"met"`
	Why     string  `json:"why,omitempty"`
	Confirm bool    `json:"confirmation,omitempty"`
}

// Summary is the result for `find-max --json`.
func (r *Result) Summary() Summary {
	f := r.Found
	out := Summary{SchemaVersion: engine.SchemaVersion, Objective: r.Objective.String(), Quantile: r.Objective.Quantile,
		LimitMs: float64(r.Objective.Limit) / float64(time.Millisecond), LowerBound: f.Bound, Answer: r.Answer(), Above: r.Above,
		Ceiling: r.Ceiling, Confirmed: f.Confirmed, Confirm: r.Confirm, Budget: r.BudgetSpent, Unreliable: f.Doubt, Sure: r.Sure()}
	if f.OK {
		rate := f.Rate
		out.MaxRate = &rate
	}
	for _, s := range r.Steps {
		p, _ := s.Summary.LatencyAt(r.Objective.Quantile)
		out.Steps = append(out.Steps, SummaryStep{s.Summary.RunID, s.Rate, s.Summary.TPS, p, s.Summary.Failed, s.Met, s.Why, s.Confirm})
	}
	return out
}
