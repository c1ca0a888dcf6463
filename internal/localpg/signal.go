package localpg

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// StopOnInterrupt stops the server when the process receives SIGINT or
// SIGTERM, so that Ctrl-C does not leave a postmaster behind. Progress and
// errors go to log. After stopping the server it stops watching and sends
// the signal to the process again, so the usual handling follows: exit, or
// the caller's own signal.Notify channel, which then sees the signal twice.
//
// Watching ends when ctx ends or cancel is called; cancel does not stop the
// server.
func (s *Server) StopOnInterrupt(ctx context.Context, log io.Writer) (cancel func()) {
	if log == nil {
		log = io.Discard
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var once sync.Once
	stopWatching := func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
		})
	}
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(log, "%v: stopping server %q\n", sig, s.Name)
			stopCtx, cancelStop := context.WithTimeout(context.Background(), 30*time.Second)
			if err := s.Stop(stopCtx); err != nil {
				fmt.Fprintf(log, "%v\n", err)
			}
			cancelStop()
			stopWatching()
			if err := kill(os.Getpid(), sig.(syscall.Signal)); err != nil {
				fmt.Fprintf(log, "resend %v: %v\n", sig, err)
			}
		case <-ctx.Done():
			stopWatching()
		case <-done:
		}
	}()
	return stopWatching
}
