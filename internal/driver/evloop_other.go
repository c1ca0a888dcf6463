//go:build !linux

package driver

import (
	"context"
	"sync"
)

// Event loops (evloop_linux.go) are built on epoll; elsewhere every client has a
// goroutine on Go's network poller.

func loopable(*Config) bool { return false }

type loopSet struct{ done chan struct{} }

func (ls *loopSet) scale(int, <-chan struct{}) {}

func (ls *loopSet) wait() []float64 { return nil }

func (r *runner) startLoops(_ context.Context, clients []*client, _ int, _ *sync.WaitGroup) (*loopSet, []*client) {
	return nil, clients
}
