package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/connfail"
	"github.com/pgbakeoff/pgbakeoff/internal/pgwire"
)

// The connection's setup is pgx's, for every transport: pgx connects (TLS,
// authentication, .pgpass), the statements are prepared through it, and then the
// connection is taken over for the hot path (pgwire.New). A lost connection is made
// again the same way, with backoff, and the time without it recorded as an Outage.

// connect opens the connection, prepares the statements when the protocol asks for
// it, and takes the connection over from pgx for the hot path.
func (c *client) connect(ctx context.Context) error {
	if t := c.r.cfg.ConnectTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	conn, err := c.r.target.Connect(ctx)
	if err != nil {
		return err
	}
	c.r.prepares.Add(1) // the session's start reads the catalogs in a transaction
	if err := c.prepare(ctx, conn); err != nil {
		conn.Close(context.Background())
		return err
	}
	hc, err := conn.Hijack()
	if err != nil {
		conn.Close(context.Background())
		return fmt.Errorf("take over connection: %w", err)
	}
	c.r.mu.Lock()
	if c.r.address == "" {
		if a := hc.Conn.RemoteAddr(); a != nil && a.String() != "" {
			c.r.address = a.String()
		} else {
			c.r.address = c.r.target.Address()
		}
	}
	c.r.mu.Unlock()
	c.mu.Lock()
	prev := c.spare
	c.spare = nil
	c.mu.Unlock()
	w := pgwire.New(hc.Conn, c.r.cfg.ThreadPerClient || c.onLoop, prev)
	if c.r.waits != nil {
		w.ChooseWait(c.r.waits, c.waits)
	}
	w.Stmts, w.Commits = &c.stmts, &c.commits
	c.mu.Lock()
	c.w = w
	stopping := c.r.stopping.Load()
	c.mu.Unlock()
	if stopping {
		w.SetDeadline(c.r.hardStop())
	}
	c.rearm = never
	if c.r.cfg.TxTimeout > 0 {
		c.rearm = time.Time{} // the first transaction sets the deadline
	}
	return nil
}

// prepare prepares the scripts' Statements on conn, and their Commands too with
// the Prepared protocol. Each is a transaction the server counts as committed.
func (c *client) prepare(ctx context.Context, conn *pgconn.PgConn) error {
	one := func(name, sql string) error {
		if _, err := conn.Prepare(ctx, name, sql, nil); err != nil {
			return fmt.Errorf("prepare %q: %w", sql, err)
		}
		c.r.prepares.Add(1)
		return nil
	}
	for si, s := range c.r.cfg.Scripts {
		for i, sql := range s.Statements {
			if err := one(stmtName(si, i), sql); err != nil {
				return err
			}
		}
	}
	if c.r.cfg.Protocol != Prepared {
		return nil
	}
	for si, s := range c.r.cfg.Scripts {
		for ci, cmd := range s.Commands {
			if err := one(stmtName(si, ci), cmd.SQL); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *client) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil {
		c.w.Terminate()
		c.w, c.spare = nil, c.w
	}
}

// setDeadline makes a blocked read return; used when the run must end now.
func (c *client) setDeadline(t time.Time) {
	c.mu.Lock()
	if c.w != nil {
		c.w.SetDeadline(t)
	}
	c.mu.Unlock()
}

func (c *client) dropConn() {
	c.mu.Lock()
	if c.w != nil {
		c.w.Close()
		c.w, c.spare = nil, c.w
	}
	c.mu.Unlock()
}

// reconnect tries again with bounded, jittered exponential backoff until it succeeds
// or the run ends, and records the time without a connection: lost is what ended the
// connection, failedTx the transactions lost with it. ctx is cancelled as the run
// stops.
func (c *client) reconnect(ctx context.Context, lost error, failedTx int) bool {
	o := Outage{Client: c.id, Start: time.Now(), Cause: connfail.Cause(lost), Error: c.r.scrub(lost.Error()), FailedTx: failedTx}
	c.r.outages.Lost()
	if f := c.r.cfg.OnConnectionLost; f != nil {
		f(o.Start, o.Cause)
	}
	backoff := 10 * time.Millisecond
	for !c.r.stopping.Load() && ctx.Err() == nil {
		o.Attempts++
		err := c.connect(ctx)
		if err == nil {
			o.End, o.Recovered = time.Now(), true
			c.r.outages.Ended(o)
			return true
		}
		if c.r.stopping.Load() || ctx.Err() != nil {
			o.Attempts-- // cut short by the end of the run: not a failure
			break
		}
		c.r.outages.ConnectFailed(err)
		sleep := backoff/2 + time.Duration(c.rng.Uint64()%uint64(backoff/2+1))
		t := time.NewTimer(sleep)
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-c.r.stop:
		}
		t.Stop()
		backoff = min(backoff*2, c.r.cfg.MaxBackoff)
	}
	o.End = time.Now()
	c.r.outages.Ended(o)
	return false
}

// connectFirst opens a client's first connection, waiting out a server that is
// starting up for the outage timeout and counting each failure as a connect error.
func (c *client) connectFirst(ctx context.Context) error {
	return connfail.WaitStartingUp(ctx, c.r.cfg.OutageTimeout, c.r.cfg.MaxBackoff, func() error { return c.connect(ctx) }, c.r.outages.ConnectFailed)
}
