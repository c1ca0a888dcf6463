package studyrun

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/machine"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
	"github.com/pgbakeoff/pgbakeoff/internal/target"
)

// privileges are what a study may do on a target.
type privileges struct {
	superuser  bool
	createDB   bool
	checkpoint bool // superuser, or pg_checkpoint (15+)
	monitor    bool // superuser, pg_monitor or pg_read_all_stats
}

func (p privileges) String() string {
	var have []string
	switch {
	case p.superuser:
		return "superuser"
	case p.createDB:
		have = append(have, "CREATEDB")
	}
	if p.checkpoint {
		have = append(have, "pg_checkpoint")
	}
	if p.monitor {
		have = append(have, "pg_monitor")
	}
	if len(have) == 0 {
		return "none of CREATEDB, pg_checkpoint, pg_monitor"
	}
	return strings.Join(have, ", ")
}

// readPrivileges asks the server what the study's user may do. Roles a version
// lacks (pg_checkpoint before 15, pg_monitor before 10) count as not granted.
func readPrivileges(ctx context.Context, t *target.Target) (privileges, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return privileges{}, err
	}
	defer conn.Close(context.Background())
	member := func(role string) string {
		// USAGE, not MEMBER: a NOINHERIT membership grants nothing until SET ROLE.
		return fmt.Sprintf("coalesce((select pg_has_role(current_user, oid, 'usage') from pg_roles where rolname = '%s'), false)", role)
	}
	rows, err := target.Query(ctx, conn, `select r.rolsuper, r.rolcreatedb, `+member("pg_checkpoint")+`, `+
		member("pg_monitor")+` or `+member("pg_read_all_stats")+` from pg_roles r where r.rolname = current_user`)
	if err != nil {
		return privileges{}, fmt.Errorf("read privileges: %w", err)
	}
	if len(rows) == 0 {
		return privileges{}, fmt.Errorf("read privileges: the current role is not in pg_roles")
	}
	r := rows[0]
	p := privileges{superuser: r[0] == "t", createDB: r[1] == "t", checkpoint: r[2] == "t", monitor: r[3] == "t"}
	if p.superuser {
		p.createDB, p.checkpoint, p.monitor = true, true, true
	}
	return p, nil
}

// open starts a local target's server or resolves a DSN target's password, so the
// target can be connected to.
func (st *studyTarget) open(ctx context.Context, sr *Runner, studyName, serversDir string, restart bool) error {
	t := st.t
	if t.Local == nil {
		tgt, err := target.Parse(t.DSN)
		if err != nil {
			return err
		}
		if t.Password != nil {
			pw, err := t.Password.Resolve(ctx)
			if err != nil {
				return err
			}
			tgt.Config.Password = pw
		}
		st.tgt = tgt
		return nil
	}
	var settings []localpg.Setting
	for _, s := range t.Local.Settings {
		settings = append(settings, localpg.Setting{Name: s.Name, Value: s.Value})
	}
	name := "study-" + studyName + "-" + t.Name
	if serversDir == "" {
		var err error
		if serversDir, err = localpg.DefaultServersDir(); err != nil {
			return err
		}
	}
	// A study that was killed left its servers running, standbys too; they start
	// again with the file's settings.
	dirs := []string{filepath.Join(serversDir, name)}
	if old, err := (localpg.Registry{Dir: serversDir}).Cluster(name); err == nil {
		if err := old.Stop(ctx); err != nil {
			return err
		}
		for _, node := range old.Nodes {
			dirs = append(dirs, filepath.Dir(node.DataDir))
		}
	}
	for _, dir := range dirs {
		if !restart {
			break
		}
		// Starting over includes initdb, whose options may have changed.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	c, err := localpg.StartCluster(ctx, localpg.ClusterOptions{Standbys: t.Local.Standbys, Synchronous: t.Local.Synchronous,
		Options: localpg.Options{Name: name, Version: t.Local.Version, Settings: settings,
			InitdbArgs: t.Local.Initdb, BaseDir: serversDir, Log: sr.Log, Ports: sr.Ports}})
	if err != nil {
		return err
	}
	st.cluster = c
	if st.srv, err = c.Primary(ctx); err != nil {
		return err
	}
	st.tgt, err = target.Parse(c.DSN())
	if err != nil {
		return err
	}
	st.memory = machine.Memory()
	st.free, _ = localpg.FreeBytes(st.srv.DataDir)
	return nil
}

