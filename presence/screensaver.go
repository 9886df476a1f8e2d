package presence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
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
func WatchScreenSaver(conn *dbus.Conn, log *slog.Logger, report func(Event)) (stop func(), err error) {
	if conn == nil {
		return nil, errors.New("watching the screen saver: no session bus connection")
	}
	w := newWatch(conn, log, SourceScreenSaver, report)
	s := &screenSaverWatch{watch: w}
	for _, def := range screenSaverServices {
		owner, err := w.follow.Follow(w.ctx, def.name)
		if err != nil {
			w.stop()
			return nil, err
		}
		s.services = append(s.services, &screenSaverService{owner: owner, iface: def.name, paths: def.paths})
		for _, path := range def.paths {
			err := w.follow.Subscribe(w.ctx,
				dbus.WithMatchSender(def.name),
				dbus.WithMatchObjectPath(path),
				dbus.WithMatchInterface(def.name),
				dbus.WithMatchMember("ActiveChanged"))
			if err != nil {
				w.stop()
				return nil, fmt.Errorf("subscribing to %s.ActiveChanged: %w", def.name, err)
			}
		}
	}
	for _, svc := range s.services {
		if svc.owner.Unique == "" {
			w.log.Debug("no screen saver owns the name yet", "name", svc.owner.Name)
			continue
		}
		s.askActive(svc)
	}
	w.start(s.handle)
	return w.stop, nil
}

// screenSaverService is one screen saver interface and what its owner said.
type screenSaverService struct {
	owner  *busname.Owner
	iface  string
	paths  []dbus.ObjectPath
	active boolState
}

type screenSaverWatch struct {
	*watch
	services []*screenSaverService
}

func (s *screenSaverWatch) handle(sig *dbus.Signal) {
	if changed, news := s.follow.OwnerChange(sig); news {
		for _, svc := range s.services {
			if svc.owner != changed {
				continue
			}
			s.log.Debug("the screen saver changed hands", "name", svc.owner.Name, "owner", svc.owner.Unique)
			svc.active.set(false, sig.Sequence)
			if svc.owner.Unique != "" {
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
		active, ok := s.ownersBool(sig, svc.owner)
		if ok && svc.active.set(active, sig.Sequence) {
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
	owner, iface, paths := svc.owner.Unique, svc.iface, svc.paths
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
				if svc.owner.Unique == owner && svc.active.set(active, seq) {
					s.update()
				}
			}
		}
		return nil
	})
}
