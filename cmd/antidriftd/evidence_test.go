package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// evidence = "auto" picks by what the session has: a compositor's own
// interface in a Wayland session, X11 where only DISPLAY is set, and none
// (saying why) otherwise. An explicit key wins.
func TestAutoChoosesTheCompositorsOwnInterface(t *testing.T) {
	bus := testenv.StartBus(t)
	conn, err := dbus.Connect(bus.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	noCompositor := filepath.Join(t.TempDir(), "wayland-0") // nothing listens here

	check := func(what, want, display, wayland, wantName, wantWhy string) {
		t.Helper()
		name, why := chooseSource(want, display, wayland, conn)
		if name != wantName || !strings.Contains(why, wantWhy) {
			t.Errorf("%s: chose %q (%s), want %q (%s)", what, name, why, wantName, wantWhy)
		}
	}
	check("X11 only", "auto", ":7", "", "x11", "only DISPLAY is set")
	check("no display", "auto", "", "", "none", "neither WAYLAND_DISPLAY nor DISPLAY is set")
	check("set by the key", "gnome-shell", ":7", "", "gnome-shell", "set by the evidence key")
	check("unreachable Wayland compositor", "auto", ":7", noCompositor, "none", "could not ask the Wayland compositor for its interfaces")

	for _, c := range []struct{ bus, source string }{{kwinBusName, "kwin"}, {shellBusName, "gnome-shell"}} {
		compositor, err := dbus.Connect(bus.Address)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := compositor.RequestName(c.bus, dbus.NameFlagDoNotQueue); err != nil {
			t.Fatal(err)
		}
		check(c.bus, "auto", ":7", noCompositor, c.source, c.bus+" is on the session bus")
		check(c.bus+" without WAYLAND_DISPLAY", "auto", ":7", "", "x11", "only DISPLAY is set")
		// Released with a reply, so the next check cannot still see it.
		if _, err := compositor.ReleaseName(c.bus); err != nil {
			t.Fatal(err)
		}
		compositor.Close()
	}
}
