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
// Where pgbakeoff's driver differs from sysbench's, the difference is small and
// said here. sysbench restarts an event after an ignorable error by calling its
// event function again, which draws the transaction anew; pgbakeoff retries the
// same transaction (with new keys), so the mix of completed transactions is the
// drawn mix exactly. NURand's constants, which each sysbench thread draws once,
// are a function of the client. Statements go as simple queries with the values
// written in, as tpcc.lua's con:query sends them, so the server parses and plans
// each one for both tools.
//
//	pgbakeoff init sysbench-tpcc --tables 2 --scale 10 --dsn "$DSN"
//	pgbakeoff run sysbench-tpcc --clients 16 --duration 5m --trx-level RC --dsn "$DSN"
//	pgbakeoff check sysbench-tpcc --dsn "$DSN"
package sbtpcc
