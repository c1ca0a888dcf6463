package pgbench

import (
	"fmt"
	"strings"
)

// builtin is one of pgbench's builtin scripts written in its script language, as
// `pgbench --show-script` lists them: run this way (with -r), each command is timed
// and named as pgbench's per-statement report names it. The same transactions as
// internal/workload/tpcb's scripts, which run them without -r.
type builtin struct {
	name string // as -b takes it
	desc string // as pgbench's report names it ("transaction type")
	src  string
}

// The account, branch and teller drawn uniformly over the data's scale, and the
// amount; then TPC-B's profile (clause 1.2) or one of its two simplifications.
const (
	drawAll = `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
`
	updateAccount = "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n"
	selectBalance = "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"
	insertHistory = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n"
)

var builtins = []builtin{
	{"tpcb-like", "<builtin: TPC-B (sort of)>", drawAll + "BEGIN;\n" + updateAccount + selectBalance +
		"UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n" +
		"UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n" +
		insertHistory + "END;\n"},
	{"simple-update", "<builtin: simple update>", drawAll + "BEGIN;\n" + updateAccount + selectBalance + insertHistory + "END;\n"},
	{"select-only", "<builtin: select only>", "\\set aid random(1, 100000 * :scale)\n" + selectBalance},
}

// findBuiltin finds a builtin by its name or a prefix of it that names one
// alone, as pgbench's -b does.
func findBuiltin(name string) (builtin, error) {
	var found []builtin
	for _, b := range builtins {
		if b.name == name {
			return b, nil
		}
		if name != "" && strings.HasPrefix(b.name, name) {
			found = append(found, b)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	var names []string
	for _, b := range builtins {
		names = append(names, b.name)
	}
	return builtin{}, fmt.Errorf("no builtin script found for name %q: choose from %s", name, strings.Join(names, ", "))
}

// BuiltinDesc is how pgbench's report names the builtin script that name (or a
// prefix of it) selects: "<builtin: TPC-B (sort of)>" for tpcb-like.
func BuiltinDesc(name string) (string, bool) {
	b, err := findBuiltin(name)
	return b.desc, err == nil
}

// ShowScript is a builtin script as `pgbench --show-script NAME` shows it: a
// line naming it, then its commands.
func ShowScript(name string) (string, error) {
	b, err := findBuiltin(name)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("-- %s: %s\n%s\n", b.name, b.desc, b.src), nil
}

// ListBuiltins is the builtin scripts as `pgbench -b list` lists them: each one's
// name and description.
func ListBuiltins() string {
	var b strings.Builder
	b.WriteString("Available builtin scripts:\n")
	for _, s := range builtins {
		fmt.Fprintf(&b, "  %13s: %s\n", s.name, s.desc)
	}
	return b.String() + "\n"
}
