package sysbench

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
)

// Names of sysbench's OLTP scripts, as `sysbench <name> run` takes them.
var Names = []string{
	"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select",
	"oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete",
	"select_random_points", "select_random_ranges",
}

// Options are sysbench's script options, with its names; DefaultOptions has its
// defaults.
type Options struct {
	Tables    int
	TableSize int64
	Clients   int // select_random_* give each client its own slice of k values

	PointSelects, SimpleRanges, SumRanges, OrderRanges, DistinctRanges int
	RangeSize                                                          int64
	IndexUpdates, NonIndexUpdates, DeleteInserts                       int
	RangeSelects, SkipTrx                                              bool
	RandomPoints, NumberOfRanges                                       int   // select_random_points, select_random_ranges
	Delta                                                              int64 // select_random_ranges
	Dist                                                               keydist.Spec
}

// DefaultOptions are sysbench 1.0's defaults (oltp_common.lua, select_random_*.lua),
// its special distribution included, for the given tables.
func DefaultOptions(tables int, size int64) Options {
	spec, _ := keydist.Parse("special")
	return Options{Tables: tables, TableSize: size, Clients: 1,
		PointSelects: 10, SimpleRanges: 1, SumRanges: 1, OrderRanges: 1, DistinctRanges: 1, RangeSize: 100,
		IndexUpdates: 1, NonIndexUpdates: 1, DeleteInserts: 1, RangeSelects: true,
		RandomPoints: 10, NumberOfRanges: 10, Delta: 5, Dist: spec}
}

// statement kinds; a script prepares each kind once per table.
const (
	pointSelect = iota
	simpleRange
	sumRange
	orderRange
	distinctRange
	indexUpdate
	nonIndexUpdate
	deleteRow
	insertRow
	insertAuto
	kinds
)

// statementSQL is each kind's statement as sysbench prepares it, for table %d.
var statementSQL = [kinds]string{
	pointSelect:    "SELECT c FROM sbtest%d WHERE id=$1",
	simpleRange:    "SELECT c FROM sbtest%d WHERE id BETWEEN $1 AND $2",
	sumRange:       "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN $1 AND $2",
	orderRange:     "SELECT c FROM sbtest%d WHERE id BETWEEN $1 AND $2 ORDER BY c",
	distinctRange:  "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN $1 AND $2 ORDER BY c",
	indexUpdate:    "UPDATE sbtest%d SET k=k+1 WHERE id=$1",
	nonIndexUpdate: "UPDATE sbtest%d SET c=$1 WHERE id=$2",
	deleteRow:      "DELETE FROM sbtest%d WHERE id=$1",
	insertRow:      "INSERT INTO sbtest%d (id, k, c, pad) VALUES ($1, $2, $3, $4)",
	// oltp_insert leaves the id to the table's sequence (sysbench's default
	// --auto_inc on PostgreSQL). sysbench sends it as a plain query with the values
	// written in; here it is prepared like the others.
	insertAuto: "INSERT INTO sbtest%d (k, c, pad) VALUES ($1, $2, $3)",
}

var (
	sqlBegin  = []byte("BEGIN")
	sqlCommit = []byte("COMMIT")
)

// retryStates are the errors on which sysbench's PostgreSQL driver rolls back and
// restarts the event (drv_pgsql.c): deadlock, serialization failure, and the unique
// violation of two clients' delete-insert on the same id.
var retryStates = []string{"23505"}

// Script builds one of the named scripts. The driver counts the statements it sends
// as sysbench does (driver.Queries).
func Script(name string, o Options) (*driver.Script, error) {
	if !slices.Contains(Names, name) {
		return nil, fmt.Errorf("unknown sysbench script %q: use %s", name, strings.Join(Names, ", "))
	}
	if err := o.check(name); err != nil {
		return nil, err
	}
	keys, err := keydist.New(o.Dist, 1, o.TableSize)
	if err != nil {
		return nil, err
	}
	e := &events{o: o, keys: keys}
	s := &driver.Script{Name: name, Weight: 1, RetryStates: retryStates}
	switch name {
	case "select_random_points", "select_random_ranges":
		if err := e.slices(); err != nil {
			return nil, err
		}
		if name == "select_random_points" {
			s.Statements, s.Program = []string{randomPointsSQL(o.RandomPoints)}, e.randomPoints
		} else {
			s.Statements, s.Program = []string{randomRangesSQL(o.NumberOfRanges)}, e.randomRanges
		}
		return s, nil
	}
	for k := range kinds {
		for t := 1; t <= o.Tables; t++ {
			s.Statements = append(s.Statements, fmt.Sprintf(statementSQL[k], t))
		}
	}
	// The parts of a transaction are bound once here, not per event.
	var parts []func(*driver.Session) error
	switch name {
	case "oltp_read_write":
		parts = []func(*driver.Session) error{e.reads, e.writes}
	case "oltp_read_only":
		parts = []func(*driver.Session) error{e.reads}
	case "oltp_write_only":
		parts = []func(*driver.Session) error{e.writes}
	case "oltp_point_select":
		// sysbench's oltp_point_select sends one point select and no BEGIN/COMMIT.
		s.Program = func(s *driver.Session) error { return e.point(s, 1) }
	case "oltp_update_index":
		s.Program = func(s *driver.Session) error { return e.indexUpdates(s) }
	case "oltp_update_non_index":
		s.Program = func(s *driver.Session) error { return e.nonIndexUpdates(s) }
	case "oltp_insert":
		s.Program = e.insert
	case "oltp_delete":
		s.Program = e.delete
	}
	if parts != nil {
		s.Program = func(s *driver.Session) error { return e.transaction(s, parts) }
	}
	return s, nil
}

