// Package pgbscript reads pgbench's custom scripts and evaluates their expressions
// as pgbench 17 does: the same values, the same errors, and the same pseudo-random
// draws for the same --random-seed, so that a script keeps its meaning when it moves
// from pgbench to pgbakeoff.
//
// Parse turns a script file into commands (SQL, and meta commands such as \set and
// \if); expressions are compiled once, and their evaluation does not allocate.
package pgbscript
