package driver

import "syscall"

// The thread-per-client transport (Config.ThreadPerClient) on Linux: each client's
// connection is a blocking socket out of Go's poller (pgwire), and the client's
// goroutine sleeps in the kernel, holding its thread, until the server answers.
// Other systems use the poller for these clients too.

// voluntarySwitches is the process's voluntary context switches so far.
func voluntarySwitches() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Nvcsw)
}