// Writes says whether the named script's events change the tables with the given
// options: a transaction that writes waits for its commit's WAL flush, which sets
// how its clients are best served (see the run's --thread-per-client).
func Writes(name string, o Options) bool {
	switch name {
	case "oltp_read_write", "oltp_write_only":
		return o.IndexUpdates+o.NonIndexUpdates+o.DeleteInserts > 0
	case "oltp_update_index":
		return o.IndexUpdates > 0
	case "oltp_update_non_index":
		return o.NonIndexUpdates > 0
	case "oltp_insert", "oltp_delete":
		return true
	}
	return false
}

// check refuses options sysbench would not run with.
func (o Options) check(name string) error {
	if o.Tables < 1 || o.Tables > maxTables {
		return engine.FieldErrorf("tables", "must be between 1 and %d, got %d", maxTables, o.Tables)
	}
	if o.TableSize < 1 {
		return engine.FieldErrorf("table_size", "must be at least 1, got %d", o.TableSize)
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"point-selects", o.PointSelects}, {"simple-ranges", o.SimpleRanges}, {"sum-ranges", o.SumRanges},
		{"order-ranges", o.OrderRanges}, {"distinct-ranges", o.DistinctRanges}, {"index-updates", o.IndexUpdates},
		{"non-index-updates", o.NonIndexUpdates}, {"delete-inserts", o.DeleteInserts}} {
		if c.v < 0 || c.v > 1000 {
			return engine.FieldErrorf(strings.ReplaceAll(c.flag, "-", "_"), "must be between 0 and 1000, got %d", c.v)
		}
	}
	switch name {
	case "oltp_read_write", "oltp_read_only":
		// A range may run past the last row, as in sysbench, which then returns
		// fewer; but its end must still be an integer, the type of id.
		if top := math.MaxInt32 - o.TableSize + 1; o.RangeSelects && (o.RangeSize < 1 || o.RangeSize > top) {
			return engine.FieldErrorf("range_size", "must be between 1 and %d (a range's last id must fit the integer id column), got %d", top, o.RangeSize)
		}
	case "select_random_points", "select_random_ranges":
		if o.RandomPoints < 1 || o.RandomPoints > 1000 {
			return engine.FieldErrorf("random_points", "must be between 1 and 1000, got %d", o.RandomPoints)
		}
		if o.NumberOfRanges < 1 || o.NumberOfRanges > 1000 {
			return engine.FieldErrorf("number_of_ranges", "must be between 1 and 1000, got %d", o.NumberOfRanges)
		}
		if o.Delta < 0 {
			return engine.FieldErrorf("delta", "must not be negative, got %d", o.Delta)
		}
	}
	return nil
}

// events runs the statements of sysbench's event functions.
type events struct {
	o    Options
	keys *keydist.Dist
	// byClient holds, for select_random_*, each client's distribution over its own
	// slice of k values.
	byClient []*keydist.Dist
}

// stmt is the index of kind k's statement for table t.
func (e *events) stmt(k, t int) int { return k*e.o.Tables + t - 1 }

// table draws the table of a group of statements: sysbench draws one per group,
// uniformly, and every key anew.
func (e *events) table(s *driver.Session) int { return int(s.Uniform(1, int64(e.o.Tables))) }

func (e *events) transaction(s *driver.Session, parts []func(*driver.Session) error) error {
	if !e.o.SkipTrx {
		if err := s.Query(sqlBegin); err != nil {
			return err
		}
	}
	for _, p := range parts {
		if err := p(s); err != nil {
			return err
		}
	}
	if e.o.SkipTrx {
		return nil
	}
	return s.Query(sqlCommit)
}

