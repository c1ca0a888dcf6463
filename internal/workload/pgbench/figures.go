package pgbench

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// Figures are a pgbench run's own results: with -r, each command's latency and
// failures over the measured window, as pgbench's per-statement report gives them.
type Figures struct {
	Statements []Statement `json:"statement_latencies,omitempty"`
}

// Statement is one command of a script: SQL or a meta command.
type Statement struct {
	Script   string  `json:"script"`
	Index    int     `json:"script_index"` // the script's place in the run, from 0
	Command  int     `json:"command"`      // from 0, as pgbench's messages number them
	Line     int     `json:"line"`
	Text     string  `json:"text"` // its first line, as -r shows it
	Count    int64   `json:"count"`
	AvgMs    float64 `json:"avg_ms"` // of its executions that succeeded
	Failures int64   `json:"failures"`
	// Retries are its serialization failures and deadlocks that were tried again.
	Retries int64 `json:"retries,omitempty"`
}

// cmdStats are a command's measured executions, added to by every client.
type cmdStats struct {
	count, nanos, failures, retries atomic.Int64
}

func (f *Figures) Scope(s *engine.Summary) string {
	return fmt.Sprintf("script: %s, scale %d, %s protocol, %d clients", s.Script, s.Scale, s.Protocol, s.Clients)
}

// WriteText writes the per-statement table, one section a script, in pgbench's
// layout: average latency in milliseconds, failures, the command's first line.
func (f *Figures) WriteText(w io.Writer, s *engine.Summary) {
	if len(f.Statements) == 0 {
		return
	}
	index := -1
	for _, st := range f.Statements {
		if st.Index != index {
			index = st.Index
			fmt.Fprintf(w, "statement latencies in milliseconds and failures, %s:\n", st.Script)
		}
		fmt.Fprintf(w, "   %11.3f  %10d  %s\n", st.AvgMs, st.Failures, st.Text)
	}
}

func (f *Figures) Headline(s *engine.Summary) string {
	return fmt.Sprintf("%.1f tps, p95 %.2f ms", s.TPS, s.LatencyMs.P95)
}

func (f *Figures) Measure(string) (float64, bool) { return 0, false }

// MergeShards adds up each statement's executions over the shards, its average
// weighted by them.
func (f *Figures) MergeShards(shards []engine.Figures, _ *engine.Summary) engine.Figures {
	out := &Figures{}
	at := map[[2]int]int{}
	for _, s := range shards {
		g, ok := s.(*Figures)
		if !ok {
			continue
		}
		for _, st := range g.Statements {
			k := [2]int{st.Index, st.Command}
			i, seen := at[k]
			if !seen {
				at[k] = len(out.Statements)
				st.AvgMs *= float64(st.Count) // a sum until the end
				out.Statements = append(out.Statements, st)
				continue
			}
			o := &out.Statements[i]
			o.AvgMs += st.AvgMs * float64(st.Count)
			o.Count += st.Count
			o.Failures += st.Failures
			o.Retries += st.Retries
		}
	}
	for i := range out.Statements {
		if st := &out.Statements[i]; st.Count > 0 {
			st.AvgMs /= float64(st.Count)
		}
	}
	return out
}

// StatementLatencies are the -r figures, meta commands left out: what a report
// compares across targets is the server's share.
func (f *Figures) StatementLatencies() []engine.StatementLatency {
	var out []engine.StatementLatency
	for _, st := range f.Statements {
		if strings.HasPrefix(st.Text, `\`) {
			continue
		}
		out = append(out, engine.StatementLatency{Script: st.Script, Text: st.Text, Count: st.Count, AvgMs: st.AvgMs, Failures: st.Failures})
	}
	return out
}

// statements turns the programs' counts into the figures' rows.
func statements(progs []*program) []Statement {
	var out []Statement
	for _, p := range progs {
		for ci, c := range p.script.Commands {
			st := &p.stats[ci]
			row := Statement{Script: p.script.Name, Index: p.index, Command: ci, Line: c.Line, Text: c.FirstLine,
				Count: st.count.Load(), Failures: st.failures.Load(), Retries: st.retries.Load()}
			if row.Count > 0 {
				row.AvgMs = float64(st.nanos.Load()) / float64(row.Count) / float64(time.Millisecond)
			}
			out = append(out, row)
		}
	}
	return out
}
