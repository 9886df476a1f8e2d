package x11

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/antidrift/antidrift/internal/latest"
	"github.com/antidrift/antidrift/internal/redial"
	"github.com/antidrift/antidrift/service"
)

var errConnClosed = errors.New("the X connection closed")

// Sensor is the focus sensor: it reports the active window and its title.
type Sensor struct {
	display  string
	log      *slog.Logger
	slowDial time.Duration
}

// NewSensor prepares a sensor for display (normally os.Getenv("DISPLAY")).
// An empty display means there is no X server to watch. Window titles are
// never logged above debug level.
func NewSensor(display string, logger *slog.Logger) *Sensor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sensor{display: display, log: logger, slowDial: redial.SlowDial}
}

// Run reports the active window once at start and on every change, until ctx
// is done. report is called from Run's goroutine only, never concurrently,
// and not after Run returns. Newest wins: when focus changes faster than
// report returns, intermediate snapshots are dropped. Consecutive identical
// snapshots are reported once.
//
// When the X server goes away Run reports the evidence unavailable and
// reconnects to the same display with backoff (1 s doubling to 30 s). With no
// display at all it reports unavailable once and waits for ctx.
func (s *Sensor) Run(ctx context.Context, report func(service.Window)) {
	box := latest.New[service.Window]()
	redial.Watch(ctx, box.C(), func() { s.watch(ctx, box.Post) }, report, func() {
		s.log.Warn("x11: the X connection did not close in time; leaving it behind", "display", s.display)
	})
}

// watch connects, follows focus, and reconnects until ctx is done, saying
// in the evidence why there is none while it cannot see.
func (s *Sensor) watch(ctx context.Context, post func(service.Window)) {
	if s.display == "" {
		s.log.Warn("x11: focus tracking is off", "reason", reasonNoDisplay)
		post(unavailable(reasonNoDisplay))
		return
	}
	r := redialer{
		display:  s.display,
		log:      s.log,
		what:     "focus tracking",
		slowDial: s.slowDial,
		onSlow: func() {
			post(unavailable(fmt.Sprintf("the X server at %s does not answer; still waiting", s.display)))
		},
		onLost: func(error) {
			post(unavailable(fmt.Sprintf("lost the X server at %s; reconnecting", s.display)))
		},
		onDialFailed: func(_ error, lost bool) {
			if !lost { // after a loss, the reason stays "lost … reconnecting"
				post(unavailable(fmt.Sprintf("cannot connect to the X display %s; retrying", s.display)))
			}
		},
	}
	r.run(ctx, func(ctx context.Context, c *conn) error { return s.follow(c, post) })
}

// follow watches one connection until it fails or ctx is done. It reports the
// active window now and whenever _NET_ACTIVE_WINDOW changes on the root, or
// the active window's WM_CLASS, title or GTK application id changes.
// The redialer closes c when ctx is done and turns a panic into an error.
func (s *Sensor) follow(c *conn, post func(service.Window)) (err error) {
	// Listen first, then read, so no change slips in between.
	err = xproto.ChangeWindowAttributesChecked(c.x, c.root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskPropertyChange}).Check()
	if err != nil {
		return err
	}
	t := &tracker{c: c, post: post, log: s.log}
	if err := t.refresh(); err != nil {
		return err
	}
	for {
		ev, xerr := c.x.WaitForEvent()
		if ev == nil && xerr == nil {
			return errConnClosed
		}
		t.rootChanged = false
		dirty := t.relevant(ev, xerr)
		// Drain what is already queued so a burst costs one refresh.
		for {
			ev, xerr = c.x.PollForEvent()
			if ev == nil && xerr == nil {
				break
			}
			dirty = t.relevant(ev, xerr) || dirty
		}
		if dirty {
			var err error
			if t.rootChanged || t.watching == 0 {
				err = t.refresh()
			} else {
				// Only the active window's own properties changed: it is
				// still the active one (a change of _NET_ACTIVE_WINDOW
				// would be in this batch too), so skip re-reading the root.
				err = t.describe(t.watching)
			}
			if err != nil {
				return err
			}
		}
	}
}

// tracker is the per-connection state of follow.
type tracker struct {
	c        *conn
	post     func(service.Window)
	log      *slog.Logger
	watching xproto.Window // the window whose properties we listen to; 0 if none
	// rootChanged: _NET_ACTIVE_WINDOW changed in the batch being handled.
	rootChanged bool
}

// relevant reports whether an event calls for a new snapshot.
func (t *tracker) relevant(ev any, xerr error) bool {
	if xerr != nil {
		// Typically BadWindow from un-listening to a window that is gone.
		t.log.Debug("x11: X error", "err", xerr)
		return false
	}
	if e, ok := ev.(xproto.DestroyNotifyEvent); ok && e.Window == t.watching && t.watching != 0 {
		// The active window closed. Not every window manager says so in
		// _NET_ACTIVE_WINDOW (openbox keeps naming the window when it was
		// the last one), so read again: it is gone, and unless the root
		// names another window, none has focus.
		t.rootChanged = true
		return true
	}
	e, ok := ev.(xproto.PropertyNotifyEvent)
	if !ok {
		return false
	}
	if e.Window == t.c.root {
		if e.Atom == t.c.netActiveWindow {
			t.rootChanged = true
			return true
		}
		return false
	}
	return e.Window == t.watching &&
		(e.Atom == t.c.netWMName || e.Atom == xproto.AtomWmName || e.Atom == xproto.AtomWmClass || e.Atom == t.c.gtkAppID)
}

// refresh reads the active window and posts what it sees. It returns an error
// only when the connection is unusable.
func (t *tracker) refresh() error {
	id, ok, err := t.c.activeWindow()
	if err != nil {
		return err
	}
	t.listen(id)
	switch {
	case !ok:
		t.post(unavailable(reasonNoEWMH))
		return nil
	case id == 0:
		t.post(service.NoFocus())
		return nil
	}
	return t.describe(id)
}

// describe reads window id's class and title and posts them.
func (t *tracker) describe(id xproto.Window) error {
	w, err := t.c.describe(id)
	if isBadWindow(err) {
		// The window _NET_ACTIVE_WINDOW names is gone: closed before the
		// window manager named another, or with nothing left to name.
		t.log.Debug("x11: the active window vanished", "window", fmt.Sprintf("%#x", uint32(id)))
		t.post(service.NoFocus())
		return nil
	}
	if err != nil {
		return err
	}
	t.log.Debug("x11: active window", "window", w.ID,
		"class", w.Class, "instance", w.Instance, "title", w.Title)
	t.post(w)
	return nil
}

// listen moves our PropertyChange and StructureNotify selection from the
// previously active window to id. Both requests are unchecked: a BadWindow
// (the window is gone) shows up as an event error, which relevant ignores,
// and the property reads that follow in the same request stream see the
// same BadWindow.
func (t *tracker) listen(id xproto.Window) {
	if id == t.c.root {
		id = 0 // never touch our selection on the root
	}
	if id == t.watching {
		return
	}
	if t.watching != 0 {
		xproto.ChangeWindowAttributes(t.c.x, t.watching, xproto.CwEventMask, []uint32{0})
	}
	if id != 0 {
		// Its properties (class, title), and its end (DestroyNotify).
		mask := uint32(xproto.EventMaskPropertyChange | xproto.EventMaskStructureNotify)
		xproto.ChangeWindowAttributes(t.c.x, id, xproto.CwEventMask, []uint32{mask})
	}
	t.watching = id
}
