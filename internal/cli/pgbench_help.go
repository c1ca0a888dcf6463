package cli

import (
	"strconv"
	"strings"
)

// pgbenchHelp is `pgbakeoff pgbench --help`: the options it takes, by pgbench's
// names and with pgbench's meanings, grouped as pgbench groups them.
const pgbenchHelp = `pgbakeoff pgbench takes pgbench's command line: it loads pgbench's tables (-i)
and runs benchmarks, prints pgbench's report on stdout and exits with pgbench's
codes. Each run is also stored, and summarized on stderr (pgbakeoff show N).

Usage:
  pgbakeoff pgbench [OPTION]... [DBNAME]

Initialization options:
  -i, --initialize         load pgbench's tables, dropping them first
  -I, --init-steps=STEPS   the steps, from "dtgGvpf" (default "dtgvp"); the loader always
                           drops (d) and creates (t) the tables, generates the rows (g, or
                           G: the same rows) and adds primary keys (p); f adds foreign keys
  -F, --fillfactor=NUM     fill factor of the tables, from 10 to 100 (default 100)
  -n, --no-vacuum          accepted; the loader vacuums and analyzes anyway
  -q, --quiet              a progress line every 5 seconds rather than a bar
  -s, --scale=NUM          scale factor: 100,000 accounts each (default 1)
  --foreign-keys           add foreign keys between the tables
  --partition-method=(range|hash)
                           how to partition pgbench_accounts (default range)
  --partitions=NUM         split pgbench_accounts into NUM partitions
  --unlogged-tables        create the tables unlogged

Options to select what to run:
  -b, --builtin=NAME[@W]   a builtin script and its weight: tpcb-like (the default),
                           simple-update or select-only, or a prefix naming one
  -f, --file=FILE[@W]      a script file and its weight (- reads standard input)
  -N, --skip-some-updates  the builtin simple-update
  -S, --select-only        the builtin select-only
  --show-script=NAME       print a builtin script on stderr and exit

Benchmarking options:
  -c, --client=NUM         clients, one connection each (default 1)
  -C, --connect            a new connection for each transaction
  -D, --define=VAR=VALUE   a variable for the scripts
  -j, --jobs=NUM           threads the clients share (default 1)
  -l, --log                write each transaction to a log file
  -L, --latency-limit=NUM  count the transactions that take longer than NUM ms; with -R,
                           skip those that cannot begin within it
  -M, --protocol=simple|extended|prepared
                           how statements are sent (default simple)
  -n, --no-vacuum          do not vacuum the tables before the run
  -P, --progress=NUM       a progress line on stderr every NUM seconds
  -r, --report-per-command each command's average latency, failures (and retries)
  -R, --rate=NUM           this many transactions a second in all, arriving at random
  -s, --scale=NUM          :scale for script files (builtin scripts take the data's)
  -t, --transactions=NUM   transactions each client runs (default 10)
  -T, --time=NUM           run for NUM seconds
  -v, --vacuum-all         vacuum pgbench_accounts too before the run
  --aggregate-interval=NUM log one line per NUM seconds (with -l)
  --continue-on-error      a transaction whose SQL fails (other than by a serialization
                           failure or a deadlock) fails and its client goes on, rather
                           than the client stopping
  --exit-on-abort          end the run as soon as a client stops on an error
  --failures-detailed      serialization failures and deadlocks apart, in report and log
  --log-prefix=PREFIX      the log files' names before .PID (default pgbench_log)
  --max-tries=NUM          tries of a transaction that fails on a serialization failure
                           or a deadlock (default 1; 0: as many as -T or -L leave room for)
  --progress-timestamp     progress lines with the time of day in Unix seconds
  --random-seed=SEED       the seed: an unsigned integer, time (the default) or rand
  --sampling-rate=NUM      log this share of the transactions (with -l)
  --verbose-errors         accepted; errors are counted by SQLSTATE on stderr anyway

Common options:
  -d, --dbname=DBNAME      the database, or a connection string
  -h, --host=HOSTNAME      the server's host, or its socket's directory
  -p, --port=PORT          the server's port
  -U, --username=USERNAME  the user to connect as
  -V, --version            the version, and the pgbench it follows
  -?, --help               this help

pgbakeoff's own:
  --reconnect              a client whose connection is lost reconnects and goes on (pgbench
                           aborts it and exits 2); the summary on stderr says what was lost
  --results=STORE          where runs are stored (default pgbakeoff.db)
  --fail-if=GATE           exit with 3 when the run misses GATE (p99<20ms, tps>1000, errors<0.1%)
  --metrics-listen=ADDR    serve live figures to Prometheus at http://ADDR/metrics (as :9187);
                           the run's final values stay there until pgbakeoff exits

Not taken, each refused with what to do instead: --tablespace, --index-tablespace, --debug.
Exit codes are pgbench's: 0 done; 1 bad options, a script that does not parse or no
connection; 2 clients aborted, or lost their connections without --reconnect; and
pgbakeoff's 3, a --fail-if gate missed.
`

// splitScriptWeight splits -b's or -f's NAME@WEIGHT at its last @; the weight is
// 1 when none is given (pgbench's script options; the workload checks them).
func splitScriptWeight(v string) (string, int, error) {
	at := strings.LastIndexByte(v, '@')
	if at < 0 {
		return v, 1, nil
	}
	w, err := strconv.Atoi(v[at+1:])
	return v[:at], w, err
}
