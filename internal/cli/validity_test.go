package cli

import (
	"reflect"
	"testing"
	"time"
)

func steady(n int, tps float64) []rate {
	out := make([]rate, n)
	for i := range out {
		out[i] = rate{at: time.Duration(i+1) * time.Second, tps: tps}
	}
	return out
}

func TestJudge(t *testing.T) {
	dipped := steady(10, 1000)
	dipped[6].tps = 400
	tests := []struct {
		name string
		e    evidence
		want []runFlag
	}{
		{"clean", evidence{committed: 10000, failed: 100, rates: steady(10, 1000)}, nil},
		{"errors above 1%", evidence{committed: 9800, failed: 200}, []runFlag{
			{flagErrors, true, "2.0% of transactions failed (200 of 10000), more than 1%"}}},
		{"dip below half the median", evidence{committed: 1, rates: dipped}, []runFlag{
			{flagDip, true, "throughput fell to 400 tps in the interval ending at 7 s, below half the run's median of 1000 tps"}}},
		{"a dip to just above half is no dip", evidence{committed: 1, rates: append(steady(4, 1000), rate{5 * time.Second, 501})}, nil},
		{"too few intervals to judge a dip", evidence{committed: 1, rates: []rate{{time.Second, 1000}, {2 * time.Second, 10}}}, nil},
		{"restart, failover, client, checkpoint", evidence{committed: 1, restarted: true, addressChanged: "10.0.0.1:5432 became 10.0.0.2:5432",
			clientSaturated: true, clientCores: 0.97, checkpoints: 2}, []runFlag{
			{flagRestarted, true, "the server restarted during the run (pg_postmaster_start_time changed)"},
			{flagFailover, true, "the server behind the target changed during the run: 10.0.0.1:5432 became 10.0.0.2:5432"},
			{flagClientCPU, true, "the client was CPU-bound (0.97 cores busy): it, not the server, set the pace"},
			{flagCheckpoint, false, "2 checkpoint(s) during the measured window"}}},
		{"a slow workload's seconds are judged in groups", evidence{committed: 1, rates: slowDip()}, nil},
		{"statistics reset", evidence{committed: 1, statsReset: true}, []runFlag{
			{flagRestarted, true, "the server's statistics went backwards during the run: it crashed and recovered, or someone called pg_stat_reset()"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := judge(tc.e); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("judge:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// slowDip is 5 tps with one empty second: chance at that rate, not a dip, once
// seconds are grouped to hold 20 transactions each.
func slowDip() []rate {
	r := steady(12, 5)
	r[5].tps = 0
	r[6].tps = 10
	return r
}

func TestBuckets(t *testing.T) {
	if got := buckets(steady(10, 1000)); len(got) != 10 {
		t.Errorf("fast rates grouped into %d buckets, want 10 (no grouping)", len(got))
	}
	got := buckets(steady(12, 5))
	if len(got) != 3 || got[0].tps != 5 || got[2].at != 12*time.Second {
		t.Errorf("5 tps over 12 s: %+v, want 3 buckets of 4 s at 5 tps", got)
	}
}
