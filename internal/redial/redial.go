// Package redial keeps a connection to a display server (an X server, a
// Wayland compositor) going for as long as the daemon runs. Display servers
// restart, crash and hang; the daemon outlives them, tells its consumers in
// words while it cannot see, and reconnects with backoff without polling.
// The X11 and Wayland evidence sources share it, so both behave the same.
package redial

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Reconnect backoff after the server is lost or cannot be reached: the
// first retry is soon (a restart takes about a second), later ones do not
// spin while the server stays away.
const (
	BackoffMin = time.Second
	BackoffMax = 30 * time.Second
)

// SlowDial is how long a connection attempt may go unanswered before the
// consumer is told (a stopped server accepts connections and says nothing).
// The wait goes on after it: retrying would pile up connections to a server
// that is not reading.
const SlowDial = 10 * time.Second

// CloseGrace is how long a watcher's Run waits, once its context is done,
// for its connection to shut down before returning anyway.
const CloseGrace = 2 * time.Second

// Redialer runs sessions on fresh connections of type C until a context
// ends: it connects, runs a session, and when the session ends because the
// server went away or misbehaved (or the connection could not be made),
// waits with backoff (BackoffMin doubling to BackoffMax, back to BackoffMin
// after a connection that worked) and starts over.
//
// The hooks run on Run's goroutine, so a hook may post to a single-poster
// mailbox the session also posts to.
type Redialer[C any] struct {
	// Dial makes a connection, through the handshake. It may block for as
	// long as the server takes to answer; it should return once ctx ends.
	Dial  func(ctx context.Context) (C, error)
	Close func(C) // closes a connection; a blocked session read returns

	Log    *slog.Logger
	Prefix string // the log lines' prefix: "x11"
	Peer   string // the server in log lines: "the X server"
	Attrs  []any  // identify the server in log lines: "display", ":0"
	What   string // what the connection is for, in log lines: "idle detection"

	SlowDial     time.Duration              // how long a dial may go unanswered before OnSlow
	OnSlow       func()                     // the server accepted the connection but does not answer (may be nil)
	OnLost       func(err error)            // a session ended because the connection failed (may be nil)
	OnDialFailed func(err error, lost bool) // a connection attempt failed; lost: an earlier one had worked (may be nil)
}

// Run calls session on fresh connections until ctx is done. session should
// return when the connection fails; it also returns once ctx is done, since
// Run closes the connection then. A panic in session ends that session like
// a lost connection rather than the process.
func (r *Redialer[C]) Run(ctx context.Context, session func(context.Context, C) error) {
	delay := BackoffMin
	lost := false   // we had a connection and lost it
	warned := false // the first failure to connect is a warning, retries are debug
	for {
		c, err := r.dial(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			if lost {
				r.log(slog.LevelInfo, "reconnected to "+r.Peer)
			}
			delay = BackoffMin
			err = r.session(ctx, c, session)
			r.Close(c)
			if ctx.Err() != nil {
				return
			}
			lost = true
			r.log(slog.LevelWarn, "lost "+r.Peer+"; reconnecting", "err", err)
			if r.OnLost != nil {
				r.OnLost(err)
			}
		} else {
			level := slog.LevelDebug
			if !lost && !warned {
				level, warned = slog.LevelWarn, true
			}
			r.log(level, "cannot connect to "+r.Peer+"; retrying", "err", err)
			if r.OnDialFailed != nil {
				r.OnDialFailed(err, lost)
			}
		}

		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, BackoffMax)
	}
}

func (r *Redialer[C]) log(level slog.Level, msg string, attrs ...any) {
	attrs = append(append(attrs, r.Attrs...), "for", r.What)
	r.Log.Log(context.Background(), level, r.Prefix+": "+msg, attrs...)
}

// session runs session on c, closing c when ctx is done (which unblocks its
// reads) and turning a panic into an error.
func (r *Redialer[C]) session(ctx context.Context, c C, session func(context.Context, C) error) (err error) {
	stop := context.AfterFunc(ctx, func() { r.Close(c) })
	defer stop()
	defer func() {
		if p := recover(); p != nil { // a server's bytes must not take the daemon down
			err = fmt.Errorf("%s: internal error: %v", r.Prefix, p)
		}
	}()
	return session(ctx, c)
}

// dial is Dial bounded by ctx. If the server has not answered within
// SlowDial, OnSlow is called once and the wait goes on. When ctx ends
// first, the connection is closed whenever it arrives.
func (r *Redialer[C]) dial(ctx context.Context) (C, error) {
	type result struct {
		c   C
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil { // a malformed handshake must not take the daemon down
				var zero C
				ch <- result{zero, fmt.Errorf("%s: internal error: %v", r.Prefix, p)}
			}
		}()
		c, err := r.Dial(ctx)
		ch <- result{c, err}
	}()
	timer := time.NewTimer(r.SlowDial)
	defer timer.Stop()
	for {
		select {
		case res := <-ch:
			return res.c, res.err
		case <-timer.C:
			r.log(slog.LevelWarn, r.Peer+" does not answer; still waiting")
			if r.OnSlow != nil {
				r.OnSlow()
			}
		case <-ctx.Done():
			go func() {
				if res := <-ch; res.err == nil {
					r.Close(res.c)
				}
			}()
			var zero C
			return zero, ctx.Err()
		}
	}
}

// Watch runs watch on a goroutine of its own, and calls report with each
// value watch sends on values, until ctx is done; then it waits up to
// CloseGrace for watch to return, calling late if it does not. report is
// called from the caller's goroutine only, never concurrently, and never
// after Watch returns: a watcher blocked on the display server cannot hold
// up its consumer, nor the consumer its watcher (given a buffered values).
func Watch[T any](ctx context.Context, values <-chan T, watch func(), report func(T), late func()) {
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watch()
	}()
	for {
		select {
		case v := <-values:
			if ctx.Err() == nil {
				report(v)
			}
		case <-ctx.Done():
			select {
			case <-watched:
			case <-time.After(CloseGrace):
				late()
			}
			return
		}
	}
}

// Sender is a post function that hands v over on ch, waiting for the
// consumer to take it, or for ctx to end: for watchers whose every value
// matters, in order (idle, active, idle).
func Sender[T any](ctx context.Context, ch chan<- T) func(T) {
	return func(v T) {
		select {
		case ch <- v:
		case <-ctx.Done():
		}
	}
}
