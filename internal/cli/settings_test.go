package cli

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	"github.com/spf13/pflag"
)

// TestThreadPerClient: run sysbench gives each client a thread by default (auto) for
// scripts that only read and few clients, and shares the threads for scripts that
// write, judged by the options as given; auto gives way beyond ThreadClients, but
// an explicit --thread-per-client stays, for Spec.Validate to refuse beyond the
// clients a thread each allows. run tpcb shares them unless asked.
func TestThreadPerClient(t *testing.T) {
	many := fmt.Sprint(driver.MaxThreadClients + 1)
	several := fmt.Sprint(engine.ThreadClients() + 1)
	noWrites := []string{"--index-updates", "0", "--non-index-updates", "0", "--delete-inserts", "0"}
	for _, tc := range []struct {
		workload string
		args     []string
		want     bool
	}{
		{"sysbench", nil, false}, // oltp_read_write
		{"sysbench", []string{"--script", "oltp_read_only"}, true},
		{"sysbench", []string{"--script", "oltp_point_select"}, true},
		{"sysbench", []string{"--script", "select_random_ranges"}, true},
		{"sysbench", []string{"--script", "oltp_write_only"}, false},
		{"sysbench", []string{"--script", "oltp_insert"}, false},
		{"sysbench", []string{"--script", "oltp_update_index"}, false},
		{"sysbench", []string{"--script", "oltp_update_index", "--index-updates", "0"}, true},
		{"sysbench", append([]string{"--script", "oltp_read_write"}, noWrites...), true},
		{"sysbench", append([]string{"--script", "oltp_read_write", "--index-updates", "1"}, noWrites[2:]...), false},
		{"sysbench", []string{"--script", "oltp_write_only", "--index-updates", "0", "--non-index-updates", "0"}, false},
		{"sysbench", []string{"--script", "oltp_write_only", "--index-updates", "0", "--delete-inserts", "0"}, false},
		{"sysbench", append([]string{"--script", "oltp_write_only"}, noWrites...), true},
		{"sysbench", []string{"--script", "oltp_update_non_index", "--non-index-updates", "0"}, true},
		{"sysbench", []string{"--script", "oltp_read_only", "--clients", many}, false},
		{"sysbench", []string{"--script", "oltp_read_only", "--clients", several}, false},
		{"sysbench", []string{"--script", "oltp_read_only", "--clients", several, "--thread-per-client"}, true},
		{"sysbench", []string{"--script", "oltp_read_only", "--thread-per-client", "--clients", many}, true},
		{"sysbench", []string{"--script", "oltp_read_only", "--thread-per-client=false"}, false},
		{"sysbench", []string{"--thread-per-client"}, true},
		{"tpcb", []string{"--script", "select-only"}, false},
		{"tpcb", []string{"--thread-per-client"}, true},
	} {
		fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
		w, ok := workload.Find(tc.workload)
		if !ok {
			t.Fatalf("no workload %s", tc.workload)
		}
		f := bindRun(w, fl)
		args := append([]string{"--clients", "4"}, tc.args...)
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := f.settle(); err != nil {
			t.Fatal(err)
		}
		if got := f.spec.Threaded(); got != tc.want {
			t.Errorf("run %s %v: thread per client %v, want %v", tc.workload, args, got, tc.want)
		}
		// sysbench's clients share a thread a core; pgbench's add loops while
		// they are busy (auto, 0) unless -j says.
		if jobs := map[string]int{"sysbench": runtime.GOMAXPROCS(0), "tpcb": 0}[tc.workload]; f.spec.Jobs != jobs {
			t.Errorf("run %s %v: %d jobs, want %d", tc.workload, args, f.spec.Jobs, jobs)
		}
	}
}

// TestJobsFlag: --jobs takes auto or a number of loops from 1, and says so otherwise.
func TestJobsFlag(t *testing.T) {
	w, _ := workload.Find("tpcb")
	for _, tc := range []struct {
		arg  string
		want int
		err  string
	}{{"auto", 0, ""}, {"3", 3, ""}, {"0", 0, `use auto or a number of event loops from 1, not "0"`}, {"many", 0, `use auto or a number of event loops from 1, not "many"`}} {
		fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fl.SetOutput(io.Discard)
		f := bindRun(w, fl)
		err := fl.Parse([]string{"--jobs", tc.arg})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("--jobs %s: %v", tc.arg, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("--jobs %s: error %v, want one saying %s", tc.arg, err, tc.err)
		case tc.err == "" && f.spec.Jobs != tc.want:
			t.Errorf("--jobs %s: %d loops, want %d", tc.arg, f.spec.Jobs, tc.want)
		}
	}
}
