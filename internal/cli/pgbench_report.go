package cli

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	pgbenchw "github.com/pgbakeoff/pgbakeoff/internal/workload/pgbench"
)

// pgbenchReport is a finished run as pgbench reports it on stdout, line for line
// (pgbench 15 to 17 print the same lines), so that what reads pgbench's report
// reads this one; its figures are counted as pgbench counts them.
type pgbenchReport struct {
	sum  *engine.Summary
	spec *engine.Spec
	o    *pgbenchOptions
	out  pgbenchw.Outcome
}

// write prints the report: the run's settings, its counts, and from its first
// transaction on, latencies, rate, connections and per script or statement.
func (p pgbenchReport) write(w io.Writer) {
	sum, spec := p.sum, p.spec
	p.settings(w)
	failed, skipped := p.failed(-1), p.skipped(-1)
	all := sum.Transactions + skipped + failed
	fmt.Fprintf(w, "number of failed transactions: %d (%s)\n", failed, pct(failed, all))
	if p.o.detail {
		fmt.Fprintf(w, "number of serialization failures: %d (%s)\n", p.errors(-1, "40001"), pct(p.errors(-1, "40001"), all))
		fmt.Fprintf(w, "number of deadlock failures: %d (%s)\n", p.errors(-1, "40P01"), pct(p.errors(-1, "40P01"), all))
	}
	if p.maxTries() != 1 {
		fmt.Fprintf(w, "number of transactions retried: %d (%s)\n", sum.Retried, pct(sum.Retried, all))
		fmt.Fprintf(w, "total number of retries: %d\n", sum.Retries)
	}
	if sum.Transactions+skipped <= 0 {
		return // pgbench's report stops here too
	}
	if spec.Rate > 0 && spec.LatencyLimit > 0 {
		fmt.Fprintf(w, "number of transactions skipped: %d (%s)\n", skipped, pct(skipped, all))
	}
	if spec.LatencyLimit > 0 {
		late := p.late()
		share := "0.000%"
		if sum.Transactions > 0 {
			share = pct(late, sum.Transactions)
		}
		fmt.Fprintf(w, "number of transactions above the %.1f ms latency limit: %d/%d (%s)\n",
			float64(spec.LatencyLimit)/float64(time.Millisecond), late, sum.Transactions, share)
	}
	p.latency(w, all, failed)
	if spec.ConnectPerTx {
		fmt.Fprintf(w, "average connection time = %.3f ms\n", sum.ConnectAvgMs)
		fmt.Fprintf(w, "tps = %f (including reconnection times)\n", sum.TPS)
	} else {
		fmt.Fprintf(w, "initial connection time = %.3f ms\n", float64(p.out.InitialConnect)/float64(time.Millisecond))
		fmt.Fprintf(w, "tps = %f (without initial connection time)\n", sum.TPS)
	}
	p.perScript(w)
}

// settings are the report's first lines: the versions, and how the run was set.
func (p pgbenchReport) settings(w io.Writer) {
	sum, spec := p.sum, p.spec
	// pgbench names its own version and the server's; pgbakeoff names the pgbench
	// whose command line and report it follows, and itself.
	fmt.Fprintf(w, "pgbench (%s (pgbakeoff %s), server %s)\n", pgbenchCompatible, machine.Version(), sum.Server.Version)
	fmt.Fprintf(w, "transaction type: %s\n", p.kind())
	fmt.Fprintf(w, "scaling factor: %d\n", sum.Scale)
	if p.out.PartitionMethod != "" {
		fmt.Fprintf(w, "partition method: %s\npartitions: %d\n", p.out.PartitionMethod, p.out.Partitions)
	}
	fmt.Fprintf(w, "query mode: %s\n", sum.Protocol)
	fmt.Fprintf(w, "number of clients: %d\n", sum.Clients)
	fmt.Fprintf(w, "number of threads: %d\n", max(1, min(spec.Jobs, spec.Clients)))
	if n := p.maxTries(); n != 0 {
		fmt.Fprintf(w, "maximum number of tries: %d\n", n)
	}
	if spec.Transactions > 0 {
		fmt.Fprintf(w, "number of transactions per client: %d\n", spec.Transactions)
		fmt.Fprintf(w, "number of transactions actually processed: %d/%d\n", sum.Transactions, spec.Transactions*spec.Clients)
	} else {
		// The duration asked for, as pgbench prints it, also when the run ended early.
		fmt.Fprintf(w, "duration: %d s\n", int64(spec.Duration/time.Second))
		fmt.Fprintf(w, "number of transactions actually processed: %d\n", sum.Transactions)
	}
}

