package localpg

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// account is the operating-system user that PostgreSQL runs as. The zero
// value means the current user.
type account struct {
	Name string `json:"name,omitempty"`
	UID  int    `json:"uid,omitempty"`
	GID  int    `json:"gid,omitempty"`
}

func (a account) isCurrent() bool { return a.Name == "" }

// chown gives path to the account; a no-op for the current user.
func (a account) chown(path string) error {
	if a.isCurrent() {
		return nil
	}
	if err := os.Lchown(path, a.UID, a.GID); err != nil {
		return fmt.Errorf("give %s to user %s: %w", path, a.Name, err)
	}
	return nil
}

// serverAccount picks the user PostgreSQL runs as. PostgreSQL refuses to
// run as root, so root uses the postgres system user if there is one,
// otherwise a pgbakeoff system user it creates, otherwise nobody.
func serverAccount(ctx context.Context, log io.Writer) (account, error) {
	if os.Geteuid() != 0 {
		return account{}, nil
	}
	for _, name := range []string{"postgres", "pgbakeoff"} {
		if a, err := lookupAccount(name); err == nil {
			return a, nil
		}
	}
	if err := createSystemUser(ctx, "pgbakeoff"); err != nil {
		fmt.Fprintf(log, "could not create system user pgbakeoff (%v); running PostgreSQL as nobody\n", err)
	} else if a, err := lookupAccount("pgbakeoff"); err == nil {
		fmt.Fprintf(log, "created system user pgbakeoff to run PostgreSQL (it refuses to run as root)\n")
		return a, nil
	}
	a, err := lookupAccount("nobody")
	if err != nil {
		return account{}, fmt.Errorf("find an unprivileged user to run PostgreSQL as (it refuses to run as root): %w", err)
	}
	return a, nil
}

func lookupAccount(name string) (account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return account{}, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return account{}, fmt.Errorf("user %s has uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return account{}, fmt.Errorf("user %s has gid %q: %w", name, u.Gid, err)
	}
	return account{Name: name, UID: uid, GID: gid}, nil
}

// createSystemUser adds a login-less system user with useradd, or with
// busybox adduser where there is no useradd. Another process creating the
// same user at the same time is not an error.
func createSystemUser(ctx context.Context, name string) error {
	var cmd *exec.Cmd
	if path, err := exec.LookPath("useradd"); err == nil {
		cmd = exec.CommandContext(ctx, path, "--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name)
	} else if path, err := exec.LookPath("adduser"); err == nil {
		cmd = exec.CommandContext(ctx, path, "-S", "-D", "-H", name)
	} else {
		return fmt.Errorf("neither useradd nor adduser is on PATH")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, lerr := lookupAccount(name); lerr == nil {
			return nil
		}
		return fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// checkReachable reports a directory on the way to path that the account
// cannot enter, such as /root or a 0700 temporary directory, because
// PostgreSQL would fail later with a less helpful message.
func (a account) checkReachable(path string) error {
	if a.isCurrent() {
		return nil
	}
	path = filepath.Clean(path)
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("check access to %s: %w", path, err)
		}
		uid, gid, ok := owner(fi)
		mode := fi.Mode().Perm()
		var allowed bool
		switch {
		case ok && uid == a.UID:
			allowed = mode&0o100 != 0
		case ok && gid == a.GID:
			allowed = mode&0o010 != 0
		default:
			allowed = mode&0o001 != 0
		}
		if !allowed {
			return fmt.Errorf("%s is not reachable by user %s, which runs PostgreSQL because it refuses to run as root: %s has mode %04o (allow others to enter it with chmod o+x, or use a directory under %s)", path, a.Name, dir, mode, rootStateDir)
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}
