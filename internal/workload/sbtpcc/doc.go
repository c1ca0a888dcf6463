// Package sbtpcc is Percona's sysbench-tpcc (tpcc.lua, the TPC-C-like workload
// the AWS Graviton report ran) on PostgreSQL: its table sets warehouse1..N to
// item1..N, created as its prepare creates them and filled with values in its
// ranges by parallel COPY; its five transactions (and its optional purge) as
// tpcc_run.lua sends them, statement by statement with the values written in,
// drawn in its mix; and the checks of tpcc_check.lua. A database prepared by
// either tool runs under the other and passes both tools' checks, and a run
// reports sysbench's figures (queries read, write and other, ignored errors)
// beside pgbakeoff's own.
//
//	pgbakeoff init sysbench-tpcc --tables 2 --scale 10 --dsn "$DSN"
//	pgbakeoff run sysbench-tpcc --clients 16 --duration 5m --trx-level RC --dsn "$DSN"
//	pgbakeoff check sysbench-tpcc --dsn "$DSN"
package sbtpcc
