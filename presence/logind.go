package presence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
)

// logind's names, paths and members.
const (
	logindName       = "org.freedesktop.login1"
	logindPath       = dbus.ObjectPath("/org/freedesktop/login1")
	logindManager    = "org.freedesktop.login1.Manager"
	logindSession    = "org.freedesktop.login1.Session"
	prepareForSleep  = logindManager + ".PrepareForSleep"
	lockedHint       = "LockedHint"
	preparingToSleep = "PreparingForSleep"
)

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
func WatchLogind(system *dbus.Conn, log *slog.Logger, report func(Event)) (stop func(), err error) {
	if system == nil {
		return nil, fmt.Errorf("%w: no system bus connection", ErrNoLogind)
	}
	w := newWatch(system, log, SourceLogind, report)
	l := &logindWatch{watch: w}
	fail := func(err error) (func(), error) {
		w.stop()
		return nil, err
	}
	session, err := l.findSession()
	if err != nil {
		return fail(err)
	}
	l.session = session
	// Asked after findSession, which may have started logind.
	if l.owner, err = w.follow.Follow(w.ctx, logindName); err != nil {
		return fail(fmt.Errorf("%w: %w", ErrNoLogind, err))
	}
	if l.owner.Unique == "" {
		return fail(fmt.Errorf("%w: %s answered but has left the bus", ErrNoLogind, logindName))
	}
	err = w.follow.Subscribe(w.ctx,
		dbus.WithMatchSender(logindName),
		dbus.WithMatchObjectPath(logindPath),
		dbus.WithMatchInterface(logindManager),
		dbus.WithMatchMember("PrepareForSleep"))
	if err != nil {
		return fail(fmt.Errorf("subscribing to logind's PrepareForSleep: %w", err))
	}
	if session != "" {
		err = w.follow.Subscribe(w.ctx,
			dbus.WithMatchSender(logindName),
			dbus.WithMatchObjectPath(session),
			dbus.WithMatchInterface(properties),
			dbus.WithMatchMember("PropertiesChanged"),
			dbus.WithMatchArg(0, logindSession))
		if err != nil {
			return fail(fmt.Errorf("subscribing to changes of logind session %s: %w", session, err))
		}
	}
	w.log.Debug("following logind", "owner", l.owner.Unique, "session", session)
	l.askState(l.owner.Unique)
	w.start(l.handle)
	return w.stop, nil
}

type logindWatch struct {
	*watch
	owner   *busname.Owner
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
		ctx, cancel := context.WithTimeout(l.ctx, busname.CallTimeout)
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
	if changed, news := l.follow.OwnerChange(sig); news {
		if changed == nil {
			return
		}
		owner := changed.Unique
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
		sleeping, ok := l.ownersBool(sig, l.owner)
		if ok && l.sleep.set(sleeping, sig.Sequence) {
			l.emit(ReasonSleep, sleeping)
		}
	case propertiesChanged:
		if l.session == "" || sig.Path != l.session || !l.fromOwner(sig, l.owner) {
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
			l.askLocked(l.owner.Unique)
		}
	}
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
		call := conn.Object(owner, path).CallWithContext(ctx, properties+".Get", dbus.FlagNoAutoStart, iface, prop)
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
			if l.owner.Unique == owner && state.set(value, seq) {
				l.emit(reason, value)
			}
		}
	})
}
