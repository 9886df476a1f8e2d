package dbusapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// PresenceEvent says the person went away (or came back) for a reason.
//
// Each watcher reports what its own source says, one event per change: the
// same (Reason, Away) is never reported twice in a row by one watcher. Two
// sources can both say "locked" (the screen saver on the session bus and
// logind's LockedHint on the system bus); Source tells them apart, so the core
// can keep a set of (Source, Reason) and count the person away while any of
// them is.
type PresenceEvent struct {
	Reason string // ReasonLocked or ReasonSleep
	Away   bool   // true: went away; false: came back
	Source string // SourceScreenSaver or SourceLogind
}

// Reasons and sources of a PresenceEvent.
const (
	ReasonLocked = "locked" // the screen is locked
	ReasonSleep  = "sleep"  // the machine is about to suspend (Away) or has resumed

	SourceScreenSaver = "screensaver" // org.freedesktop.ScreenSaver / org.gnome.ScreenSaver
	SourceLogind      = "logind"      // org.freedesktop.login1 on the system bus
)

// ErrNoLogind says logind could not be reached on the system bus: there is
// none (no systemd-logind or elogind), it did not answer in time, or there is
// no system bus connection at all.
var ErrNoLogind = errors.New("logind is not reachable on the system bus")

const (
	// presenceCallTimeout bounds each bus call the watchers make, to the bus
	// daemon or to the services they watch.
	presenceCallTimeout = 2 * time.Second
	// presenceSignalBuffer is the watchers' signal channel size. godbus
	// never blocks on a full channel: it hands the signal to a goroutine of
	// its own, and those can deliver out of order. Every state below keeps
	// the sequence number of what it was learnt from, so a late old signal
	// cannot undo a newer one; the buffer just keeps that rare.
	presenceSignalBuffer = 64

	busDaemonName        = "org.freedesktop.DBus"
	busDaemonPath        = dbus.ObjectPath("/org/freedesktop/DBus")
	nameOwnerChangedName = "org.freedesktop.DBus.NameOwnerChanged"
	propertiesChanged    = propertiesInterface + ".PropertiesChanged"

	logindName       = "org.freedesktop.login1"
	logindPath       = dbus.ObjectPath("/org/freedesktop/login1")
	logindManager    = "org.freedesktop.login1.Manager"
	logindSession    = "org.freedesktop.login1.Session"
	prepareForSleep  = logindManager + ".PrepareForSleep"
	lockedHint       = "LockedHint"
	preparingToSleep = "PreparingForSleep"
)

// What the watchers log when they drop a signal. Each comes with the
// attributes "signal" (interface.member) and "sender" (a unique name).
const (
	logForeignSignal   = "ignoring a signal not sent by the service's owner"
	logMalformedSignal = "ignoring a malformed signal"
)

// screenSaverServices are the screen saver interfaces we follow: the
// freedesktop one (KDE, xfce4-screensaver, ...; KDE serves it on two paths)
// and GNOME Shell's.
var screenSaverServices = []struct {
	name  string // the well-known bus name, and the interface
	paths []dbus.ObjectPath
}{
	{"org.freedesktop.ScreenSaver", []dbus.ObjectPath{"/org/freedesktop/ScreenSaver", "/ScreenSaver"}},
	{"org.gnome.ScreenSaver", []dbus.ObjectPath{"/org/gnome/ScreenSaver"}},
}