// latency is the latency's lines: measured with -R, -P or -L, else worked out
// from the run's length and clients, as pgbench does; with -R the schedule lag.
func (p pgbenchReport) latency(w io.Writer, all, failed int64) {
	sum, spec := p.sum, p.spec
	if spec.Rate > 0 || p.o.prog != "" || spec.LatencyLimit > 0 {
		if sum.Transactions > 0 {
			fmt.Fprintf(w, "latency average = %.3f ms\n", sum.LatencyMs.Avg)
			fmt.Fprintf(w, "latency stddev = %.3f ms\n", sum.LatencyMs.Stddev)
		}
	} else {
		suffix := ""
		if failed > 0 {
			suffix = " (including failures)"
		}
		fmt.Fprintf(w, "latency average = %.3f ms%s\n", 1000*sum.DurationS*float64(sum.Clients)/float64(all), suffix)
	}
	if r := sum.Rate; r != nil && spec.Rate > 0 {
		fmt.Fprintf(w, "rate limit schedule lag: avg %.3f (max %.3f) ms\n", r.LagAvgMs, r.LagMaxMs)
	}
}

// perScript is pgbench's section for each script when there are several, and
// with -r each one's statements.
func (p pgbenchReport) perScript(w io.Writer) {
	sum, spec := p.sum, p.spec
	statements, _ := sum.Figures.(*pgbenchw.Figures)
	if len(sum.Scripts) == 1 && p.o.perCommand {
		p.statements(w, statements, 0, "")
	}
	if len(sum.Scripts) < 2 {
		return
	}
	weights := 0
	for _, sc := range sum.Scripts {
		weights += sc.Weight
	}
	for i, sc := range sum.Scripts {
		failed, skipped := p.failed(i), p.skipped(i)
		all := sc.Transactions + skipped + failed
		fmt.Fprintf(w, "SQL script %d: %s\n", i+1, p.desc(i))
		fmt.Fprintf(w, " - weight: %d (targets %.1f%% of total)\n", sc.Weight, 100*float64(sc.Weight)/float64(max(weights, 1)))
		fmt.Fprintf(w, " - %d transactions (%s of total, tps = %f)\n", sc.Transactions, pct1(sc.Transactions, sum.Transactions), sc.TPS)
		fmt.Fprintf(w, " - number of failed transactions: %d (%s)\n", failed, pct(failed, all))
		if p.o.detail {
			fmt.Fprintf(w, " - number of serialization failures: %d (%s)\n", p.errors(i, "40001"), pct(p.errors(i, "40001"), all))
			fmt.Fprintf(w, " - number of deadlock failures: %d (%s)\n", p.errors(i, "40P01"), pct(p.errors(i, "40P01"), all))
		}
		if p.maxTries() != 1 {
			fmt.Fprintf(w, " - number of transactions retried: %d (%s)\n", sc.Retried, pct(sc.Retried, all))
			fmt.Fprintf(w, " - total number of retries: %d\n", at(p.out.Retries, i))
		}
		if spec.Rate > 0 && spec.LatencyLimit > 0 && all > 0 {
			fmt.Fprintf(w, " - number of transactions skipped: %d (%s)\n", skipped, pct(skipped, all))
		}
		if sc.Transactions > 0 {
			fmt.Fprintf(w, " - latency average = %.3f ms\n", sc.LatencyMs.Avg)
			fmt.Fprintf(w, " - latency stddev = %.3f ms\n", sc.LatencyMs.Stddev)
		}
		if p.o.perCommand {
			p.statements(w, statements, i, " - ")
		}
	}
}

