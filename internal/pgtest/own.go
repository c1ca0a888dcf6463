package pgtest

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
)

// Own is a PostgreSQL server for one test alone, of the shared server's version,
// which the test may kill and start again on the same port.
type Own struct {
	mu   sync.Mutex
	srv  *localpg.Server
	opts localpg.Options
}

// OwnServer starts a server for the test with the given settings beside small
// shared buffers and fsync off; the test's cleanup stops and removes it.
func OwnServer(t testing.TB, settings ...localpg.Setting) *Own {
	t.Helper()
	shared := Server(t)
	base, err := os.MkdirTemp("", "pgtest-own-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	// As root, PostgreSQL runs as another user, which must enter base.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	o := &Own{opts: localpg.Options{Name: "own", BaseDir: base, InitdbArgs: initdbArgs,
		Install:  &localpg.Install{BinDir: shared.BinDir, Version: shared.Version, Major: shared.Major},
		Settings: append([]localpg.Setting{{Name: "shared_buffers", Value: "16MB"}, {Name: "fsync", Value: "off"}}, settings...)}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if o.srv, err = localpg.Start(ctx, o.opts); err != nil {
		t.Fatal(err)
	}
	o.opts.Port = o.srv.Port
	t.Cleanup(func() {
		srv := o.Server()
		if err := srv.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if err := srv.Remove(); err != nil {
			t.Error(err)
		}
	})
	return o
}

// Server is the server as last started.
func (o *Own) Server() *localpg.Server {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.srv
}

// Kill sends SIGKILL to the postmaster and waits until it is gone.
func (o *Own) Kill() error {
	srv := o.Server()
	if err := srv.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); srv.Running(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("the postmaster survived SIGKILL")
		}
	}
	return nil
}

// Restart starts the server again on its port. Its backends outlive a killed
// postmaster for a moment, and until they are gone a new one refuses to start.
func (o *Own) Restart() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		srv, err := localpg.Start(ctx, o.opts)
		if err == nil {
			o.mu.Lock()
			o.srv = srv
			o.mu.Unlock()
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond): // polls: a dying backend sends no notice
		}
	}
}

// OwnCluster starts a primary with standbys (localpg.StartCluster) for the test
// alone, of the shared server's version, with the settings beside small shared
// buffers; the test's cleanup stops and removes every node.
func OwnCluster(t testing.TB, standbys int, sync string, settings ...localpg.Setting) *localpg.Cluster {
	t.Helper()
	shared := Server(t)
	base, err := os.MkdirTemp("", "pgtest-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := localpg.StartCluster(ctx, localpg.ClusterOptions{Standbys: standbys, Synchronous: sync,
		Options: localpg.Options{Name: "own", BaseDir: base, InitdbArgs: initdbArgs,
			Install:  &localpg.Install{BinDir: shared.BinDir, Version: shared.Version, Major: shared.Major},
			Settings: append([]localpg.Setting{{Name: "shared_buffers", Value: "16MB"}}, settings...)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
	})
	return c
}