// preflight opens every target and checks, before anything is loaded, that the
// study can run on it: reachable, privileges, connection slots, room for the data.
// All problems come back together.
func preflight(ctx context.Context, sr *Runner, s *study.Study, wls []*studyWorkload) ([]*studyTarget, error) {
	var targets []*studyTarget
	var errs study.Errors
	for _, t := range s.Targets {
		st := &studyTarget{t: t}
		targets = append(targets, st)
		if err := st.open(ctx, sr, s.Name, sr.ServersDir, sr.Restart); err != nil {
			errs = append(errs, s.Errorf(t.Pos, "target %s: %v", t.Name, err))
			continue
		}
		info, err := st.tgt.Inspect(ctx)
		if err != nil {
			errs = append(errs, s.Errorf(t.Pos, "target %s: %v", t.Name, err))
			continue
		}
		st.info = info
		if st.priv, err = readPrivileges(ctx, st.tgt); err != nil {
			errs = append(errs, s.Errorf(t.Pos, "target %s: %v", t.Name, err))
			continue
		}
		most, own := 0, 0
		for _, sw := range wls {
			clients := slices.Max(s.Clients(sw.w))
			spec := sw.spec(s, clients, 0)
			if clients+spec.OwnSessions() > most+own {
				most, own = clients, spec.OwnSessions()
			}
			if sw.w.Database != "" {
				if err := checkDatabase(ctx, st, sw.w.Database); err != nil {
					errs = append(errs, s.Errorf(sw.w.Pos, "target %s: workload %s: %v", t.Name, sw.w.Name, err))
				}
			} else if !st.priv.createDB {
				errs = append(errs, s.Errorf(t.Pos, "target %s: the study creates a database for workload %s, and %s may not (grant CREATEDB, or give the workload database: with dataset: keep)",
					t.Name, sw.w.Name, st.tgt.Config.User))
			}
		}
		if need, free := most+own, info.FreeSlots(); need > free {
			errs = append(errs, s.Errorf(t.Pos, "target %s: %d clients need %d connection slots (%d more for pgbakeoff's own sessions) but the server has %d free: max_connections %d - reserved %d - in use %d; lower the client counts or raise max_connections",
				t.Name, most, need, own, free, info.MaxConnections, info.Reserved, info.InUse))
		}
	}
	errs = append(errs, checkDisk(ctx, s, targets, wls)...)
	printPreflight(sr.Out, targets, wls)
	if err := errs.Err(); err != nil {
		return targets, err
	}
	return targets, nil
}

// datasetBytes is what the study's datasets take on one target: loaded is each
// dataset once; disk adds the copy a cloned workload runs on.
func datasetBytes(wls []*studyWorkload) (loaded, disk int64) {
	seen := map[string]bool{}
	for _, sw := range wls {
		if !seen[sw.db] && sw.w.Database == "" {
			seen[sw.db] = true
			loaded += sw.bytes()
		}
		if sw.w.Dataset == study.DatasetClone && !seen[sw.db+"_run"] {
			seen[sw.db+"_run"] = true
			disk += sw.bytes()
		}
	}
	return loaded, loaded + disk
}