// WatchScreenSaver follows the screen saver on the session bus connection
// conn: the ActiveChanged(b) signal of org.freedesktop.ScreenSaver (on
// /org/freedesktop/ScreenSaver and /ScreenSaver) and of org.gnome.ScreenSaver
// (on /org/gnome/ScreenSaver), reported as Reason "locked", Source
// "screensaver". It asks GetActive of each one running at start, and of each
// new owner of either name later; errors there are only logged. No screen
// saver needs to be running.
//
// Signals are only accepted from the current owner of the service's name
// (tracked through NameOwnerChanged) and with a single boolean argument;
// anything else is logged and ignored. When a name's owner goes away, what it
// said goes with it. If both services run, the screen counts as locked while
// either says so.
//
// Nothing is reported while the screen is not locked: the first event is
// {locked, Away: true}, from GetActive at start or a signal. report is called
// from a goroutine of the watcher's own, never concurrently and never after
// stop returns; it should return quickly and must not call stop. stop may be
// called more than once; it also removes the watcher's match rules.
func WatchScreenSaver(conn *dbus.Conn, log *slog.Logger, report func(PresenceEvent)) (stop func(), err error) {
	if conn == nil {
		return nil, errors.New("watching the screen saver: no session bus connection")
	}
	w := newPresenceWatch(conn, log, SourceScreenSaver, report)
	s := &screenSaverWatch{presenceWatch: w}
	for _, def := range screenSaverServices {
		s.services = append(s.services, &screenSaverService{name: trackedName{name: def.name}, iface: def.name, paths: def.paths})
	}
	for _, svc := range s.services {
		if err := w.subscribe(nameOwnerMatch(svc.name.name)...); err != nil {
			w.stop()
			return nil, fmt.Errorf("following the owner of %s: %w", svc.name.name, err)
		}
		for _, path := range svc.paths {
			err := w.subscribe(
				dbus.WithMatchSender(svc.name.name),
				dbus.WithMatchObjectPath(path),
				dbus.WithMatchInterface(svc.iface),
				dbus.WithMatchMember("ActiveChanged"))
			if err != nil {
				w.stop()
				return nil, fmt.Errorf("subscribing to %s.ActiveChanged: %w", svc.iface, err)
			}
		}
	}
	for _, svc := range s.services {
		if err := w.resolve(&svc.name); err != nil {
			w.stop()
			return nil, fmt.Errorf("asking who owns %s: %w", svc.name.name, err)
		}
		if svc.name.owner == "" {
			w.log.Debug("no screen saver owns the name yet", "name", svc.name.name)
			continue
		}
		s.askActive(svc)
	}
	w.start(s.handle)
	return w.stop, nil
}

// WatchLogind follows logind on the system bus connection system: its
// PrepareForSleep(b) signal on /org/freedesktop/login1 (Reason "sleep") and
// the LockedHint property of this process's session (Reason "locked"), both
// with Source "logind". The session is the one logind gives for our pid
// (GetSessionByPID), else GetSession("auto"), which also finds the user's
// graphical session when the daemon runs as a systemd user service. It reads
// LockedHint (and the manager's PreparingForSleep, where logind has it) at
// start and whenever logind restarts, and follows PropertiesChanged on the
// session object.
//
// It returns an error wrapping ErrNoLogind, within a few seconds, when system
// is nil or logind cannot be reached; the daemon logs it once and carries on
// without. When logind is there but knows no session for us, it logs that
// and follows sleep only.
//
// Signals are only accepted from the current owner of org.freedesktop.login1
// and with the documented argument types; anything else is logged and
// ignored. When logind leaves the bus, what it said goes with it (reported as
// back) until a new logind says otherwise. Nothing is reported for a state
// that is not "away" at start. report and stop behave as for WatchScreenSaver.
func WatchLogind(system *dbus.Conn, log *slog.Logger, report func(PresenceEvent)) (stop func(), err error) {
	if system == nil {
		return nil, fmt.Errorf("%w: no system bus connection", ErrNoLogind)
	}
	w := newPresenceWatch(system, log, SourceLogind, report)
	l := &logindWatch{presenceWatch: w, name: trackedName{name: logindName}}
	fail := func(err error) (func(), error) {
		w.stop()
		return nil, err
	}
	// Follow the owner before looking anything up, so no change is missed.
	if err := w.subscribe(nameOwnerMatch(logindName)...); err != nil {
		return fail(fmt.Errorf("%w: following the owner of %s: %w", ErrNoLogind, logindName, err))
	}
	session, err := l.findSession()
	if err != nil {
		return fail(err)
	}
	l.session = session
	if err := w.resolve(&l.name); err != nil {
		return fail(fmt.Errorf("%w: asking who owns %s: %w", ErrNoLogind, logindName, err))
	}
	if l.name.owner == "" {
		return fail(fmt.Errorf("%w: %s answered but has left the bus", ErrNoLogind, logindName))
	}
	err = w.subscribe(
		dbus.WithMatchSender(logindName),
		dbus.WithMatchObjectPath(logindPath),
		dbus.WithMatchInterface(logindManager),
		dbus.WithMatchMember("PrepareForSleep"))
	if err != nil {
		return fail(fmt.Errorf("subscribing to logind's PrepareForSleep: %w", err))
	}
	if session != "" {
		err = w.subscribe(
			dbus.WithMatchSender(logindName),
			dbus.WithMatchObjectPath(session),
			dbus.WithMatchInterface(propertiesInterface),
			dbus.WithMatchMember("PropertiesChanged"),
			dbus.WithMatchArg(0, logindSession))
		if err != nil {
			return fail(fmt.Errorf("subscribing to changes of logind session %s: %w", session, err))
		}
	}
	w.log.Debug("following logind", "owner", l.name.owner, "session", session)
	l.askState(l.name.owner)
	w.start(l.handle)
	return w.stop, nil
}

