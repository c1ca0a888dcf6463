package sampler

import (
	"slices"
	"testing"
)

func TestParseLSN(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr bool
	}{
		{in: "0/0", want: 0},
		{in: "0/16B3748", want: 0x16B3748},
		{in: "16/B374D848", want: 0x16<<32 | 0xB374D848},
		{in: "FFFFFFFF/FFFFFFFF", want: 1<<64 - 1},
		{in: "16B3748", wantErr: true},
		{in: "1/G", wantErr: true},
		{in: "100000000/0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseLSN(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseLSN(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestWaitShares(t *testing.T) {
	var w waitCounts
	if _, _, _, ok := w.take(); ok {
		t.Fatal("take before any poll: ok, want not ok")
	}
	w.add([]string{"CPU", "IO:DataFileRead", "CPU"}, []string{"psql (pid 7)"})
	w.add(nil, nil)
	w.add([]string{"CPU", "Lock:transactionid"}, []string{"psql (pid 7)", "app (pid 9)"})
	shares, active, others, ok := w.take()
	want := map[string]float64{"CPU": 3.0 / 5, "IO:DataFileRead": 1.0 / 5, "Lock:transactionid": 1.0 / 5}
	if !ok || active != 5.0/3 || others != 1 || len(shares) != len(want) {
		t.Fatalf("take = %v, %v, %v, %v; want %v, %v, 1, true", shares, active, others, ok, want, 5.0/3)
	}
	for c, s := range want {
		if shares[c] != s {
			t.Errorf("share of %s = %v, want %v", c, shares[c], s)
		}
	}
	w.add(nil, nil)
	if shares, active, others, ok := w.take(); !ok || shares != nil || active != 0 || others != 0 {
		t.Errorf("take after a poll that saw nobody = %v, %v, %v, %v; want nil, 0, 0, true", shares, active, others, ok)
	}
	if got, want := w.seenOthers(), []string{"psql (pid 7)", "app (pid 9)"}; !slices.Equal(got, want) {
		t.Errorf("seenOthers = %q, want %q, the most often seen first", got, want)
	}
}
