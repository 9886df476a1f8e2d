package gnomeshell

import (
	"context"
	"log/slog"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/latest"
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
	news *latest.Mailbox[service.Window] // the extension's reports, for Run
}

// NewSensor prepares a sensor that follows GNOME Shell on conn, the
// daemon's session bus connection.
func NewSensor(conn *dbus.Conn, log *slog.Logger) *Sensor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sensor{conn: conn, log: log, news: latest.New[service.Window]()}
}

// Push takes one report of the extension's: the focused window's handle
// (Mutter's window id; "" when no window has focus: the desktop was
// clicked, or the only window closed), its WM class (on Wayland, the app
// id) and its title. It never blocks; the newest report wins. Safe to call
// from any goroutine, before and during Run.
func (s *Sensor) Push(handle, app, title string) {
	s.news.Post(service.ReportedWindow(handle, app, title))
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
	var pushed pushes
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
			emit(service.CannotSee("cannot follow GNOME Shell on the session bus: " + err.Error()))
			<-ctx.Done()
		}
		return
	}
	defer f.Close()
	var st sensorState
	if f.owner.Unique != "" {
		s.askExtension(ctx, f, &st)
	}
	for {
		select { // a report pulled while handling a signal
		case w := <-s.news.C():
			pushed = pushes{last: w, any: true}
		default:
		}
		emit(s.window(f, st, pushed))
		select {
		case <-ctx.Done():
			return
		case w := <-s.news.C():
			pushed = pushes{last: w, any: true}
		case sig, ok := <-f.Signals:
			if !ok {
				emit(service.CannotSee(reasonClosedBus))
				<-ctx.Done()
				return
			}
			if s.handle(ctx, f, &st, sig) {
				pushed = pushes{}
				if f.owner.Unique != "" {
					s.askExtension(ctx, f, &st)
				}
			}
		}
	}
}

// pushes is what the extension of the GNOME Shell in use has reported.
type pushes struct {
	last service.Window // the newest report; valid when any
	any  bool
}

// window is what there is to report now.
func (s *Sensor) window(f *follower, st sensorState, pushed pushes) service.Window {
	switch {
	case f.owner.Unique == "":
		return service.CannotSee(reasonNoShell)
	case !st.known:
		return service.CannotSee(reasonAsking)
	case st.problem != "":
		return service.CannotSee(st.reason())
	case !pushed.any:
		return service.CannotSee(reasonNoReport)
	}
	return pushed.last
}

// handle applies one signal from the bus. It says whether GNOME Shell's
// name changed hands, forgetting what the old Shell said: the caller asks
// the new one.
func (s *Sensor) handle(ctx context.Context, f *follower, st *sensorState, sig *dbus.Signal) (newShell bool) {
	if news, changed := f.ownerChange(sig); news {
		if !changed {
			return false
		}
		// What the old Shell said goes with it; the new one is asked.
		*st = sensorState{seq: sig.Sequence}
		s.news.Forget()
		if f.owner.Unique == "" {
			s.log.Warn("gnome-shell: GNOME Shell left the session bus")
		} else {
			s.log.Info("gnome-shell: GNOME Shell is on the session bus", "owner", f.owner.Unique)
		}
		return true
	}
	if f.fromOwner(sig, shellPath, propertiesIface+".PropertiesChanged") {
		var iface string
		var changed map[string]dbus.Variant
		var invalidated []string
		if dbus.Store(sig.Body, &iface, &changed, &invalidated) != nil || iface != extensionsIface {
			return false
		}
		if on, ok := changed[userExtensionsEnabled].Value().(bool); ok && sig.Sequence > st.userSeq {
			st.userOff, st.userSeq = !on, sig.Sequence
		}
		return false
	}
	if !f.fromOwner(sig, shellPath, extensionsIface+".ExtensionStateChanged") {
		return false
	}
	var uuid string
	var info map[string]dbus.Variant
	if dbus.Store(sig.Body, &uuid, &info) != nil || uuid != ExtensionUUID || sig.Sequence <= st.seq {
		return false
	}
	s.learn(ctx, f, st, extensionProblem(info), sig.Sequence)
	return false
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
	before := s.news.Posts()
	var handle, app, title string
	if err := f.call(ctx, handsPath, handsIface+".Focus").Store(&handle, &app, &title); err != nil {
		s.log.Debug("gnome-shell: asking the extension what has focus failed", "err", err)
		return
	}
	s.news.PostUnlessNewer(service.ReportedWindow(handle, app, title), before)
}