// presenceWatch is what both watchers share: one signal channel on the
// connection, one goroutine that handles signals and the answers of
// queries in turn (so source state needs no lock), and coalesced reports.
type presenceWatch struct {
	conn   *dbus.Conn
	log    *slog.Logger
	source string
	report func(PresenceEvent)

	signals  chan *dbus.Signal
	results  chan func() // answers of queries, applied in the loop
	ctx      context.Context
	cancel   context.CancelFunc // called by stop
	queries  sync.WaitGroup
	started  bool // the loop runs; set before the watcher is returned
	loopDone chan struct{}
	stopOnce sync.Once
	matches  [][]dbus.MatchOption // added match rules, removed by stop

	away map[string]bool // reason → what was last reported; only the loop touches it
}

func newPresenceWatch(conn *dbus.Conn, log *slog.Logger, source string, report func(PresenceEvent)) *presenceWatch {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if report == nil {
		report = func(PresenceEvent) {}
	}
	w := &presenceWatch{
		conn:     conn,
		log:      log.With("source", source),
		source:   source,
		report:   report,
		signals:  make(chan *dbus.Signal, presenceSignalBuffer),
		results:  make(chan func()),
		loopDone: make(chan struct{}),
		away:     map[string]bool{},
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	// Registered before any match rule is added, so that nothing the bus
	// sends once a rule is in place is missed.
	conn.Signal(w.signals)
	return w
}

// subscribe adds a match rule, remembering it for stop.
func (w *presenceWatch) subscribe(opts ...dbus.MatchOption) error {
	ctx, cancel := context.WithTimeout(w.ctx, presenceCallTimeout)
	defer cancel()
	if err := w.conn.AddMatchSignalContext(ctx, opts...); err != nil {
		return err
	}
	w.matches = append(w.matches, opts)
	return nil
}

// resolve asks the bus who owns n now.
func (w *presenceWatch) resolve(n *trackedName) error {
	ctx, cancel := context.WithTimeout(w.ctx, presenceCallTimeout)
	defer cancel()
	var owner string
	call := w.conn.BusObject().CallWithContext(ctx, busDaemonName+".GetNameOwner", 0, n.name)
	err := call.Store(&owner)
	if isDBusError(err, "org.freedesktop.DBus.Error.NameHasNoOwner") {
		owner, err = "", nil
	}
	if err != nil {
		return err
	}
	n.update(owner, call.ResponseSequence)
	return nil
}

// start runs the loop, handing it every signal the connection receives.
func (w *presenceWatch) start(handle func(*dbus.Signal)) {
	w.started = true
	go func() {
		defer close(w.loopDone)
		for {
			select {
			case <-w.ctx.Done():
				return
			case sig, ok := <-w.signals:
				if !ok {
					w.log.Debug("the bus connection was closed; no more presence events")
					return
				}
				if sig != nil {
					handle(sig)
				}
			case apply := <-w.results:
				apply()
			}
		}
	}()
}

// stop ends the watch: once it returns, report is not called again. It is
// safe to call more than once (and on a watcher whose setup failed).
func (w *presenceWatch) stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		w.conn.RemoveSignal(w.signals)
		if w.started {
			<-w.loopDone
		}
		w.queries.Wait()
		if !w.conn.Connected() {
			return // the bus dropped the rules with the connection
		}
		ctx, cancel := context.WithTimeout(context.Background(), presenceCallTimeout)
		defer cancel()
		for _, m := range w.matches {
			if err := w.conn.RemoveMatchSignalContext(ctx, m...); err != nil {
				w.log.Debug("could not remove a match rule", "err", err)
			}
		}
	})
}

