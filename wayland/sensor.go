package wayland

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/antidrift/antidrift/internal/latest"
	"github.com/antidrift/antidrift/internal/redial"
	"github.com/antidrift/antidrift/service"
	"github.com/antidrift/antidrift/wayland/wire"
)

// reasonNoManager is what the sensor says on a compositor without the
// foreign-toplevel interface (GNOME Shell, KWin, Weston).
const reasonNoManager = "the compositor does not offer zwlr_foreign_toplevel_manager_v1, " +
	"the window list of wlroots compositors (sway, Hyprland, river, labwc, Wayfire)"

// generations numbers connections process-wide, so a handle made on one
// connection is never taken for a handle of another.
var generations atomic.Uint64

// Sensor is the focus sensor on a wlroots compositor: it follows the
// toplevels zwlr_foreign_toplevel_manager_v1 lists and reports the
// activated one. Its connection is also the Guard's (see NewGuard).
type Sensor struct {
	display    string
	runtimeDir string
	log        *slog.Logger
	slowDial   time.Duration

	mu   sync.Mutex
	live *live // the connection in use; nil while there is none
}

// live is a connection the sensor follows toplevels on, as the guard sees it.
type live struct {
	s    *session
	tops *toplevels
	seat uint32 // 0 when the compositor offers no seat
	// minimizeIgnored: set_minimized was tried on this connection and the
	// compositor did nothing (sway), so the guard goes straight to its IPC.
	minimizeIgnored atomic.Bool
}

// NewSensor prepares a sensor for display (normally WAYLAND_DISPLAY: a
// socket name under XDG_RUNTIME_DIR, or an absolute path). An empty display
// means there is no compositor to watch. Window titles are never logged
// above debug level.
func NewSensor(display string, logger *slog.Logger) *Sensor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sensor{display: display, runtimeDir: os.Getenv("XDG_RUNTIME_DIR"), log: logger, slowDial: redial.SlowDial}
}

// Run reports the focused window once at start and on every change, until
// ctx is done. report is called from Run's goroutine only, never
// concurrently, and not after Run returns. Newest wins: when focus changes
// faster than report returns, intermediate snapshots are dropped.
// Consecutive identical snapshots are reported once.
//
// When the compositor goes away, or sends what cannot be understood, Run
// reports the evidence unavailable and reconnects with backoff (1 s doubling
// to 30 s). With no display at all it reports unavailable once and waits.
func (s *Sensor) Run(ctx context.Context, report func(service.Window)) {
	box := latest.New[service.Window]()
	redial.Watch(ctx, box.C(), func() { s.watch(ctx, box.Post) }, report, func() {
		s.log.Warn("wayland: the compositor connection did not close in time; leaving it behind", "display", s.display)
	})
}

// watch connects, follows toplevels, and reconnects until ctx is done,
// saying in the evidence why there is none while it cannot see.
func (s *Sensor) watch(ctx context.Context, post func(service.Window)) {
	path, err := wire.SocketPath(s.display, s.runtimeDir)
	if err != nil {
		s.log.Warn("wayland: focus tracking is off", "reason", err)
		post(unavailable(err.Error()))
		return
	}
	r := newRedialer(path, s.log, "focus tracking", s.slowDial)
	r.OnSlow = func() {
		post(unavailable(fmt.Sprintf("the Wayland compositor at %s does not answer; still waiting", path)))
	}
	r.OnLost = func(err error) {
		if !errors.Is(err, errNoManager) { // if so, the reason was posted when it was found out
			post(unavailable(lostReason(path, err, "lost the Wayland compositor at %s; reconnecting")))
		}
	}
	r.OnDialFailed = func(err error, lost bool) {
		if !lost || errors.Is(err, wire.ErrMalformed) { // after a loss, the reason stays "lost … reconnecting"
			post(unavailable(lostReason(path, err, "cannot connect to the Wayland display %s; retrying")))
		}
	}
	r.Run(ctx, func(ctx context.Context, ses *session) error { return s.follow(ctx, ses, post) })
}

// lostReason says why there is no evidence after err on the compositor at
// path: it misbehaved, or else what format says.
func lostReason(path string, err error, format string) string {
	if errors.Is(err, wire.ErrMalformed) {
		return fmt.Sprintf("the Wayland compositor at %s sent a malformed message; reconnecting", path)
	}
	return fmt.Sprintf(format, path)
}

// errNoManager ends a session on a compositor without foreign-toplevel
// once the connection closes (a later compositor may offer it).
var errNoManager = errors.New(reasonNoManager)

// follow binds the foreign-toplevel manager on one connection and reports
// focus until the connection fails or ctx is done.
func (s *Sensor) follow(ctx context.Context, ses *session, post func(service.Window)) error {
	mg, ok := ses.find(managerInterface)
	if !ok {
		s.log.Warn("wayland: focus tracking is off", "reason", reasonNoManager, "socket", ses.path)
		post(unavailable(reasonNoManager))
		return ses.lacking(errNoManager)
	}
	manager, _, err := ses.bind(ctx, mg, managerVersion)
	if err != nil {
		return err
	}
	l := &live{s: ses, tops: newToplevels(generations.Add(1), manager)}
	if sg, ok := ses.find(seatInterface); ok {
		if l.seat, _, err = ses.bind(ctx, sg, seatVersion); err != nil {
			return err
		}
	}
	// Report nothing until the compositor has told us of every toplevel it
	// has: the callback of this sync comes after their first done events.
	initial := ses.newID()
	if err := ses.send(ctx, wire.NewMessage(displayID, displaySync).NewID(initial)); err != nil {
		return err
	}
	s.setLive(l)
	defer s.setLive(nil)

	ready := false
	for {
		m, err := ses.next()
		if err != nil {
			return err
		}
		switch m.Object {
		case initial:
			ready = true
		default:
			var closed uint32
			closed, err = l.tops.event(m)
			if closed != 0 && err == nil {
				err = ses.send(ctx, wire.NewMessage(closed, handleDestroy))
			}
		}
		if err != nil {
			return err
		}
		// A burst (focus leaving one window and reaching another comes as
		// two batches) is reported once, as it ends: never the moment of
		// "no focus" in between.
		if ready && ses.conn.Buffered() == 0 {
			w := l.tops.focused()
			s.log.Debug("wayland: focused window", "window", w.ID, "app_id", w.Class, "title", w.Title)
			post(w)
		}
	}
}

func (s *Sensor) setLive(l *live) {
	s.mu.Lock()
	s.live = l
	s.mu.Unlock()
}

// current is the connection in use, or nil.
func (s *Sensor) current() *live {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

func unavailable(reason string) service.Window {
	return service.Window{Reason: reason}
}
