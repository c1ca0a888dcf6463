package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// TestRunFlaggedOnRestart: a server that restarts in the middle of a run makes
// the run invalid, with the reason, and what was measured is kept.
func TestRunFlaggedOnRestart(t *testing.T) {
	shared := pgtest.Server(t)
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := localpg.Options{Name: "restart", BaseDir: base,
		Install:  &localpg.Install{BinDir: shared.BinDir, Version: shared.Version, Major: shared.Major},
		Settings: []localpg.Setting{{Name: "fsync", Value: "off"}}}
	ctx := t.Context()
	srv, err := localpg.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	dsn := srv.TCPDSN()
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", dsn); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}

	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := run(t, "run", "tpcb", "--clients", "2", "--duration", "6s", "--json",
			"--results", filepath.Join(base, "r.db"), "--dsn", dsn)
		done <- result{code, out, errOut}
	}()
	time.Sleep(2 * time.Second)
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	opts.Port = srv.Port
	if srv, err = localpg.Start(ctx, opts); err != nil {
		t.Fatal(err)
	}
	r := <-done
	var sum struct {
		Transactions int64 `json:"transactions"`
		Reconnects   int   `json:"reconnects"`
		Flags        []struct {
			Name    string `json:"name"`
			Invalid bool   `json:"invalid"`
			Reason  string `json:"reason"`
		} `json:"flags"`
	}
	if err := json.Unmarshal([]byte(r.out), &sum); err != nil {
		t.Fatalf("exit %d, no JSON summary: %v\n%s%s", r.code, err, r.out, r.errOut)
	}
	restarted := false
	for _, f := range sum.Flags {
		restarted = restarted || (f.Name == "restarted" && f.Invalid && strings.Contains(f.Reason, "restarted"))
	}
	if !restarted || sum.Transactions == 0 || sum.Reconnects == 0 {
		t.Errorf("after a restart mid-run: %+v; want an invalid run flagged restarted, with its transactions and reconnects kept", sum)
	}
}