func (e *events) reads(s *driver.Session) error {
	if err := e.point(s, e.o.PointSelects); err != nil {
		return err
	}
	if !e.o.RangeSelects {
		return nil
	}
	for _, r := range []struct{ kind, n int }{
		{simpleRange, e.o.SimpleRanges}, {sumRange, e.o.SumRanges}, {orderRange, e.o.OrderRanges}, {distinctRange, e.o.DistinctRanges},
	} {
		t := e.table(s)
		for range r.n {
			id := s.Draw(e.keys)
			if err := s.Int(id).Int(id + e.o.RangeSize - 1).Exec(e.stmt(r.kind, t)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *events) point(s *driver.Session, n int) error {
	t := e.table(s)
	for range n {
		if err := s.Int(s.Draw(e.keys)).Exec(e.stmt(pointSelect, t)); err != nil {
			return err
		}
	}
	return nil
}

func (e *events) writes(s *driver.Session) error {
	if err := e.indexUpdates(s); err != nil {
		return err
	}
	if err := e.nonIndexUpdates(s); err != nil {
		return err
	}
	t := e.table(s)
	for range e.o.DeleteInserts {
		id, k := s.Draw(e.keys), s.Draw(e.keys)
		if err := s.Int(id).Exec(e.stmt(deleteRow, t)); err != nil {
			return err
		}
		s.Int(id).Int(k)
		s.EndParam(appendGroups(s.Param(), s.Rand(), cGroups))
		s.EndParam(appendGroups(s.Param(), s.Rand(), padGroups))
		if err := s.Exec(e.stmt(insertRow, t)); err != nil {
			return err
		}
	}
	return nil
}

func (e *events) indexUpdates(s *driver.Session) error {
	t := e.table(s)
	for range e.o.IndexUpdates {
		if err := s.Int(s.Draw(e.keys)).Exec(e.stmt(indexUpdate, t)); err != nil {
			return err
		}
	}
	return nil
}

func (e *events) nonIndexUpdates(s *driver.Session) error {
	t := e.table(s)
	for range e.o.NonIndexUpdates {
		s.EndParam(appendGroups(s.Param(), s.Rand(), cGroups))
		if err := s.Int(s.Draw(e.keys)).Exec(e.stmt(nonIndexUpdate, t)); err != nil {
			return err
		}
	}
	return nil
}

func (e *events) insert(s *driver.Session) error {
	t := e.table(s)
	s.Int(s.Draw(e.keys))
	s.EndParam(appendGroups(s.Param(), s.Rand(), cGroups))
	s.EndParam(appendGroups(s.Param(), s.Rand(), padGroups))
	return s.Exec(e.stmt(insertAuto, t))
}

func (e *events) delete(s *driver.Session) error {
	return s.Int(s.Draw(e.keys)).Exec(e.stmt(deleteRow, e.table(s)))
}

// slices gives each client the distribution over its own slice of k values that
// select_random_* draw from: sysbench's thread i of n draws from
// [i*size/n, (i+1)*size/n].
func (e *events) slices() error {
	n := max(e.o.Clients, 1)
	e.byClient = make([]*keydist.Dist, n)
	for i := range n {
		lo, hi := int64(i)*e.o.TableSize/int64(n), int64(i+1)*e.o.TableSize/int64(n)
		d, err := keydist.New(e.o.Dist, lo, hi)
		if err != nil {
			return err
		}
		e.byClient[i] = d
	}
	return nil
}

func (e *events) clientKeys(s *driver.Session) *keydist.Dist {
	return e.byClient[s.Client()%len(e.byClient)]
}

func randomPointsSQL(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = "$" + strconv.Itoa(i+1)
	}
	return "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (" + strings.Join(p, ", ") + ")"
}

func randomRangesSQL(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf("k BETWEEN $%d AND $%d", 2*i+1, 2*i+2)
	}
	return "SELECT count(k) FROM sbtest1 WHERE " + strings.Join(p, " OR ")
}

func (e *events) randomPoints(s *driver.Session) error {
	d := e.clientKeys(s)
	for range e.o.RandomPoints {
		s.Int(s.Draw(d))
	}
	return s.Exec(0)
}

func (e *events) randomRanges(s *driver.Session) error {
	d := e.clientKeys(s)
	for range e.o.NumberOfRanges {
		v := s.Draw(d)
		s.Int(v).Int(v + e.o.Delta)
	}
	return s.Exec(0)
}

// appendGroups appends n groups of groupLen random digits joined by '-', the shape
// of sysbench's c and pad values. One 64-bit draw yields a group: its 11 digits as
// those of a base-10 fraction, taken two at a time from a table of digit pairs
// (loading spends most of its client time here), whose last digit's bias is below
// 10^-7.
func appendGroups(buf []byte, r rand.Source, n int) []byte {
	for g := range n {
		if g > 0 {
			buf = append(buf, '-')
		}
		x := r.Uint64()
		var d uint64
		for range groupLen / 2 {
			d, x = bits.Mul64(x, 100)
			buf = append(buf, digitPairs[2*d], digitPairs[2*d+1])
		}
		d, _ = bits.Mul64(x, 10)
		buf = append(buf, byte('0'+d))
	}
	return buf
}

// digitPairs holds "00" to "99".
var digitPairs = func() (p [200]byte) {
	for i := range 100 {
		p[2*i], p[2*i+1] = byte('0'+i/10), byte('0'+i%10)
	}
	return p
}()