// query runs ask on a goroutine of its own, bounded by presenceCallTimeout
// and cancelled by stop, and has the loop run the function it returns (if
// any). ask must only use what it captured, never the watcher's state; the
// returned function runs in the loop and may.
func (w *presenceWatch) query(ask func(ctx context.Context) (apply func())) {
	w.queries.Add(1)
	go func() {
		defer w.queries.Done()
		ctx, cancel := context.WithTimeout(w.ctx, presenceCallTimeout)
		apply := ask(ctx)
		cancel()
		if apply == nil {
			return
		}
		select {
		case w.results <- apply:
		case <-w.ctx.Done():
		}
	}()
}

// emit reports (reason, away) unless it was the last thing reported for
// reason. Before any report, every reason counts as "not away".
func (w *presenceWatch) emit(reason string, away bool) {
	if w.away[reason] == away {
		return
	}
	w.away[reason] = away
	w.log.Debug("presence changed", "reason", reason, "away", away)
	w.report(PresenceEvent{Reason: reason, Away: away, Source: w.source})
}

// trackedName is a well-known bus name and who owns it as far as we know.
type trackedName struct {
	name  string
	owner string        // unique name; "" when nobody owns it
	seq   dbus.Sequence // of the message we learnt owner from
}

// update records owner, learnt from the message with sequence seq, unless
// we already know something newer. It says whether the owner changed.
func (n *trackedName) update(owner string, seq dbus.Sequence) bool {
	if seq <= n.seq {
		return false
	}
	n.seq = seq
	if owner == n.owner {
		return false
	}
	n.owner = owner
	return true
}

// nameOwnerMatch selects the bus's NameOwnerChanged signals about name.
func nameOwnerMatch(name string) []dbus.MatchOption {
	return []dbus.MatchOption{
		dbus.WithMatchSender(busDaemonName),
		dbus.WithMatchObjectPath(busDaemonPath),
		dbus.WithMatchInterface(busDaemonName),
		dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, name),
	}
}

// nameOwnerChange returns the name and its new owner if sig is a
// NameOwnerChanged signal from the bus itself. Any peer can send a signal
// of that name straight to us; only the bus's counts.
func (w *presenceWatch) nameOwnerChange(sig *dbus.Signal) (name, owner string, ok bool) {
	if sig.Name != nameOwnerChangedName {
		return "", "", false
	}
	if sig.Sender != busDaemonName || sig.Path != busDaemonPath {
		w.log.Warn(logForeignSignal, "signal", sig.Name, "sender", sig.Sender, "path", sig.Path)
		return "", "", false
	}
	var old string
	if err := dbus.Store(sig.Body, &name, &old, &owner); err != nil {
		w.log.Debug(logMalformedSignal, "signal", sig.Name, "sender", sig.Sender, "err", err)
		return "", "", false
	}
	return name, owner, true
}

// oneBool returns the argument of a signal or reply whose body must be a
// single boolean.
func oneBool(body []any) (value, ok bool) {
	if len(body) != 1 {
		return false, false
	}
	value, ok = body[0].(bool)
	return value, ok
}

// boolState is a boolean some service told us, with the sequence number of
// the message it came in, so that older news never overwrites newer.
type boolState struct {
	on  bool
	seq dbus.Sequence
}

// set records v, learnt from the message with sequence seq, unless we
// already know something newer. It says whether it did.
func (s *boolState) set(v bool, seq dbus.Sequence) bool {
	if seq <= s.seq {
		return false
	}
	s.on, s.seq = v, seq
	return true
}

// screenSaverService is one screen saver interface and what its owner said.
type screenSaverService struct {
	name   trackedName
	iface  string
	paths  []dbus.ObjectPath
	active boolState
}

type screenSaverWatch struct {
	*presenceWatch
	services []*screenSaverService
}

