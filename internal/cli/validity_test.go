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
			{flagDip, true, "throughput fell to 400 tps in the second ending at 7 s, below half the run's median of 1000 tps"}}},
		{"a dip to just above half is no dip", evidence{committed: 1, rates: append(steady(4, 1000), rate{5 * time.Second, 501})}, nil},
		{"too few intervals to judge a dip", evidence{committed: 1, rates: []rate{{time.Second, 1000}, {2 * time.Second, 10}}}, nil},
		{"restart, failover, client, checkpoint", evidence{committed: 1, restarted: true, addressChanged: "10.0.0.1:5432 became 10.0.0.2:5432",
			clientSaturated: true, clientCores: 0.97, checkpoints: 2}, []runFlag{
			{flagRestarted, true, "the server restarted during the run (pg_postmaster_start_time changed)"},
			{flagFailover, true, "the server behind the target changed during the run: 10.0.0.1:5432 became 10.0.0.2:5432"},
			{flagClientCPU, true, "the client was CPU-bound (0.97 cores busy): it, not the server, set the pace"},
			{flagCheckpoint, false, "2 checkpoint(s) completed inside the measured window"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := judge(tc.e); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("judge:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
