package sbtpcc

import (
	"fmt"
	"io"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// Figures are sysbench's own results of a run: its query counts, split as its
// report splits them, and its ignored errors.
type Figures struct {
	Tables       int     `json:"tables"`
	Scale        int     `json:"-"` // the summary's scale`
	TrxLevel     string  `json:"trx_level"`
	Dist         string  `json:"dist"`
	ReadQueries  int64   `json:"read_queries"`
	WriteQueries int64   `json:"write_queries"`
	OtherQueries int64   `json:"other_queries"`
	Queries      int64   `json:"queries"`
	QPS          float64 `json:"qps"`
	// IgnoredErrors is what sysbench counts as such: the errors after which it
	// restarts an event (the retries) and the new orders it rolls back on an
	// unused item.
	IgnoredErrors    int64   `json:"ignored_errors"`
	IgnoredPerSecond float64 `json:"ignored_errors_per_s"`
}

// finish counts the queries and ignored errors of the run's window.
func (f *Figures) finish(sum *engine.Summary, res *driver.Result) {
	var n driver.Queries
	var rolledBack int64
	for _, s := range res.Scripts {
		n.Add(s.Queries)
		rolledBack += s.RolledBack
	}
	f.ReadQueries, f.WriteQueries, f.OtherQueries, f.Queries = n.Read, n.Write, n.Other, n.Total()
	f.IgnoredErrors = sum.Retries + rolledBack
	if secs := res.WindowEnd.Sub(res.WindowStart).Seconds(); secs > 0 {
		f.QPS = float64(f.Queries) / secs
		f.IgnoredPerSecond = float64(f.IgnoredErrors) / secs
	}
	sum.Figures = f
}

// MergeShards adds up the shards' counts over their common window.
func (f *Figures) MergeShards(shards []engine.Figures, merged *engine.Summary) engine.Figures {
	out := *f
	out.ReadQueries, out.WriteQueries, out.OtherQueries, out.Queries, out.IgnoredErrors = 0, 0, 0, 0, 0
	for _, s := range shards {
		if g, ok := s.(*Figures); ok {
			out.ReadQueries += g.ReadQueries
			out.WriteQueries += g.WriteQueries
			out.OtherQueries += g.OtherQueries
			out.Queries += g.Queries
			out.IgnoredErrors += g.IgnoredErrors
		}
	}
	out.QPS, out.IgnoredPerSecond = 0, 0
	if merged.DurationS > 0 {
		out.QPS = float64(out.Queries) / merged.DurationS
		out.IgnoredPerSecond = float64(out.IgnoredErrors) / merged.DurationS
	}
	return &out
}

func (f *Figures) Scope(s *engine.Summary) string {
	return fmt.Sprintf("%s of %s, trx-level %s, %s keys, %d clients", engine.Plural(f.Tables, "table set"), engine.Plural(f.Scale, "warehouse"), f.TrxLevel, f.Dist, s.Clients)
}

// WriteText writes sysbench's "SQL statistics" in a line.
func (f *Figures) WriteText(w io.Writer, s *engine.Summary) {
	fmt.Fprintf(w, "sysbench: transactions %.2f per s, queries %d (%.2f per s): read %d, write %d, other %d; ignored errors %d (%.2f per s), reconnects %d\n",
		s.TPS, f.Queries, f.QPS, f.ReadQueries, f.WriteQueries, f.OtherQueries, f.IgnoredErrors, f.IgnoredPerSecond, s.Reconnects)
}

func (f *Figures) Headline(s *engine.Summary) string {
	return fmt.Sprintf("%.1f tps, %.0f qps, %.1f ignored errors/s, p95 %.2f ms", s.TPS, f.QPS, f.IgnoredPerSecond, s.LatencyMs.P95)
}

func (f *Figures) Measure(name string) (float64, bool) {
	if name == "QPS" {
		return f.QPS, true
	}
	return 0, false
}