func (s *screenSaverWatch) handle(sig *dbus.Signal) {
	if name, owner, ok := s.nameOwnerChange(sig); ok {
		for _, svc := range s.services {
			if svc.name.name != name || !svc.name.update(owner, sig.Sequence) {
				continue
			}
			s.log.Debug("the screen saver changed hands", "name", name, "owner", owner)
			svc.active.set(false, sig.Sequence)
			if owner != "" {
				s.askActive(svc)
			}
		}
		s.update()
		return
	}
	for _, svc := range s.services {
		if sig.Name != svc.iface+".ActiveChanged" || !slices.Contains(svc.paths, sig.Path) {
			continue
		}
		if sig.Sender == "" || sig.Sender != svc.name.owner {
			s.log.Warn(logForeignSignal, "signal", sig.Name, "sender", sig.Sender, "owner", svc.name.owner)
			return
		}
		active, ok := oneBool(sig.Body)
		if !ok {
			s.log.Debug(logMalformedSignal, "signal", sig.Name, "sender", sig.Sender, "body", fmt.Sprint(sig.Body))
			return
		}
		if svc.active.set(active, sig.Sequence) {
			s.update()
		}
		return
	}
}

// update reports the screen as locked while any screen saver says so.
func (s *screenSaverWatch) update() {
	s.emit(ReasonLocked, slices.ContainsFunc(s.services, func(svc *screenSaverService) bool { return svc.active.on }))
}

// askActive asks svc's current owner GetActive, on each of its paths until
// one answers.
func (s *screenSaverWatch) askActive(svc *screenSaverService) {
	conn, log := s.conn, s.log
	owner, iface, paths := svc.name.owner, svc.iface, svc.paths
	s.query(func(ctx context.Context) func() {
		for _, path := range paths {
			call := conn.Object(owner, path).CallWithContext(ctx, iface+".GetActive", dbus.FlagNoAutoStart)
			if call.Err != nil {
				log.Debug("GetActive failed", "name", iface, "path", path, "err", call.Err)
				if ctx.Err() != nil {
					return nil
				}
				continue
			}
			active, ok := oneBool(call.Body)
			if !ok {
				log.Debug("ignoring a malformed GetActive reply", "name", iface, "path", path, "body", fmt.Sprint(call.Body))
				continue
			}
			seq := call.ResponseSequence
			return func() {
				if svc.name.owner == owner && svc.active.set(active, seq) {
					s.update()
				}
			}
		}
		return nil
	})
}

type logindWatch struct {
	*presenceWatch
	name    trackedName
	session dbus.ObjectPath // our session; "" if logind knows none
	sleep   boolState
	locked  boolState
}

// findSession asks logind for this process's session. It fails with
// ErrNoLogind only when logind does not answer; "no session" is "".
func (l *logindWatch) findSession() (dbus.ObjectPath, error) {
	manager := l.conn.Object(logindName, logindPath)
	var errs []error
	for _, ask := range []struct {
		method string
		arg    any
	}{
		{"GetSessionByPID", uint32(os.Getpid())},
		{"GetSession", "auto"},
	} {
		ctx, cancel := context.WithTimeout(l.ctx, presenceCallTimeout)
		// Not FlagNoAutoStart: where logind is bus-activated, this starts it.
		call := manager.CallWithContext(ctx, logindManager+"."+ask.method, 0, ask.arg)
		cancel()
		if call.Err != nil {
			if logindUnreachable(call.Err) {
				return "", fmt.Errorf("%w: %s: %w", ErrNoLogind, ask.method, call.Err)
			}
			errs = append(errs, fmt.Errorf("%s: %w", ask.method, call.Err))
			continue
		}
		var path dbus.ObjectPath
		if err := dbus.Store(call.Body, &path); err != nil || !path.IsValid() || path == "/" {
			errs = append(errs, fmt.Errorf("%s: unexpected reply %v", ask.method, call.Body))
			continue
		}
		return path, nil
	}
	l.log.Warn("logind knows no session for this process; following suspend but not its screen lock", "err", errors.Join(errs...))
	return "", nil
}

// logindUnreachable says err means nobody answered for logind, rather than
// logind answering with an error.
func logindUnreachable(err error) bool {
	var e dbus.Error
	var pe *dbus.Error
	var name string
	switch {
	case errors.As(err, &e):
		name = e.Name
	case errors.As(err, &pe) && pe != nil:
		name = pe.Name
	default:
		return true // a timeout, a closed connection
	}
	switch name {
	case "org.freedesktop.DBus.Error.ServiceUnknown",
		"org.freedesktop.DBus.Error.NameHasNoOwner",
		"org.freedesktop.DBus.Error.NoReply",
		"org.freedesktop.DBus.Error.Timeout",
		"org.freedesktop.DBus.Error.TimedOut",
		"org.freedesktop.DBus.Error.Disconnected",
		"org.freedesktop.DBus.Error.NoServer":
		return true
	}
	return strings.HasPrefix(name, "org.freedesktop.DBus.Error.Spawn.")
}

