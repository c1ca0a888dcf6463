package engine_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/pgtest"
)

// shardSummary is what TestShardsMerged reads of a run's JSON summary.
type shardSummary struct {
	CommitsTotal int64   `json:"commits_total"`
	Reconnects   int     `json:"reconnects"`
	OutageS      float64 `json:"outage_s"`
	Server       struct {
		Commits        int64   `json:"commits"`
		CommitsDiffPct float64 `json:"commits_diff_pct"`
		CommitsUnread  string  `json:"commits_unread"`
	} `json:"server"`
	Warnings []string `json:"warnings"`
	Flags    []struct {
		Name    string `json:"name"`
		Invalid bool   `json:"invalid"`
		Reason  string `json:"reason"`
	} `json:"flags"`
}

// TestShardsMerged: two shards of one run, whose clients all lose their
// connections for a second and a half at once. Each shard's summary says that
// the server counts every shard's commits and that the merge checks them, not a
// difference against its own share; the merged run checks them, keeps no
// shard's warning that they are not, and was down once, for as long as the
// shards were, not for the sum of their outages.
func TestShardsMerged(t *testing.T) {
	pgtest.Long(t)
	dsn := pgtest.NewDatabase(t)
	if code, out, errOut := run(t, "init", "tpcb", "--scale", "1", "--dsn", dsn); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	db := pgtest.Query(t, dsn, "select current_database()")
	allow := func(on bool) {
		pgtest.Query(t, pgtest.DSN(t), fmt.Sprintf(`alter database "%s" allow_connections %v`, db, on))
	}
	t.Cleanup(func() { allow(true) })
	dir := t.TempDir()
	start := time.Now().Add(5 * time.Second).UTC().Truncate(time.Millisecond)
	type result struct {
		code        int
		out, errOut string
	}
	done := make([]chan result, 2)
	for i := range done {
		done[i] = make(chan result, 1)
		go func() {
			code, out, errOut := run(t, "run", "tpcb", "--script", "select-only", "--clients", "4", "--warmup", "0s", "--duration", "5s",
				"--shard", fmt.Sprintf("%d/2", i), "--shard-group", "merged", "--start-at", start.Format(time.RFC3339Nano),
				"--results", filepath.Join(dir, fmt.Sprintf("shard%d.db", i)), "--dsn", dsn)
			done[i] <- result{code, out, errOut}
		}()
	}
	// The outage: every client's session ended, and none let in for 1.5 s.
	time.Sleep(time.Until(start.Add(time.Second))) // a second into the window the shards begin together: the outage's place
	allow(false)
	pgtest.Query(t, pgtest.DSN(t), "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name like 'pgbakeoff-shards-%'")
	time.Sleep(1500 * time.Millisecond) // the outage's length, not a wait for something
	allow(true)

	texts := make([]string, 2)
	defer func() { t.Logf("shard 0:\n%s\nshard 1:\n%s", texts[0], texts[1]) }()
	for i := range done {
		r := <-done[i]
		if r.code != 0 {
			t.Fatalf("shard %d: exit %d\n%s%s", i, r.code, r.out, r.errOut)
		}
		texts[i] = r.out
	}
	if !strings.Contains(texts[0], "from this shard's clients, server ") || !strings.Contains(texts[0], "from all the shards' clients, which `pgbakeoff merge` checks") ||
		regexp.MustCompile(`commits: .*\([+-][0-9.]+%\)`).MatchString(texts[0]) {
		t.Errorf("shard 0 does not say the server's commits are all the shards', or weighs them against its own:\n%s", texts[0])
	}
	if !strings.Contains(texts[1], "the server's, for all the shards, are read by shard 0 and checked by `pgbakeoff merge`") {
		t.Errorf("shard 1 does not say who reads the server's commits:\n%s", texts[1])
	}
	for i, text := range texts {
		if strings.Contains(text, "not checked") {
			t.Errorf("shard %d warns that its commits are not checked:\n%s", i, text)
		}
	}

	all := filepath.Join(dir, "all.db")
	code, text, errOut := run(t, "merge", filepath.Join(dir, "shard0.db"), filepath.Join(dir, "shard1.db"), "-o", all)
	m := regexp.MustCompile(`(?m)^run (\d+): merged, merged from 2 shards`).FindStringSubmatch(text)
	if code != 0 || m == nil {
		t.Fatalf("merge: exit %d\n%s%s", code, text, errOut)
	}
	var shards [2]shardSummary
	for i := range shards {
		shards[i] = showJSON[shardSummary](t, all, fmt.Sprint(i+1))
	}
	merged := showJSON[shardSummary](t, all, m[1])
	t.Logf("outages: shards %.2f s and %.2f s, merged %.2f s; commits: clients %d, server %d (%+.2f%%)",
		shards[0].OutageS, shards[1].OutageS, merged.OutageS, merged.CommitsTotal, merged.Server.Commits, merged.Server.CommitsDiffPct)
	for i, s := range shards {
		if s.Reconnects == 0 || s.OutageS < 1 {
			t.Fatalf("shard %d: %d reconnects, outage %.2f s; want its clients' sessions ended for 1.5 s", i, s.Reconnects, s.OutageS)
		}
	}
	// The merged outage is a union of the shards' outages, read back from their
	// stored times; it may come out a few milliseconds under the longer one.
	if lo, hi := max(shards[0].OutageS, shards[1].OutageS), shards[0].OutageS+shards[1].OutageS; merged.OutageS < lo-0.05 || merged.OutageS > lo+0.5 || merged.OutageS > 0.8*hi {
		t.Errorf("merged outage %.2f s; want about the shards' common %.2f s, not their sum %.2f s", merged.OutageS, lo, hi)
	}
	if merged.Server.CommitsUnread != "" || merged.Server.CommitsDiffPct > 1 || merged.Server.CommitsDiffPct < -1 {
		t.Errorf("merged commits: server %d (%+.2f%%, unread %q) against the clients' %d; want them checked and agreeing",
			merged.Server.Commits, merged.Server.CommitsDiffPct, merged.Server.CommitsUnread, merged.CommitsTotal)
	}
	for _, w := range merged.Warnings {
		if strings.Contains(w, "not checked") {
			t.Errorf("the merged run, which checked its commits, warns: %s", w)
		}
	}
	for _, f := range merged.Flags {
		if f.Name == "contaminated" || f.Name == "commits" {
			t.Errorf("merged run flagged %s: %s", f.Name, f.Reason)
		}
	}
}

// showJSON reads run id of the store at results as `show --json` prints it.
func showJSON[T any](t *testing.T, results, id string) T {
	t.Helper()
	code, out, errOut := run(t, "show", id, "--json", "--results", results)
	var v T
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil {
		t.Fatalf("show %s: exit %d, %v\n%s%s", id, code, err, out, errOut)
	}
	return v
}
