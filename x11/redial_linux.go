//go:build linux

package x11

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// redialer keeps one X connection's worth of work going for as long as a
// context lives: it connects, runs a session on the connection, and when the
// session ends because the server went away (or the connection could not be
// made), waits with backoff (backoffMin doubling to backoffMax, back to
// backoffMin after a successful connection) and starts over.
//
// The focus sensor and the idle watcher share it; what each tells its
// consumer about a lost or silent server goes through the optional hooks.
type redialer struct {
	display  string
	log      *slog.Logger
	what     string        // what the connection is for, in log lines: "idle detection"
	slowDial time.Duration // how long a dial may go unanswered before onSlow

	onSlow       func()                     // the server accepted the connection but does not answer (may be nil)
	onLost       func(err error)            // a session ended because the connection failed (may be nil)
	onDialFailed func(err error, lost bool) // a connection attempt failed; lost: an earlier one had worked (may be nil)
}

// run calls session on fresh connections until ctx is done. session should
// return when the connection fails; it also returns once ctx is done, since
// run closes the connection then. A panic in session ends that session like
// a lost connection rather than the process.
func (r *redialer) run(ctx context.Context, session func(context.Context, *conn) error) {
	delay := backoffMin
	lost := false   // we had a connection and lost it
	warned := false // the first failure to connect is a warning, retries are debug
	for {
		c, err := dialContext(ctx, r.display, r.slowDial, func() {
			r.log.Warn("x11: the X server does not answer; still waiting", "display", r.display, "for", r.what)
			if r.onSlow != nil {
				r.onSlow()
			}
		})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			switch {
			case lost:
				r.log.Debug("x11: still cannot reach the X server", "display", r.display, "for", r.what, "err", err)
			case !warned:
				warned = true
				r.log.Warn("x11: cannot connect to the X display; retrying", "display", r.display, "for", r.what, "err", err)
			default:
				r.log.Debug("x11: cannot connect to the X display; retrying", "display", r.display, "for", r.what, "err", err)
			}
			if r.onDialFailed != nil {
				r.onDialFailed(err, lost)
			}
		} else {
			if lost {
				r.log.Info("x11: reconnected to the X server", "display", r.display, "for", r.what)
			}
			delay = backoffMin
			err = runSession(ctx, c, session)
			c.x.Close()
			if ctx.Err() != nil {
				return
			}
			lost = true
			r.log.Warn("x11: lost the X server; reconnecting", "display", r.display, "for", r.what, "err", err)
			if r.onLost != nil {
				r.onLost(err)
			}
		}

		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, backoffMax)
	}
}

// runSession runs session on c, closing c when ctx is done (which unblocks
// WaitForEvent and pending replies) and turning a panic into an error.
func runSession(ctx context.Context, c *conn, session func(context.Context, *conn) error) (err error) {
	stop := context.AfterFunc(ctx, c.x.Close)
	defer stop()
	defer func() {
		if p := recover(); p != nil { // a malformed reply must not take the daemon down
			err = fmt.Errorf("x11: internal error: %v", p)
		}
	}()
	return session(ctx, c)
}

// dialContext is dial bounded by ctx. If the server has not answered the
// handshake within slow (a stopped X server accepts the connection and says
// nothing), onSlow is called once and the wait goes on: retrying would pile
// up connections to a server that is not reading. When ctx ends first, the
// connection is closed whenever it arrives.
func dialContext(ctx context.Context, display string, slow time.Duration, onSlow func()) (*conn, error) {
	type result struct {
		c   *conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil { // a malformed handshake must not take the daemon down
				ch <- result{nil, fmt.Errorf("x11: internal error: %v", p)}
			}
		}()
		c, err := dial(display)
		ch <- result{c, err}
	}()
	timer := time.NewTimer(slow)
	defer timer.Stop()
	for {
		select {
		case r := <-ch:
			return r.c, r.err
		case <-timer.C:
			if onSlow != nil {
				onSlow()
			}
		case <-ctx.Done():
			go func() {
				if r := <-ch; r.c != nil {
					r.c.x.Close()
				}
			}()
			return nil, ctx.Err()
		}
	}
}
