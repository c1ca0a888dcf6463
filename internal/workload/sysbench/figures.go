package sysbench

import (
	"fmt"
	"io"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// Figures are sysbench's own results: its query counts, split as its report
// splits them.
type Figures struct {
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

// finish counts the queries of the run's window.
func (f *Figures) finish(sum *engine.Summary, res *driver.Result) {
	var n driver.Queries
	for _, s := range res.Scripts {
		n.Add(s.Queries)
	}
	f.ReadQueries, f.WriteQueries, f.OtherQueries, f.Queries = n.Read, n.Write, n.Other, n.Total()
	if secs := res.WindowEnd.Sub(res.WindowStart).Seconds(); secs > 0 {
		f.QPS = float64(f.Queries) / secs
	}
	f.IgnoredErrors = sum.Retries
	sum.Figures = f
}

// MergeShards adds up the shards' queries over their common window.
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
	out.QPS = 0
	if merged.DurationS > 0 {
		out.QPS = float64(out.Queries) / merged.DurationS
	}
	return &out
}

func (f *Figures) Scope(s *engine.Summary) string {
	return fmt.Sprintf("script: %s, %s of %d rows, %s keys, %d clients", s.Script, engine.Plural(f.Tables, "table"), f.TableSize, f.Dist, s.Clients)
}

func (f *Figures) WriteText(w io.Writer, s *engine.Summary) {
	fmt.Fprintf(w, "queries: %d (%.1f per s): read %d, write %d, other %d; ignored errors %d, reconnects %d\n",
		f.Queries, f.QPS, f.ReadQueries, f.WriteQueries, f.OtherQueries, f.IgnoredErrors, s.Reconnects)
}

func (f *Figures) Headline(s *engine.Summary) string {
	return fmt.Sprintf("%.1f tps, %.0f qps, p95 %.2f ms", s.TPS, f.QPS, s.LatencyMs.P95)
}

func (f *Figures) Measure(name string) (float64, bool) {
	if name == "QPS" {
		return f.QPS, true
	}
	return 0, false
}
