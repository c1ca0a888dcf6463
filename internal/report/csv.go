package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// csvHeader names the columns of CSV. Latencies are in milliseconds, server CPU in
// cores, WAL in MB/s, prices per month; empty cells are figures a run does not have
// (the server not sampled, no price).
var csvHeader = []string{
	"run_id", "target", "target_version", "workload", "kind", "clients", "repeat", "started",
	"status", "counted", "invalid", "flags", "warnings",
	"metric_name", "metric", "tps", "tpm", "qps",
	"latency_avg_ms", "latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms",
	"latency_p999_ms", "latency_max_ms",
	"server_cpu_cores", "iops", "wal_mbps", "waits",
	"checkpoints", "outages", "outage_seconds",
	"price_monthly", "currency", "metric_per_price", "price_per_metric",
}

// CSV writes one row per run with every figure, under a header row (RFC 4180):
// for spreadsheets and for checking a report's arithmetic. Rows follow the
// reports' order: workload, client count, target, repetition.
func CSV(w io.Writer, r *Report) error {
	a := newAnalysis(r)
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("write CSV header: %w", err)
	}
	for _, wl := range a.workloads {
		head := wl.metrics[0].label
		for _, g := range wl.groups {
			for i, c := range g.cells {
				t := a.targets[i]
				for _, run := range c.runs {
					if err := cw.Write(csvRow(wl, t, head, run)); err != nil {
						return fmt.Errorf("write CSV row of run %d: %w", run.ID, err)
					}
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}

func csvRow(wl workload, t Target, head string, run Run) []string {
	n := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	opt := func(v float64, ok bool) string {
		if !ok {
			return ""
		}
		return n(v)
	}
	var flags []string
	for _, fl := range run.Flags {
		flags = append(flags, flagText(fl))
	}
	var waits []string
	for _, wt := range run.Waits {
		waits = append(waits, wt.Class+"="+n(wt.Share))
	}
	outage := 0.0
	for _, o := range run.Outages {
		outage += o.End - o.Start
	}
	started := ""
	if !run.Started.IsZero() {
		started = run.Started.UTC().Format("2006-01-02T15:04:05Z")
	}
	repeat := ""
	if run.Repeat > 0 {
		repeat = strconv.Itoa(run.Repeat)
	}
	var price, currency, perPrice, pricePer string
	if p := t.Price; p != nil {
		price, currency = n(p.Monthly), p.Currency
		if p.Monthly > 0 && run.Metric > 0 {
			perPrice, pricePer = n(run.Metric/p.Monthly), n(p.Monthly/run.Metric)
		}
	}
	return []string{
		strconv.FormatInt(run.ID, 10), run.Target, t.Version, wl.Name, wl.Kind, strconv.Itoa(run.Clients), repeat, started,
		run.Status, strconv.FormatBool(counts(run)), strconv.FormatBool(run.Invalid),
		strings.Join(flags, "; "), strings.Join(run.Warnings, "; "),
		head, n(run.Metric), n(run.TPS), opt(run.TPM, run.TPM != 0), opt(run.QPS, run.QPS != 0),
		n(run.Latency.Avg), n(run.Latency.P50), n(run.Latency.P90), n(run.Latency.P95), n(run.Latency.P99),
		n(run.Latency.P999), n(run.Latency.Max),
		opt(run.ServerCPU, run.Sampled.CPU), opt(run.IOPS, run.Sampled.IOPS), opt(run.WALMBps, run.Sampled.WAL),
		strings.Join(waits, "; "),
		strconv.Itoa(len(run.Checkpoints)), strconv.Itoa(len(run.Outages)), n(outage),
		price, currency, perPrice, pricePer,
	}
}