// statements is -r's table for one script: each command's average latency, its
// failures, and its retries when transactions may be retried.
func (p pgbenchReport) statements(w io.Writer, f *pgbenchw.Figures, script int, prefix string) {
	what := " and failures"
	if p.maxTries() != 1 {
		what = ", failures and retries"
	}
	fmt.Fprintf(w, "%sstatement latencies in milliseconds%s:\n", prefix, what)
	if f == nil {
		return
	}
	for _, st := range f.Statements {
		switch {
		case st.Index != script:
		case p.maxTries() != 1:
			fmt.Fprintf(w, "   %11.3f  %10d  %10d  %s\n", st.AvgMs, st.Failures, st.Retries, st.Text)
		default:
			fmt.Fprintf(w, "   %11.3f  %10d  %s\n", st.AvgMs, st.Failures, st.Text)
		}
	}
}

// kind is the report's "transaction type": the one script's name as pgbench gives
// it, or "multiple scripts".
func (p pgbenchReport) kind() string {
	if len(p.sum.Scripts) != 1 {
		return "multiple scripts"
	}
	return p.desc(0)
}

// desc is script i's name as pgbench gives it: a builtin's description, or the
// file's name as given.
func (p pgbenchReport) desc(i int) string {
	// The scripts of weight 0 were left out of the run.
	n := 0
	for _, sc := range p.o.scripts {
		name, weight, _ := splitScriptWeight(sc[1])
		if weight == 0 {
			continue
		}
		if n == i {
			if d, ok := pgbenchw.BuiltinDesc(name); ok && sc[0] == "builtin" {
				return d
			}
			return name
		}
		n++
	}
	if d, ok := pgbenchw.BuiltinDesc(p.sum.Scripts[i].Name); ok && len(p.o.scripts) == 0 {
		return d // the default script, tpcb-like
	}
	return p.sum.Scripts[i].Name
}

// failed are the failed transactions of script i (all scripts for -1) as pgbench
// counts them: not those that stopped their client, nor, unless the clients
// reconnect, those lost with their connection, since pgbench aborts such clients.
func (p pgbenchReport) failed(i int) int64 {
	var n int64
	for j, sc := range p.sum.Scripts {
		if i >= 0 && j != i {
			continue
		}
		f := sc.Failed - at(p.out.Aborted, j)
		if !p.o.reconnect {
			f -= at(p.out.Lost, j)
		}
		n += max(0, f)
	}
	return n
}

// skipped are script i's transactions skipped under -R and -L (all for -1).
func (p pgbenchReport) skipped(i int) int64 {
	if i < 0 {
		if r := p.sum.Rate; r != nil {
			return r.Skipped
		}
		return 0
	}
	return at(p.out.Skipped, i)
}

// late are the transactions that ended later than -L after their start.
func (p pgbenchReport) late() int64 {
	if r := p.sum.Rate; r != nil {
		return r.Late
	}
	return 0
}

// errors are script i's failed transactions (all for -1) with SQLSTATE state.
func (p pgbenchReport) errors(i int, state string) int64 {
	var n int64
	for _, e := range p.sum.Errors {
		if e.SQLState == state && !e.Retried && (i < 0 || e.Script == p.sum.Scripts[i].Name) {
			n += e.Count
		}
	}
	return n
}

// maxTries is --max-tries as pgbench prints it: 0 for no limit.
func (p pgbenchReport) maxTries() int {
	if p.spec.MaxTries == math.MaxInt32 {
		return 0
	}
	return p.spec.MaxTries
}

// aborted says why the run counts as aborted, as pgbench's exit code 2 says:
// clients were aborted (a script error, or a connection lost without
// --reconnect), or no client had a connection for the outage timeout; nothing
// when it does not.
func (p pgbenchReport) aborted() []string {
	var why []string
	for _, fl := range p.sum.Flags {
		if fl.Name == "aborted" {
			why = append(why, fl.Reason)
		}
	}
	if p.sum.Status == store.StatusIncomplete {
		why = append(why, fmt.Sprintf("no client had a connection for the outage timeout (%s): the run ended early", p.spec.OutageTimeout))
	}
	return why
}

// pct is pgbench's "%.3f%%" of part in whole, NaN for nothing.
func pct(part, whole int64) string {
	if whole == 0 {
		return "NaN%"
	}
	return fmt.Sprintf("%.3f%%", 100*float64(part)/float64(whole))
}

// pct1 is pgbench's "%.1f%%" of part in whole, NaN for nothing.
func pct1(part, whole int64) string {
	if whole == 0 {
		return "NaN%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// at is s[i], or 0 past its end.
func at(s []int64, i int) int64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}
