package gnomeshell

import (
	"context"
	"log/slog"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// Why there is no evidence while GNOME Shell itself is not there to ask.
const (
	reasonNoShell   = "GNOME Shell is not running: nobody owns org.gnome.Shell on the session bus"
	reasonAsking    = "asking GNOME Shell about the antidrift extension"
	reasonNoReport  = "waiting for the antidrift extension in GNOME Shell to report the focused window"
	reasonClosedBus = "the session bus connection is closed"
)

// Sensor is the focus sensor on GNOME Shell. The extension pushes what has
// focus (Push, called by the daemon's org.antidrift.Evidence1 for the
// owner of org.gnome.Shell only); Run reports it, or why there is nothing
// to report, following GNOME Shell and the extension's state.
type Sensor struct {
	conn *dbus.Conn
	log  *slog.Logger

	mu     sync.Mutex
	last   service.Window // the newest report; valid when pushed
	pushed bool
	gen    uint64        // counts pushes, so a slower pull never undoes one
	wake   chan struct{} // one slot: a push is waiting for Run
}

// NewSensor prepares a sensor that follows GNOME Shell on conn, the
// daemon's session bus connection.
func NewSensor(conn *dbus.Conn, log *slog.Logger) *Sensor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sensor{conn: conn, log: log, wake: make(chan struct{}, 1)}
}

// Push takes one report of the extension's: the focused window's handle
// (Mutter's window id; "" when no window has focus), its WM class and its
// title. It never blocks; the newest report wins. Safe to call from any
// goroutine, before and during Run.
func (s *Sensor) Push(handle, class, title string) {
	s.mu.Lock()
	s.last, s.pushed = reportWindow(handle, class, title), true
	s.gen++
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// reportWindow is the window a report describes. The interface carries one
// app id, the WM class (on Wayland, the app id), so Instance stays empty.
func reportWindow(handle, class, title string) service.Window {
	if handle == "" {
		return service.Window{Available: true}
	}
	return service.Window{ID: handle, Class: class, Title: title, Available: true}
}

// sensorState is what Run knows about GNOME Shell and the extension.
type sensorState struct {
	known   bool          // the extension's state has been learnt from this Shell
	problem string        // why the extension gives no evidence; "" when it runs
	seq     dbus.Sequence // of the message problem was learnt from
	// userOff: GNOME Shell runs no user extensions at all (its
	// UserExtensionsEnabled property, the disable-user-extensions setting);
	// the extension then looks merely not enabled.
	userOff bool
	userSeq dbus.Sequence
}

// reason is why there is no evidence, "" when the extension runs.
func (st sensorState) reason() string {
	if st.problem == reasonNotEnabled && st.userOff {
		return reasonUserExtsOff
	}
	return st.problem
}

// running says whether the extension is known to run.
func (st sensorState) running() bool { return st.known && st.problem == "" }

// Run reports the focused window, or why it cannot, once at start and on
// every change, until ctx is done. report is called from Run's goroutine
// only, never after Run returns; consecutive identical windows are
// reported once, and pushes that come faster than report returns coalesce
// (newest wins).
//
// GNOME Shell leaving the bus makes the evidence unavailable, and takes
// what it reported with it; when it comes back the extension's state is
// asked again and followed through ExtensionStateChanged.
func (s *Sensor) Run(ctx context.Context, report func(service.Window)) {
	var sent service.Window
	var hasSent bool
	emit := func(w service.Window) {
		if hasSent && w == sent {
			return
		}
		sent, hasSent = w, true
		if w.Available {
			s.log.Debug("gnome-shell: focus", "class", w.Class, "title", w.Title)
		} else {
			s.log.Info("gnome-shell: no window evidence", "reason", w.Reason)
		}
		report(w)
	}
	f, err := follow(ctx, s.conn, s.log, shellName, []dbus.MatchOption{
		dbus.WithMatchObjectPath(shellPath), dbus.WithMatchInterface(extensionsIface),
		dbus.WithMatchMember("ExtensionStateChanged"), dbus.WithMatchArg(0, ExtensionUUID),
	}, []dbus.MatchOption{
		dbus.WithMatchObjectPath(shellPath), dbus.WithMatchInterface(propertiesIface),
		dbus.WithMatchMember("PropertiesChanged"), dbus.WithMatchArg(0, extensionsIface),
	})
	if err != nil {
		if ctx.Err() == nil {
			emit(service.Window{Reason: "cannot follow GNOME Shell on the session bus: " + err.Error()})
			<-ctx.Done()
		}
		return
	}
	defer f.close()
	var st sensorState
	if f.owner != "" {
		s.askExtension(ctx, f, &st)
	}
	for {
		emit(s.window(f, st))
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case sig, ok := <-f.signals:
			if !ok {
				emit(service.Window{Reason: reasonClosedBus})
				<-ctx.Done()
				return
			}
			s.handle(ctx, f, &st, sig)
		}
	}
}

