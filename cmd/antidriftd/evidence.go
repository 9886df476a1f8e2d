package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/gnomeshell"
	"github.com/antidrift/antidrift/kwin"
	"github.com/antidrift/antidrift/service"
	"github.com/antidrift/antidrift/wayland"
	"github.com/antidrift/antidrift/x11"
)

// source is where the daemon's eyes, hands and idle come from: one of the
// values of the evidence key, built by its adapter package. The core sees
// only what it reports and the Guard port.
type source struct {
	name string // the EvidenceSource property: x11, wlroots, kwin, gnome-shell, none
	why  string // how it was chosen, for the start-up log line

	// sensor reports the focused window until ctx is done; nil means there
	// is none and unavailable says why.
	sensor      func(ctx context.Context, report func(service.Window))
	unavailable string
	// idle reports idleness at idle_after; nil when the source has none.
	idle  func(ctx context.Context, report func(idle bool))
	guard service.Guard // nil: nothing is enforced
	// pushedBy is the bus name whose owner reports focus over
	// org.antidrift.Evidence1 (the KWin script, the GNOME Shell extension),
	// and push where those reports go; "" for sources that watch themselves.
	pushedBy string
	push     func(handle, app, title string)
	close    func()
}

// Compositor bus names that identify a Wayland desktop's source.
const (
	kwinBusName  = kwin.BusName
	shellBusName = "org.gnome.Shell"
)

// chooseSource resolves the evidence key. "auto" prefers the compositor's
// own interface in a Wayland session — foreign-toplevel where it is offered
// (wlroots compositors), else KWin or GNOME Shell by their bus names — then
// X11 where only DISPLAY is set. A Wayland session whose compositor offers
// none of them gets "none" with a reason: XWayland alone would see only
// the few X11 windows and call a native browser "no window".
func chooseSource(want, display, wayland string, conn *dbus.Conn) (name, why string) {
	if want != "auto" {
		return want, "set by the evidence key"
	}
	if wayland != "" {
		if ok, err := offersForeignToplevel(wayland); ok {
			return "wlroots", "WAYLAND_DISPLAY is set and the compositor offers zwlr_foreign_toplevel_manager_v1"
		} else if err != nil {
			why = fmt.Sprintf("could not ask the Wayland compositor for its interfaces (%v)", err)
		}
		for _, c := range []struct{ bus, name string }{{kwinBusName, "kwin"}, {shellBusName, "gnome-shell"}} {
			if hasOwner(conn, c.bus) {
				return c.name, "WAYLAND_DISPLAY is set and " + c.bus + " is on the session bus"
			}
		}
		if why == "" {
			why = "the Wayland compositor offers no zwlr_foreign_toplevel_manager_v1, and neither KWin nor GNOME Shell is on the session bus"
		}
		return "none", why
	}
	if display != "" {
		return "x11", "only DISPLAY is set"
	}
	return "none", "neither WAYLAND_DISPLAY nor DISPLAY is set"
}

// hasOwner says whether name has an owner on the bus now.
func hasOwner(conn *dbus.Conn, name string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var has bool
	err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has)
	return err == nil && has
}

// openSource chooses the source the evidence key asks for and builds it.
func (m *Main) openSource(want string, idleAfter time.Duration) source {
	name, why := chooseSource(want, m.Display, m.Wayland, m.conn)
	s := source{name: name, why: why, close: func() {}}
	switch name {
	case "wlroots":
		// One connection to the compositor: the guard acts on the
		// sensor's handles (object ids of that connection), so it acts
		// only while the sensor runs.
		sensor := wayland.NewSensor(m.Wayland, m.log)
		guard := wayland.NewGuard(sensor, m.log)
		s.sensor, s.guard = sensor.Run, guard
		s.idle = wayland.NewIdleWatcher(m.Wayland, idleAfter, m.log).Run
		s.close = func() { guard.Close() }
	case "x11":
		if m.Display == "" {
			s.unavailable = "the evidence key says x11, but DISPLAY is not set"
			break
		}
		sensor := x11.NewSensor(m.Display, m.log)
		guard := x11.NewGuard(m.Display, m.log)
		idle := x11.NewIdleWatcher(m.Display, idleAfter, m.log)
		s.sensor, s.idle, s.guard = sensor.Run, idle.Run, guard
		s.close = func() { guard.Close() }
	case "kwin":
		// The script KWin runs for us reports focus over Evidence1; the
		// sensor loads it (again, after KWin restarts) and unloads it at
		// stop. Idle comes from ext_idle_notifier_v1, which KWin offers.
		runtimeDir := os.Getenv("XDG_RUNTIME_DIR")
		sensor := kwin.NewSensor(m.conn, runtimeDir, m.log)
		s.sensor, s.push, s.pushedBy = sensor.Run, sensor.Push, kwinBusName
		s.idle = wayland.NewIdleWatcher(m.Wayland, idleAfter, m.log).Run
		if guard, err := kwin.NewGuard(m.conn, runtimeDir, m.log); err != nil {
			m.log.Warn("nothing is enforced on KWin", "err", err)
		} else {
			s.guard = guard
			s.close = func() { guard.Close() }
		}
	case "gnome-shell":
		// The extension pushes focus over org.antidrift.Evidence1 on the
		// Shell's own connection; the hands and idleness are the Shell's.
		sensor := gnomeshell.NewSensor(m.conn, m.log)
		s.sensor, s.guard = sensor.Run, gnomeshell.NewGuard(m.conn)
		s.idle = gnomeshell.NewIdleWatcher(m.conn, idleAfter, m.log).Run
		s.push, s.pushedBy = sensor.Push, shellBusName
	default: // "none": config allows no other value
		s.unavailable = "no window evidence: " + why
	}
	return s
}

// offersForeignToplevel asks the Wayland compositor whether it offers
// zwlr_foreign_toplevel_manager_v1 (the wlroots family does), bounded: a
// compositor that accepts the connection and never answers must not hold
// the daemon's start.
func offersForeignToplevel(display string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	g, err := wayland.Probe(ctx, display)
	return g.ForeignToplevel, err
}
