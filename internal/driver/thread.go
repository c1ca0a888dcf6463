package driver

import (
	"fmt"
	"runtime"
	"sync"
)

// The thread-per-client transport (Config.ThreadPerClient): on Linux each client's
// connection is a blocking socket out of Go's poller, and the client's goroutine
// sleeps in the kernel, holding its thread, until the server answers (pgwire's
// blocking connections, with a pgwire.WaitChooser for Unix-domain sockets); other
// systems use the poller for these clients too. Here: its limit and the Ps it adds
// to GOMAXPROCS.

// MaxThreadClients is the most clients Config.ThreadPerClient gives a thread each.
const MaxThreadClients = 1024

// CheckThreads refuses a thread per client for more than MaxThreadClients clients.
func CheckThreads(perClient bool, clients int) error {
	if perClient && clients > MaxThreadClients {
		return fmt.Errorf("--thread-per-client allows at most %d clients, got %d; add --thread-per-client=false to share --jobs threads among them", MaxThreadClients, clients)
	}
	return nil
}

// procs counts the Ps that runs with a thread per client have added to GOMAXPROCS,
// so that runs overlapping in one process (tests do) restore it correctly.
var procs struct {
	sync.Mutex
	base, added int
}

// addProcs raises GOMAXPROCS by n until the returned function is called. A client
// waiting in the kernel holds its P: the runner, the sampler and reconnections run
// on the ones there were before.
func addProcs(n int) (release func()) {
	procs.Lock()
	if procs.added == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.added += n
	runtime.GOMAXPROCS(procs.base + procs.added)
	procs.Unlock()
	return func() {
		procs.Lock()
		procs.added -= n
		runtime.GOMAXPROCS(procs.base + procs.added)
		procs.Unlock()
	}
}
