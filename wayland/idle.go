package wayland

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"

	"github.com/antidrift/antidrift/internal/redial"
	"github.com/antidrift/antidrift/wayland/wire"
)

// minIdleAfter is the shortest idle threshold the watcher accepts.
const minIdleAfter = time.Second

// resumeGrace is how much longer than the threshold a watcher that was
// idle when its compositor went away waits, on the new connection, for the
// compositor to say idle before concluding there was input meanwhile.
const resumeGrace = time.Second

var errNoNotifier = errors.New("the compositor does not offer ext_idle_notifier_v1 and a seat")

// IdleWatcher tells when the user stops and resumes using the keyboard and
// mouse, as the compositor sees it through ext_idle_notifier_v1: wlroots
// compositors and KWin offer it. The compositor keeps the time; the watcher
// only waits to be told (idled, resumed). Like the compositor's own idle
// handling, an idle inhibitor (a video playing) holds idleness off.
type IdleWatcher struct {
	display    string
	runtimeDir string
	after      time.Duration
	log        *slog.Logger
	slowDial   time.Duration
}

// NewIdleWatcher watches idleness on display (normally WAYLAND_DISPLAY);
// after is the idle threshold (config idle_after), at least a second. An
// empty display means there is nothing to watch.
func NewIdleWatcher(display string, after time.Duration, logger *slog.Logger) *IdleWatcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &IdleWatcher{
		display:    display,
		runtimeDir: os.Getenv("XDG_RUNTIME_DIR"),
		after:      max(after, minIdleAfter),
		log:        logger,
		slowDial:   redial.SlowDial,
	}
}

// Run calls report(true) when the user has been idle for the threshold and
// report(false) when input resumes, alternating, starting from "active" (the
// first report is true). report is called from Run's goroutine only, never
// concurrently, and not after Run returns. Run returns once ctx is done.
//
// When the compositor goes away the last report stands; Run reconnects with
// backoff (1 s doubling to 30 s). If the user was reported idle, a
// report(false) follows unless the new compositor says idle within the
// threshold (and a second): it has seen input meanwhile. With no display,
// or a compositor without ext_idle_notifier_v1, it never reports.
func (w *IdleWatcher) Run(ctx context.Context, report func(idle bool)) {
	path, err := wire.SocketPath(w.display, w.runtimeDir)
	if err != nil {
		w.log.Warn("wayland: idle detection is off", "reason", err)
		<-ctx.Done()
		return
	}
	states := make(chan bool)
	watch := func() {
		t := &idleState{log: w.log, post: redial.Sender(ctx, states)}
		r := newRedialer(path, w.log, "idle detection", w.slowDial)
		r.Run(ctx, func(ctx context.Context, s *session) error { return w.session(ctx, s, t) })
	}
	redial.Watch(ctx, states, watch, report, func() {
		w.log.Warn("wayland: the compositor connection did not close in time; leaving it behind", "display", w.display, "for", "idle detection")
	})
}

// idleState is the watcher's state across connections. set is called from
// the session and from the resume timer, so it is under mu, and posts under
// it so reports keep the order of the changes.
type idleState struct {
	mu   sync.Mutex
	idle bool
	post func(bool) // blocks until Run takes the state, or ctx is done
	log  *slog.Logger
}

func (t *idleState) set(idle bool, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if idle == t.idle {
		return
	}
	t.idle = idle
	t.log.Debug("wayland: idle state", "idle", idle, "why", why)
	t.post(idle)
}

func (t *idleState) get() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.idle
}

// session watches idleness on one connection until it fails or ctx is done.
func (w *IdleWatcher) session(ctx context.Context, s *session, t *idleState) error {
	ng, ok1 := s.find(notifierInterface)
	sg, ok2 := s.find(seatInterface)
	if !ok1 || !ok2 {
		w.log.Warn("wayland: idle detection is off", "reason", errNoNotifier, "socket", s.path)
		return s.lacking(errNoNotifier)
	}
	notifier, _, err := s.bind(ctx, ng, notifierVersion)
	if err != nil {
		return err
	}
	seat, _, err := s.bind(ctx, sg, seatVersion)
	if err != nil {
		return err
	}
	id := s.newID()
	timeout := uint32(min(w.after.Milliseconds(), math.MaxUint32))
	if err := s.send(ctx, wire.NewMessage(notifier, notifierGetIdleNotification).NewID(id).Uint(timeout).Object(seat)); err != nil {
		return err
	}
	w.log.Debug("wayland: idle detection", "socket", s.path, "after", w.after)

	// Idle when the last connection was lost: the compositor counts from
	// now, so "idled" within the threshold means still idle, and none
	// means there was input.
	var resume *time.Timer
	if t.get() {
		resume = time.AfterFunc(w.after+resumeGrace, func() { t.set(false, "input after reconnecting") })
		defer resume.Stop()
	}
	for {
		m, err := s.next()
		if err != nil {
			return err
		}
		switch {
		case m.Object == id && m.Opcode == notificationIdled:
			if resume != nil {
				resume.Stop()
			}
			t.set(true, "idled")
		case m.Object == id && m.Opcode == notificationResumed:
			t.set(false, "resumed")
		}
	}
}
