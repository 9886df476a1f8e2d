package wayland

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Reconnect backoff after the compositor is lost or cannot be reached, as
// the X11 source does.
const (
	backoffMin = time.Second
	backoffMax = 30 * time.Second
)

// slowDial is how long a compositor may leave the handshake unanswered
// before the sensor says so (a stopped compositor accepts connections and
// says nothing). The wait goes on after it.
const slowDial = 10 * time.Second

// closeGrace is how long Run waits, once ctx is done, for its connection to
// shut down before returning anyway.
const closeGrace = 2 * time.Second

// redialer keeps one connection's worth of work going for as long as a
// context lives: it connects, runs a session on the connection, and when the
// session ends because the compositor went away, misbehaved or could not be
// reached, waits with backoff (backoffMin doubling to backoffMax, back to
// backoffMin after a connection that worked) and starts over.
//
// The hooks run on run's goroutine, so a hook may post to a single-poster
// mailbox the session also posts to.
type redialer struct {
	path     string // the compositor's socket
	log      *slog.Logger
	what     string // what the connection is for, in log lines: "idle detection"
	slowDial time.Duration

	onSlow       func()                     // the compositor accepted the connection but does not answer (may be nil)
	onLost       func(err error)            // a session ended because the connection failed (may be nil)
	onDialFailed func(err error, lost bool) // a connection attempt failed; lost: an earlier one had worked (may be nil)
}

// run calls session on fresh connections until ctx is done. session should
// return when the connection fails; it also returns once ctx is done, since
// run closes the connection then. A panic in session ends that session like
// a lost connection rather than the process.
func (r *redialer) run(ctx context.Context, session func(context.Context, *session) error) {
	delay := backoffMin
	lost, warned := false, false
	for {
		s, err := r.dial(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			if lost {
				r.log.Info("wayland: reconnected to the compositor", "socket", r.path, "for", r.what)
			}
			delay = backoffMin
			err = guarded(ctx, s, session)
			s.close()
			if ctx.Err() != nil {
				return
			}
			lost = true
			r.log.Warn("wayland: lost the compositor; reconnecting", "socket", r.path, "for", r.what, "err", err)
			if r.onLost != nil {
				r.onLost(err)
			}
		} else {
			level := slog.LevelDebug
			if !lost && !warned {
				level, warned = slog.LevelWarn, true
			}
			r.log.Log(ctx, level, "wayland: cannot connect to the compositor; retrying", "socket", r.path, "for", r.what, "err", err)
			if r.onDialFailed != nil {
				r.onDialFailed(err, lost)
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

// guarded runs session on s, closing s when ctx is done (which unblocks its
// reads) and turning a panic into an error.
func guarded(ctx context.Context, s *session, session func(context.Context, *session) error) (err error) {
	stop := context.AfterFunc(ctx, s.close)
	defer stop()
	defer func() {
		if p := recover(); p != nil { // a compositor's bytes must not take the daemon down
			err = fmt.Errorf("wayland: internal error: %v", p)
		}
	}()
	return session(ctx, s)
}

// dial connects and reads the globals, bounded by ctx. If the compositor has
// not answered within slowDial, onSlow is called once and the wait goes on.
func (r *redialer) dial(ctx context.Context) (*session, error) {
	type result struct {
		s   *session
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := connect(ctx, r.path)
		ch <- result{s, err}
	}()
	slow := time.NewTimer(r.slowDial)
	defer slow.Stop()
	for {
		select {
		case res := <-ch:
			return res.s, res.err
		case <-slow.C:
			r.log.Warn("wayland: the compositor does not answer; still waiting", "socket", r.path, "for", r.what)
			if r.onSlow != nil {
				r.onSlow()
			}
		}
	}
}
