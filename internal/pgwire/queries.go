package pgwire

// Queries counts statements as sysbench's PostgreSQL driver does (pgsql_check_status
// in drv_pgsql.c): one that returned a result set, even an empty one, is a read; one
// that reports changed rows is a write; anything else is other: BEGIN, COMMIT,
// ROLLBACK, and an UPDATE or DELETE that matched no row. Statements that failed are
// not counted. Without a RowDescription (see count) two kinds of statement, in no
// sysbench script, count otherwise: CREATE TABLE AS and SELECT INTO as reads (sysbench:
// writes), and an INSERT ... RETURNING that returned no row as other (sysbench: a read).
type Queries struct{ Read, Write, Other int64 }

// Total is every statement counted.
func (q Queries) Total() int64 { return q.Read + q.Write + q.Other }

// Add adds o's counts to q's.
func (q *Queries) Add(o Queries) {
	q.Read += o.Read
	q.Write += o.Write
	q.Other += o.Other
}

// count counts the statement whose CommandComplete tag is tag ("SELECT 5",
// "UPDATE 0", "INSERT 0 1", "COMMIT", NUL-terminated). Without Describe the
// extended protocol sends no RowDescription, so a result set is told by its rows or
// by the SELECT tag.
func (q *Queries) count(tag []byte, rows bool) {
	if rows || (len(tag) >= 6 && string(tag[:6]) == "SELECT") {
		q.Read++
		return
	}
	end := len(tag)
	if end > 0 && tag[end-1] == 0 {
		end--
	}
	// The tag's last word is the row count, for the commands that have one.
	i := end
	changed := false
	for i > 0 && tag[i-1] >= '0' && tag[i-1] <= '9' {
		changed = changed || tag[i-1] != '0'
		i--
	}
	if changed && i < end && i > 0 && tag[i-1] == ' ' {
		q.Write++
		return
	}
	q.Other++
}
