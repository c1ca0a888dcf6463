package localpg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The binaries pgbakeoff downloads have no pg_basebackup, so a standby is
// cloned with the low-level backup API: pg_backup_start on the primary, a
// copy of its data directory, then pg_backup_stop, whose backup label goes
// into the copy. Start and stop must be called in the same session. The WAL
// written meanwhile is not copied: the standby streams it through its slot,
// which is created reserving WAL before the backup starts.

// upstream is the primary a new standby is cloned from and follows.
type upstream struct {
	primary *Server
}

// skipContents are directories of a data directory whose contents a base
// backup leaves out; the directories themselves are created empty.
var skipContents = map[string]bool{
	"pg_wal": true, "pg_replslot": true, "pg_dynshmem": true, "pg_notify": true,
	"pg_serial": true, "pg_snapshots": true, "pg_stat_tmp": true, "pg_subtrans": true,
}

// skipFiles are files at the top of a data directory that a copy leaves out.
var skipFiles = map[string]bool{
	"postmaster.pid": true, "postmaster.opts": true, "backup_label": true, "backup_label.old": true,
	"tablespace_map": true, "backup_manifest": true, "standby.signal": true, "recovery.signal": true,
}

// clone makes s.DataDir a base backup of primary's, taken while primary runs.
func (s *Server) clone(ctx context.Context, acct account, primary *Server, log io.Writer) error {
	fmt.Fprintf(log, "cloning %s from server %q\n", s.DataDir, primary.Name)
	if err := s.clonedData(ctx, acct, primary); err != nil {
		return fmt.Errorf("clone server %q into %s: %w", primary.Name, s.DataDir, err)
	}
	return nil
}

func (s *Server) clonedData(ctx context.Context, acct account, primary *Server) error {
	if entries, _ := os.ReadDir(filepath.Join(primary.DataDir, "pg_tblspc")); len(entries) > 0 {
		return fmt.Errorf("the primary has tablespaces, which standbys do not support")
	}
	conn, err := pgx.Connect(ctx, primary.DSN())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := reserveSlot(ctx, conn, slotName(s.Name)); err != nil {
		return err
	}
	start, stop := "select pg_backup_start($1, true)", "select labelfile, spcmapfile from pg_backup_stop(false)"
	if primary.Major < 15 {
		start, stop = "select pg_start_backup($1, true, false)", "select labelfile, spcmapfile from pg_stop_backup(false, false)"
	}
	if _, err := conn.Exec(ctx, start, "pgbakeoff clone for "+s.Name); err != nil {
		return fmt.Errorf("start the backup: %w", err)
	}
	copyErr := copyData(primary.DataDir, s.DataDir, acct)
	var label, spcmap string
	if err := conn.QueryRow(ctx, stop).Scan(&label, &spcmap); err != nil {
		return fmt.Errorf("stop the backup: %w", err)
	}
	if copyErr != nil {
		return copyErr
	}
	return writeOwned(filepath.Join(s.DataDir, "backup_label"), label, acct)
}

// reserveSlot creates a physical replication slot that keeps WAL from now
// on, replacing an inactive one of that name whose WAL may be gone.
func reserveSlot(ctx context.Context, conn *pgx.Conn, slot string) error {
	_, err := conn.Exec(ctx, "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active", slot)
	if err == nil {
		_, err = conn.Exec(ctx, "select pg_create_physical_replication_slot($1, true)", slot)
	}
	if err != nil {
		return fmt.Errorf("create replication slot %s: %w", slot, err)
	}
	return nil
}

// copyData copies the data directory src to dst, which must not exist or be
// empty, leaving out what a base backup leaves out. Files that vanish while
// it copies were dropped or were temporary; WAL replay makes the rest right.
func copyData(src, dst string, acct account) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(src, path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		dir, _, nested := strings.Cut(rel, string(filepath.Separator))
		name := d.Name()
		switch {
		case !nested && skipFiles[name], strings.HasPrefix(name, "pgsql_tmp"), name == "pg_internal.init":
			return skipEntry(d)
		case nested && skipContents[dir] && !(dir == "pg_wal" && d.IsDir()):
			return skipEntry(d) // pg_wal keeps its subdirectories, such as archive_status
		case d.IsDir():
			if err := os.MkdirAll(filepath.Join(dst, rel), 0o700); err != nil {
				return err
			}
			return acct.chown(filepath.Join(dst, rel))
		case d.Type().IsRegular():
			return copyFile(path, filepath.Join(dst, rel), acct)
		}
		return nil // sockets and the like
	})
}

func skipEntry(d fs.DirEntry) error {
	if d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

func copyFile(src, dst string, acct account) error {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return acct.chown(dst)
}

func writeOwned(path, content string, acct account) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	return acct.chown(path)
}

var notSlotChar = regexp.MustCompile(`[^a-z0-9_]`)

// slotName is the physical replication slot of the node named name on
// whichever node is its primary.
func slotName(name string) string {
	slot := "pgbakeoff_" + notSlotChar.ReplaceAllString(strings.ToLower(name), "_")
	return slot[:min(len(slot), 63)]
}

// standbyKeys are the settings writeStandbyConf owns in postgresql.auto.conf.
var standbyKeys = regexp.MustCompile(`^\s*(primary_conninfo|primary_slot_name)\s*=`)

// writeStandbyConf makes s a standby of primary from its next start:
// standby.signal, and primary_conninfo and primary_slot_name in
// postgresql.auto.conf, where pg_basebackup -R writes them too.
func (s *Server) writeStandbyConf(acct account, primary *Server) error {
	path := filepath.Join(s.DataDir, "postgresql.auto.conf")
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var kept []string
	for line := range strings.Lines(string(b)) {
		if !standbyKeys.MatchString(line) {
			kept = append(kept, strings.TrimRight(line, "\n"))
		}
	}
	conninfo := fmt.Sprintf("host=%s port=%d user=postgres application_name=%s", dsnQuote(primary.SocketDir), primary.Port, dsnQuote(s.Name))
	kept = append(kept, "primary_conninfo = "+confQuote(conninfo), "primary_slot_name = "+confQuote(slotName(s.Name)))
	if err := writeOwned(path, strings.Join(kept, "\n")+"\n", acct); err != nil {
		return err
	}
	return writeOwned(filepath.Join(s.DataDir, "standby.signal"), "", acct)
}