// printPreflight prints what each target is, where its data will live, and a
// comparability table of where the targets differ.
func printPreflight(w io.Writer, targets []*studyTarget, wls []*studyWorkload) {
	var open []*studyTarget
	for _, t := range targets {
		if t.info != nil {
			open = append(open, t)
		}
	}
	if len(open) == 0 {
		return
	}
	fmt.Fprintln(w, "\npreflight:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  target\taddress\tversion\tTLS\tprivileges\tfree slots\t\n")
	for _, t := range open {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%v\t%s\t%d of %d\t\n", t.t.Name, t.info.Address, t.info.Version, t.info.SSL, t.priv, t.info.FreeSlots(), t.info.MaxConnections)
	}
	tw.Flush()

	fmt.Fprintln(w, "\ndatasets:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  target\tworkload\tdataset\testimated size\tshared_buffers\twhere it lives\t\n")
	for _, t := range open {
		sb := t.info.SharedBuffers
		for _, sw := range wls {
			if sw.w.Database != "" {
				fmt.Fprintf(tw, "  %s\t%s\tdatabase %s as it is\t\t%s\t\t\n", t.t.Name, sw.w.Name, sw.w.Database, engine.FormatBytes(sb))
				continue
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t\n", t.t.Name, sw.w.Name, sw.describe(), engine.FormatBytes(sw.bytes()),
				engine.FormatBytes(sb), engine.Classify(sw.bytes(), sb, t.memory))
		}
	}
	tw.Flush()

	fmt.Fprintln(w, "\ncomparability (* marks rows where the targets differ):")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "   \t")
	for _, t := range open {
		fmt.Fprintf(tw, "%s\t", t.t.Name)
	}
	fmt.Fprintln(tw)
	row := func(name string, value func(*studyTarget) string) {
		vals := make([]string, len(open))
		for i, t := range open {
			vals[i] = value(t)
		}
		mark := " "
		if slices.ContainsFunc(vals, func(v string) bool { return v != vals[0] }) {
			mark = "*"
		}
		fmt.Fprintf(tw, " %s %s\t%s\t\n", mark, name, strings.Join(vals, "\t"))
	}
	row("version", func(t *studyTarget) string { return t.info.Version })
	row("TLS", func(t *studyTarget) string { return fmt.Sprint(t.info.SSL) })
	row("kind", func(t *studyTarget) string {
		switch {
		case t.srv == nil:
			return "dsn"
		case len(t.cluster.Nodes) > 1:
			return fmt.Sprintf("local, %s (synchronous %s)", engine.Plural(len(t.cluster.Nodes)-1, "standby"), cmp.Or(t.t.Local.Synchronous, localpg.SyncOff))
		}
		return "local"
	})
	names := map[string]bool{}
	labels := map[string]bool{}
	for _, t := range open {
		for k := range t.info.Settings {
			if !target.IncidentalSettings[k] {
				names[k] = true
			}
		}
		for k := range t.t.Labels {
			labels[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		row(k, func(t *studyTarget) string { return valueOr(t.info.Settings[k], "default") })
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		row("label "+k, func(t *studyTarget) string { return valueOr(t.t.Labels[k], "-") })
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func valueOr(v, dflt string) string {
	if v == "" {
		return dflt
	}
	return v
}

// checkDisk checks that the local servers' file systems have room for the datasets
// still to be loaded: what a resumed study loaded before is on the disk already,
// and servers sharing a file system share its free space.
func checkDisk(ctx context.Context, s *study.Study, targets []*studyTarget, wls []*studyWorkload) study.Errors {
	type fsNeed struct {
		need, free int64
		names      []string
		first      *studyTarget
	}
	byFS := map[uint64]*fsNeed{}
	var order []uint64
	for _, t := range targets {
		if t.srv == nil || t.info == nil || t.free <= 0 {
			continue
		}
		dev, ok := localpg.FileSystem(t.srv.DataDir)
		if !ok {
			continue
		}
		f := byFS[dev]
		if f == nil {
			f = &fsNeed{free: t.free, first: t}
			byFS[dev] = f
			order = append(order, dev)
		}
		_, need := datasetBytes(wls)
		f.need += max(0, need-existingBytes(ctx, t, wls))
		f.names = append(f.names, t.t.Name)
	}
	var errs study.Errors
	for _, dev := range order {
		f := byFS[dev]
		if f.need > f.free {
			errs = append(errs, s.Errorf(f.first.t.Pos, "target %s: the datasets still to load need about %s on disk and %s (shared by %s) has %s free; free some space or use --servers-dir",
				f.first.t.Name, engine.FormatBytes(f.need), filepath.Dir(f.first.srv.DataDir), strings.Join(f.names, ", "), engine.FormatBytes(f.free)))
		}
	}
	return errs
}

// existingBytes is the size of the study's databases already on the target.
func existingBytes(ctx context.Context, t *studyTarget, wls []*studyWorkload) int64 {
	var names []string
	for _, sw := range wls {
		names = append(names, quoteLiteral(sw.database()), quoteLiteral(sw.runDatabase()))
	}
	conn, err := t.tgt.Connect(ctx)
	if err != nil {
		return 0
	}
	defer conn.Close(context.Background())
	rows, err := target.Query(ctx, conn, "select coalesce(sum(pg_database_size(datname)), 0) from pg_database where datname in ("+strings.Join(names, ", ")+")")
	if err != nil || len(rows) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(rows[0][0], 10, 64)
	return n
}

// checkDatabase checks that a workload's own database exists on the target.
func checkDatabase(ctx context.Context, t *studyTarget, name string) error {
	conn, err := t.tgt.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	ok, err := databaseExists(ctx, conn, name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("database %q does not exist; load it first, or drop database: to let the study load its own", name)
	}
	return nil
}
