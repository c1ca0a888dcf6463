// Package sysbench is sysbench's OLTP workload on PostgreSQL: the sbtest tables
// that `sysbench oltp_* prepare` creates, loaded with COPY instead of INSERTs, and
// the statements of each of sysbench's OLTP scripts, so that a database prepared by
// either tool runs under the other and the two report comparable figures.
package sysbench
