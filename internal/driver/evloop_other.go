//go:build !linux

package driver

import (
	"context"
	"sync"
)

// Event loops (evloop_linux.go) are built on epoll; elsewhere every client has a
// goroutine on Go's network poller.

type evloop struct {
	busy  float64
	ended chan struct{}
}

func (*evloop) run() {}

func loopable(*Config) bool { return false }

func (r *runner) startLoops(_ context.Context, clients []*client, _ int, _ *sync.WaitGroup) ([]*evloop, []*client) {
	return nil, clients
}
