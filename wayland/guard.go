package wayland

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/antidrift/antidrift/service"
	"github.com/antidrift/antidrift/wayland/wire"
)

// How long the guard waits for the compositor to act on a request. The
// wait ends at once when the compositor answers; these only bound a
// compositor that ignores the request.
const (
	minimizeWait = 300 * time.Millisecond
	activateWait = time.Second
)

var (
	errNotConnected = errors.New("wayland: not connected to the compositor")
	errGuardClosed  = errors.New("wayland: guard is closed")
	errNoSeat       = errors.New("wayland: the compositor offers no seat to activate windows on")
)

// hider is a compositor's own way to hide the focused window, for
// compositors that ignore set_minimized: sway's scratchpad, Hyprland's
// special workspaces.
type hider interface {
	name() string
	// hideFocused hides the focused window if it is the one described,
	// else returns service.ErrNotActive and does nothing.
	hideFocused(ctx context.Context, appID, title string) (restore, error)
}

// restore brings a hidden window back; activate gives it focus through
// the foreign-toplevel handle, at the point the compositor needs it.
type restore func(ctx context.Context, activate func(context.Context) error) error

// Guard is the hands on a wlroots compositor: it minimizes and activates
// toplevels through the foreign-toplevel handles the Sensor follows, on the
// Sensor's connection — the handles the sensor reports exist only there.
// Where the compositor ignores set_minimized (sway, Hyprland) it hides the
// window through the compositor's own IPC. It implements service.Guard.
// Calls are serialized.
type Guard struct {
	s     *Sensor
	log   *slog.Logger
	hider hider // nil when the compositor's IPC is not known

	sem    chan struct{} // one slot: whoever holds it owns the fields below
	closed bool
	hidden map[string]restore // windows hidden through hider, by handle
}

var _ service.Guard = (*Guard)(nil)

// NewGuard makes the guard that acts through sensor's connection (it can
// act only while sensor runs and is connected). It finds the compositor's
// IPC from the environment: SWAYSOCK for sway, HYPRLAND_INSTANCE_SIGNATURE
// for Hyprland.
func NewGuard(sensor *Sensor, logger *slog.Logger) *Guard {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Guard{s: sensor, log: logger, sem: make(chan struct{}, 1), hidden: map[string]restore{}}
	switch {
	case os.Getenv("SWAYSOCK") != "":
		g.hider = swayIPC{path: os.Getenv("SWAYSOCK")}
	case os.Getenv("HYPRLAND_INSTANCE_SIGNATURE") != "":
		g.hider = hyprIPC{path: hyprSocket(os.Getenv("XDG_RUNTIME_DIR"), os.Getenv("HYPRLAND_INSTANCE_SIGNATURE"))}
	}
	return g
}

// MinimizeWindow takes window h off the screen if it is still the focused
// window, and returns nil only when it did. It returns service.ErrNotActive,
// and does nothing, when the window no longer has focus.
//
// It asks the compositor with set_minimized and waits briefly for the
// handle to say minimized. A compositor that ignores the request (sway,
// Hyprland) is remembered for the connection, and the window is hidden
// through its IPC instead.
func (g *Guard) MinimizeWindow(ctx context.Context, h string) error {
	return g.on(ctx, h, func(w target) error {
		l, id, st := w.l, w.id, w.st
		if !w.exists || !st.activated {
			return service.ErrNotActive
		}
		if !l.minimizeIgnored.Load() {
			if err := l.s.send(ctx, wire.NewMessage(id, handleSetMinimized)); err != nil {
				return err
			}
			minimized, err := awaitState(ctx, l, id, w.changed, minimizeWait, func(s toplevelState) (bool, error) {
				switch {
				case s.minimized:
					return true, nil
				case !s.activated:
					return false, service.ErrNotActive // the person moved on meanwhile
				}
				return false, nil
			})
			if minimized || err != nil {
				return err
			}
			l.minimizeIgnored.Store(true)
			g.log.Info("wayland: the compositor ignores requests to minimize windows", "fallback", g.hiderName())
		}
		if g.hider == nil {
			return errors.New("wayland: the compositor ignores requests to minimize windows, and antidrift knows no other way to hide them on it")
		}
		undo, err := g.hider.hideFocused(ctx, st.appID, st.title)
		if err != nil {
			return err
		}
		g.forgetStale(l)
		g.hidden[h] = undo
		return nil
	})
}

