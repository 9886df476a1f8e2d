package x11

import (
	"context"
	"log/slog"
	"time"

	"github.com/antidrift/antidrift/internal/redial"
)

// redialer keeps one X connection's worth of work going for as long as a
// context lives, through redial.Redialer: connect, run a session, and after
// the X server goes away (or cannot be reached) wait with backoff and start
// over.
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
	rd := redial.Redialer[*conn]{
		// xgb's handshake cannot be interrupted; the redialer closes a
		// connection that completes after ctx ended.
		Dial:         func(context.Context) (*conn, error) { return dial(r.display) },
		Close:        func(c *conn) { c.x.Close() },
		Log:          r.log,
		Prefix:       "x11",
		Peer:         "the X server",
		Attrs:        []any{"display", r.display},
		What:         r.what,
		SlowDial:     r.slowDial,
		OnSlow:       r.onSlow,
		OnLost:       r.onLost,
		OnDialFailed: r.onDialFailed,
	}
	rd.Run(ctx, session)
}