// window is what there is to report now.
func (s *Sensor) window(f *follower, st sensorState) service.Window {
	switch {
	case f.owner == "":
		return service.Window{Reason: reasonNoShell}
	case !st.known:
		return service.Window{Reason: reasonAsking}
	case st.problem != "":
		return service.Window{Reason: st.reason()}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pushed {
		return service.Window{Reason: reasonNoReport}
	}
	return s.last
}

// handle applies one signal from the bus.
func (s *Sensor) handle(ctx context.Context, f *follower, st *sensorState, sig *dbus.Signal) {
	if news, changed := f.ownerChange(sig); news {
		if !changed {
			return
		}
		// What the old Shell said goes with it.
		s.mu.Lock()
		s.pushed = false
		s.mu.Unlock()
		*st = sensorState{seq: sig.Sequence}
		if f.owner == "" {
			s.log.Warn("gnome-shell: GNOME Shell left the session bus")
			return
		}
		s.log.Info("gnome-shell: GNOME Shell is on the session bus", "owner", f.owner)
		s.askExtension(ctx, f, st)
		return
	}
	if f.fromOwner(sig, shellPath, propertiesIface+".PropertiesChanged") {
		var iface string
		var changed map[string]dbus.Variant
		var invalidated []string
		if dbus.Store(sig.Body, &iface, &changed, &invalidated) != nil || iface != extensionsIface {
			return
		}
		if on, ok := changed[userExtensionsEnabled].Value().(bool); ok && sig.Sequence > st.userSeq {
			st.userOff, st.userSeq = !on, sig.Sequence
		}
		return
	}
	if !f.fromOwner(sig, shellPath, extensionsIface+".ExtensionStateChanged") {
		return
	}
	var uuid string
	var info map[string]dbus.Variant
	if dbus.Store(sig.Body, &uuid, &info) != nil || uuid != ExtensionUUID || sig.Sequence <= st.seq {
		return
	}
	s.learn(ctx, f, st, extensionProblem(info), sig.Sequence)
}

// askExtension asks GNOME Shell for the extension's state, and whether it
// runs user extensions at all.
func (s *Sensor) askExtension(ctx context.Context, f *follower, st *sensorState) {
	var v dbus.Variant
	call := f.call(ctx, shellPath, propertiesIface+".Get", extensionsIface, userExtensionsEnabled)
	if call.Store(&v) == nil {
		if on, ok := v.Value().(bool); ok && call.ResponseSequence > st.userSeq {
			st.userOff, st.userSeq = !on, call.ResponseSequence
		}
	}
	call = f.call(ctx, shellPath, extensionsIface+".GetExtensionInfo", ExtensionUUID)
	var info map[string]dbus.Variant
	if err := call.Store(&info); err != nil {
		if ctx.Err() == nil {
			s.learn(ctx, f, st, "cannot ask GNOME Shell about the antidrift extension: "+err.Error(), call.ResponseSequence)
		}
		return
	}
	s.learn(ctx, f, st, extensionProblem(info), call.ResponseSequence)
}

// learn records the extension's state, learnt from message seq. When the
// extension has just started running, it is asked what has focus: its own
// first report may have come before the daemon believed it.
func (s *Sensor) learn(ctx context.Context, f *follower, st *sensorState, problem string, seq dbus.Sequence) {
	if seq != 0 && seq <= st.seq {
		return
	}
	was := *st
	st.known, st.problem, st.seq = true, problem, seq
	if !was.known || problem != was.problem {
		s.log.Info("gnome-shell: the antidrift extension", "running", problem == "", "problem", problem)
	}
	if st.running() && !was.running() {
		s.pull(ctx, f)
	}
}

// pull asks the extension what has focus (org.antidrift.Shell1.Focus) and
// takes the answer as a report, unless a push came in the meantime.
func (s *Sensor) pull(ctx context.Context, f *follower) {
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()
	var handle, class, title string
	if err := f.call(ctx, handsPath, handsIface+".Focus").Store(&handle, &class, &title); err != nil {
		s.log.Debug("gnome-shell: asking the extension what has focus failed", "err", err)
		return
	}
	s.mu.Lock()
	if s.gen == gen {
		s.last, s.pushed = reportWindow(handle, class, title), true
	}
	s.mu.Unlock()
}