func (g *Guard) hiderName() string {
	if g.hider == nil {
		return "none"
	}
	return g.hider.name()
}

// ActivateWindow gives window h focus, bringing it back from wherever
// MinimizeWindow put it, and waits until the compositor says it has focus.
func (g *Guard) ActivateWindow(ctx context.Context, h string) error {
	return g.on(ctx, h, func(w target) error {
		l, id, st := w.l, w.id, w.st
		if !w.exists {
			return fmt.Errorf("wayland: window %s no longer exists", h)
		}
		if l.seat == 0 {
			return errNoSeat
		}
		activate := func(ctx context.Context) error {
			var reqs []*wire.Builder
			if st.minimized {
				reqs = append(reqs, wire.NewMessage(id, handleUnsetMinimized))
			}
			for _, r := range append(reqs, wire.NewMessage(id, handleActivate).Object(l.seat)) {
				if err := l.s.send(ctx, r); err != nil {
					return err
				}
			}
			active, err := awaitState(ctx, l, id, w.changed, activateWait, func(s toplevelState) (bool, error) {
				return s.activated, nil
			})
			if err == nil && !active {
				err = fmt.Errorf("wayland: the compositor did not give window %s focus", h)
			}
			return err
		}
		undo, hidden := g.hidden[h]
		if !hidden {
			if st.activated {
				return nil
			}
			return activate(ctx)
		}
		delete(g.hidden, h)
		return undo(ctx, activate)
	})
}

// awaitState waits, at most wait and within ctx, until done(state of id)
// says done or fails. changed is from the lookup that preceded the request,
// so no change between the request and the wait is missed. A window that
// closes meanwhile is service.ErrNotActive.
func awaitState(ctx context.Context, l *live, id uint32, changed <-chan struct{}, wait time.Duration,
	done func(toplevelState) (bool, error)) (bool, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-timer.C:
			return false, nil
		case <-changed:
		}
		var (
			st toplevelState
			ok bool
		)
		st, ok, changed = l.tops.lookup(id)
		if !ok {
			return false, service.ErrNotActive
		}
		if ok, err := done(st); ok || err != nil {
			return ok, err
		}
	}
}

// forgetStale drops hidden windows of other connections, and of this one
// that closed, so the map holds only what can still be restored.
func (g *Guard) forgetStale(l *live) {
	for h := range g.hidden {
		gen, id, _ := parseHandle(h)
		if _, ok, _ := l.tops.lookup(id); gen != l.tops.gen || !ok {
			delete(g.hidden, h)
		}
	}
}

// Available reports whether the guard can act now: the sensor is connected
// to a compositor with foreign-toplevel.
func (g *Guard) Available() bool {
	release, err := g.acquire(context.Background())
	if err != nil {
		return false
	}
	defer release()
	return g.s.current() != nil
}

// Close makes later calls fail. The connection is the sensor's to close.
func (g *Guard) Close() error {
	g.sem <- struct{}{}
	defer func() { <-g.sem }()
	g.closed = true
	return nil
}

// target is a window handle as the guard finds it on the sensor's
// connection, when the call starts.
type target struct {
	l       *live
	id      uint32
	st      toplevelState
	exists  bool            // the handle names an open toplevel of this connection
	changed <-chan struct{} // closed at the next change after st
}

// on runs op on window h, one call at a time, while the sensor is
// connected.
func (g *Guard) on(ctx context.Context, h string, op func(target) error) error {
	gen, id, err := parseHandle(h)
	if err != nil {
		return err
	}
	release, err := g.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	l := g.s.current()
	if l == nil {
		return errNotConnected
	}
	st, ok, changed := l.tops.lookup(id)
	return op(target{l: l, id: id, st: st, exists: ok && gen == l.tops.gen, changed: changed})
}

// acquire takes the guard's one slot, waiting within ctx; it fails once
// the guard is closed.
func (g *Guard) acquire(ctx context.Context) (release func(), err error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case g.sem <- struct{}{}:
	}
	if g.closed {
		<-g.sem
		return nil, errGuardClosed
	}
	return func() { <-g.sem }, nil
}
