//go:build !unix

package localpg

import (
	"errors"
	"os"
	"syscall"
)

// errUnsupported is why no local server starts here: the servers are started,
// stopped and run as another user the Unix way.
var errUnsupported = errors.New("local servers need Linux or macOS; use --dsn to benchmark a server elsewhere")

// supported tells whether local servers can run here.
func supported() error { return errUnsupported }

// lockDir and tryLockDir are never reached here: Start refuses first.
func lockDir(string) (unlock func(), err error) { return nil, errUnsupported }

func tryLockDir(string) (unlock func(), ok bool) { return nil, false }

func (a account) credential() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func ownSession(*syscall.SysProcAttr) {}

func kill(int, syscall.Signal) error { return errUnsupported }

func owner(os.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
