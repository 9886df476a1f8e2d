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

// GNOME Shell's break reminders (GNOME 48 and later): the Shell exports its
// break manager's state as org.gnome.Shell.ScreenTime on
// /org/gnome/Shell/ScreenTime, under its own name org.gnome.Shell, and sends
// PropertiesChanged for State (with LastBreakEndTime) whenever it changes
// (js/ui/shellDBus.js, ScreenTimeDBus).
const (
	screenTimeName  = "org.gnome.Shell"
	screenTimePath  = dbus.ObjectPath("/org/gnome/Shell/ScreenTime")
	screenTimeIface = "org.gnome.Shell.ScreenTime"
	screenTimeState = "State"
)

// ScreenTime states, as js/misc/breakManager.js's BreakState, which the
// Shell exports as is. The interface XML's comment lists only four values
// (and numbers them differently); the Shell's code is what is sent.
const (
	BreakDisabled uint32 = 0 // break reminders are off
	BreakActive   uint32 = 1 // the person is working, no break needed yet
	BreakIdle     uint32 = 2 // the person is idle, no break needed
	BreakInBreak  uint32 = 3 // a break is needed and the person is taking it
	BreakDue      uint32 = 4 // a break is needed but the person is still working
)

// Reasons and sources of the screen time watcher's events.
const (
	ReasonBreak      = "break"      // the person is taking the break the desktop asked for
	SourceScreenTime = "screentime" // org.gnome.Shell.ScreenTime on the session bus
)

// WatchScreenTime follows GNOME Shell's break manager on the session bus
// connection conn: the State property of org.gnome.Shell.ScreenTime on
// /org/gnome/Shell/ScreenTime, read with Get at start and from each new owner
// of org.gnome.Shell (a restarted Shell), then followed through
// PropertiesChanged; there is no polling. IN_BREAK is reported as
// {Reason "break", Source "screentime", Away: true}, any other state as back;
// due is told whether the state is BREAK_DUE. Nothing is reported while no
// break is taken or due, so where no break manager runs (another desktop, an
// older Shell without the interface, break reminders off) nothing changes.
//
// Signals are only accepted from the current owner of org.gnome.Shell and
// with State a uint32; anything else is logged and ignored. When the Shell
// leaves the bus, what it said goes with it. report and due are called from
// the watcher's own goroutine, never concurrently and never after stop
// returns; they should return quickly and must not call stop. stop behaves as
// for WatchScreenSaver.
func WatchScreenTime(conn *dbus.Conn, log *slog.Logger, report func(Event), due func(bool)) (stop func(), err error) {
	if conn == nil {
		return nil, errors.New("watching GNOME's break reminders: no session bus connection")
	}
	if due == nil {
		due = func(bool) {}
	}
	w := newWatch(conn, log, SourceScreenTime, report)
	s := &screenTimeWatch{watch: w, due: due}
	if s.owner, err = w.follow.Follow(w.ctx, screenTimeName); err != nil {
		w.stop()
		return nil, err
	}
	err = w.follow.Subscribe(w.ctx,
		dbus.WithMatchSender(screenTimeName),
		dbus.WithMatchObjectPath(screenTimePath),
		dbus.WithMatchInterface(properties),
		dbus.WithMatchMember("PropertiesChanged"),
		dbus.WithMatchArg(0, screenTimeIface))
	if err != nil {
		w.stop()
		return nil, fmt.Errorf("subscribing to changes of %s: %w", screenTimeIface, err)
	}
	if s.owner.Unique != "" {
		s.askState(s.owner.Unique)
	} else {
		w.log.Debug("no GNOME Shell on the bus yet", "name", screenTimeName)
	}
	w.start(s.handle)
	return w.stop, nil
}

type screenTimeWatch struct {
	*watch
	owner    *busname.Owner
	state    uint32
	seq      dbus.Sequence // of the message state was learnt from
	due      func(bool)
	dueShown bool // what due was last told
}

func (s *screenTimeWatch) handle(sig *dbus.Signal) {
	if changed, news := s.follow.OwnerChange(sig); news {
		if changed == nil {
			return
		}
		s.log.Debug("GNOME Shell changed hands", "owner", changed.Unique)
		// What the old Shell said goes with it.
		s.set(BreakDisabled, sig.Sequence)
		if changed.Unique != "" {
			s.askState(changed.Unique)
		}
		return
	}
	if sig.Name != propertiesChanged || sig.Path != screenTimePath || !s.fromOwner(sig, s.owner) {
		return
	}
	var iface string
	var changedProps map[string]dbus.Variant
	var invalidated []string
	if err := dbus.Store(sig.Body, &iface, &changedProps, &invalidated); err != nil {
		s.log.Debug(logMalformedSignal, "signal", sig.Name, "sender", sig.Sender, "err", err)
		return
	}
	if iface != screenTimeIface {
		return
	}
	if v, ok := changedProps[screenTimeState]; ok {
		state, ok := v.Value().(uint32)
		if !ok {
			s.log.Debug(logMalformedSignal, "signal", sig.Name, "sender", sig.Sender, "err", "State is not a uint32", "value", v.String())
			return
		}
		s.set(state, sig.Sequence)
	} else if slices.Contains(invalidated, screenTimeState) {
		s.askState(s.owner.Unique)
	}
}

// set records state, learnt from the message with sequence seq, unless
// something newer is known, and reports what changed.
func (s *screenTimeWatch) set(state uint32, seq dbus.Sequence) {
	if seq <= s.seq {
		return
	}
	s.seq = seq
	if state != s.state {
		s.log.Debug("the break manager's state changed", "state", state)
	}
	s.state = state
	s.emit(ReasonBreak, state == BreakInBreak)
	if d := state == BreakDue; d != s.dueShown {
		s.dueShown = d
		s.due(d)
	}
}

// askState reads State from the Shell owner. An error (a Shell older than
// 48, which has no such object) is only logged: nothing changes.
func (s *screenTimeWatch) askState(owner string) {
	conn, log := s.conn, s.log
	s.query(func(ctx context.Context) func() {
		call := conn.Object(owner, screenTimePath).CallWithContext(ctx, properties+".Get", dbus.FlagNoAutoStart, screenTimeIface, screenTimeState)
		var v dbus.Variant
		if err := call.Store(&v); err != nil {
			log.Debug("could not read the break manager's state; no break reminders are followed", "err", err)
			return nil
		}
		state, ok := v.Value().(uint32)
		if !ok {
			log.Debug("ignoring a break manager state that is not a uint32", "value", v.String())
			return nil
		}
		seq := call.ResponseSequence
		return func() {
			if s.owner.Unique == owner {
				s.set(state, seq)
			}
		}
	})
}
