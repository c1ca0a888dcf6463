package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// SchemaVersion is the version of the JSON that commands print (--json,
// export's --format json), whose schemas `pgbakeoff schema` prints
// (internal/schema). Any change to what they print bumps it: a
// field added, removed or renamed, a type or a meaning changed (docs/design.md,
// "The result schema").
const SchemaVersion = 2

// MarshalJSON writes the summary in the current SchemaVersion, with its
// workload's figures at the top level, before client_machine, where the stored
// summaries have always had them.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary // without this method
	s.SchemaVersion = SchemaVersion
	b, err := json.Marshal(plain(s))
	if err != nil || s.Figures == nil {
		return b, err
	}
	f, err := json.Marshal(s.Figures)
	if err != nil {
		return nil, err
	}
	if len(f) < 2 || f[0] != '{' {
		return nil, fmt.Errorf("%s figures are not a JSON object", s.Workload)
	}
	fields := f[1 : len(f)-1]
	if len(fields) == 0 {
		return b, nil
	}
	// client_machine is the last field when there is one; a key in quotes cannot
	// occur inside a JSON string, whose quotes are escaped.
	at := len(b) - 1
	if s.ClientMachine != nil {
		at = bytes.LastIndex(b, []byte(`,"client_machine":`))
	}
	out := make([]byte, 0, len(b)+len(fields)+1)
	out = append(out, b[:at]...)
	out = append(out, ',')
	out = append(out, fields...)
	return append(out, b[at:]...), nil
}

// Measure is the run's figure of the given name: "tps", or one of its
// workload's Measures.
func (s *Summary) Measure(name string) (float64, bool) {
	if name == "tps" || name == "" {
		return s.TPS, true
	}
	if s.Figures == nil {
		return 0, false
	}
	return s.Figures.Measure(name)
}

// Headline is the run's main figures with a latency, for one line of a study's
// progress.
func (s *Summary) Headline() string {
	if s.Figures != nil {
		return s.Figures.Headline(s)
	}
	return fmt.Sprintf("%.1f tps, p99 %.3f ms", s.TPS, s.LatencyMs.P99)
}

// Unfinished is what `show --json` prints of a run that has no summary: its
// process was killed, or is still running. Transactions are those committed in
// the measured intervals it stored.
type Unfinished struct {
	SchemaVersion int    `json:"schema_version"`
	RunID         int64  `json:"run_id"`
	Workload      string `json:"workload"`
	Script        string `json:"script"`
	Clients       int    `json:"clients"`
	Status        string `json:"status"`
	Target        string `json:"target"`
	Intervals     int    `json:"intervals"`
	Transactions  int64  `json:"transactions"`
}

// NewUnfinished is what the stored run d tells of itself without a summary.
func NewUnfinished(d *store.RunDetail) Unfinished {
	u := Unfinished{SchemaVersion: SchemaVersion, RunID: d.ID, Workload: d.Workload, Script: d.Script, Clients: d.Clients,
		Status: d.Status, Target: d.Target, Intervals: len(d.Intervals)}
	for _, iv := range d.Intervals {
		if iv.Phase == store.PhaseMeasure {
			u.Transactions += iv.Txns
		}
	}
	return u
}

// RunList is what `runs --json` prints: the stored runs, newest first.
type RunList struct {
	SchemaVersion int         `json:"schema_version"`
	Runs          []ListedRun `json:"runs"`
}

// ListedRun is one stored run as `runs` lists it. TPS and P99Ms are null for a
// run without a summary (still running, or its process was killed).
type ListedRun struct {
	RunID         int64             `json:"run_id"`
	Started       time.Time         `json:"started"`
	Workload      string            `json:"workload"`
	Script        string            `json:"script"`
	Clients       int               `json:"clients"`
	Status        string            `json:"status"`
	ServerVersion string            `json:"server_version"`
	Target        string            `json:"target"`
	Labels        map[string]string `json:"labels,omitempty"`
	TPS           *float64          `json:"tps"`
	P99Ms         *float64          `json:"p99_ms"`
}

// NewRunList lists runs, with the throughput and p99 of those with a summary.
func NewRunList(runs []store.Run) RunList {
	l := RunList{SchemaVersion: SchemaVersion, Runs: make([]ListedRun, 0, len(runs))}
	for _, r := range runs {
		lr := ListedRun{RunID: r.ID, Started: r.Started, Workload: r.Workload, Script: r.Script, Clients: r.Clients,
			Status: r.Status, ServerVersion: r.ServerVersion, Target: r.Target, Labels: r.Labels}
		var s Summary
		if len(r.Summary) > 0 && json.Unmarshal(r.Summary, &s) == nil {
			lr.TPS, lr.P99Ms = &s.TPS, &s.LatencyMs.P99
		}
		l.Runs = append(l.Runs, lr)
	}
	return l
}