func (l *logindWatch) handle(sig *dbus.Signal) {
	if name, owner, ok := l.nameOwnerChange(sig); ok {
		if name != logindName || !l.name.update(owner, sig.Sequence) {
			return
		}
		if owner == "" {
			l.log.Warn("logind left the system bus")
		} else {
			l.log.Info("logind is back on the system bus", "owner", owner)
		}
		// What the old logind said goes with it.
		l.sleep.set(false, sig.Sequence)
		l.locked.set(false, sig.Sequence)
		l.emit(ReasonSleep, false)
		l.emit(ReasonLocked, false)
		if owner != "" {
			l.askState(owner)
		}
		return
	}
	switch sig.Name {
	case prepareForSleep:
		if sig.Path != logindPath {
			return
		}
		if !l.fromLogind(sig) {
			return
		}
		sleeping, ok := oneBool(sig.Body)
		if !ok {
			l.log.Debug(logMalformedSignal, "signal", sig.Name, "sender", sig.Sender, "body", fmt.Sprint(sig.Body))
			return
		}
		if l.sleep.set(sleeping, sig.Sequence) {
			l.emit(ReasonSleep, sleeping)
		}
	case propertiesChanged:
		if l.session == "" || sig.Path != l.session || !l.fromLogind(sig) {
			return
		}
		var iface string
		var changedProps map[string]dbus.Variant
		var invalidated []string
		if err := dbus.Store(sig.Body, &iface, &changedProps, &invalidated); err != nil {
			l.log.Debug(logMalformedSignal, "signal", sig.Name, "sender", sig.Sender, "err", err)
			return
		}
		if iface != logindSession {
			return
		}
		if v, ok := changedProps[lockedHint]; ok {
			locked, ok := v.Value().(bool)
			if !ok {
				l.log.Debug(logMalformedSignal, "signal", sig.Name, "sender", sig.Sender, "err", "LockedHint is not a boolean", "value", v.String())
				return
			}
			if l.locked.set(locked, sig.Sequence) {
				l.emit(ReasonLocked, locked)
			}
		} else if slices.Contains(invalidated, lockedHint) {
			l.askLocked(l.name.owner)
		}
	}
}

// fromLogind says whether sig comes from logind's current owner, logging
// it if not.
func (l *logindWatch) fromLogind(sig *dbus.Signal) bool {
	if sig.Sender != "" && sig.Sender == l.name.owner {
		return true
	}
	l.log.Warn(logForeignSignal, "signal", sig.Name, "sender", sig.Sender, "owner", l.name.owner)
	return false
}

// askState reads LockedHint and PreparingForSleep from logind's owner.
func (l *logindWatch) askState(owner string) {
	l.askLocked(owner)
	l.askProperty(owner, logindPath, logindManager, preparingToSleep, &l.sleep, ReasonSleep)
}

func (l *logindWatch) askLocked(owner string) {
	if l.session != "" {
		l.askProperty(owner, l.session, logindSession, lockedHint, &l.locked, ReasonLocked)
	}
}

// askProperty reads a boolean property from logind's owner into state,
// reporting it as reason. Errors (an older logind without the property)
// are only logged.
func (l *logindWatch) askProperty(owner string, path dbus.ObjectPath, iface, prop string, state *boolState, reason string) {
	conn, log := l.conn, l.log
	l.query(func(ctx context.Context) func() {
		call := conn.Object(owner, path).CallWithContext(ctx, propertiesInterface+".Get", dbus.FlagNoAutoStart, iface, prop)
		var v dbus.Variant
		if err := call.Store(&v); err != nil {
			log.Debug("could not read a logind property", "property", prop, "path", path, "err", err)
			return nil
		}
		value, ok := v.Value().(bool)
		if !ok {
			log.Debug("ignoring a logind property that is not a boolean", "property", prop, "value", v.String())
			return nil
		}
		seq := call.ResponseSequence
		return func() {
			if l.name.owner == owner && state.set(value, seq) {
				l.emit(reason, value)
			}
		}
	})
}
