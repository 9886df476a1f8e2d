package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The extension's hands (org.antidrift.Shell1 on GNOME Shell's own
// connection) answer only the daemon, on real GNOME Shell 48, 50 and 51: another
// client of the same user, with gdbus, is refused every method and learns
// nothing (no title), while the daemon's calls work (block minimizes a
// drifting window). The owner is asked of the bus at each call: a
// connection that owns org.antidrift is answered, and refused the moment it
// gives the name up.
func TestGnomeShellHandsAnswerOnlyTheDaemon(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeShellHandsAnswerOnlyTheDaemon)
}

func testGnomeShellHandsAnswerOnlyTheDaemon(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	g.OpenWindow(t, "org.mozilla.firefox", "Bank statement — Mozilla Firefox")
	k.startDaemon(t, gnomeConfig)
	gnomeWaitProp(t, k, "CurrentClass", "org.mozilla.firefox")
	handle := g.EvalString(t, "String(global.display.focus_window.get_id())")

	hands := func(method string, args ...string) (string, error) {
		argv := append([]string{"gdbus", "call", "--session", "--dest", "org.gnome.Shell", "--object-path", "/org/antidrift/Shell",
			"--method", "org.antidrift.Shell1." + method}, args...)
		return g.RunProgram(argv...)
	}
	for _, call := range [][]string{{"Focus"}, {"Minimize", handle}, {"Activate", handle}} {
		out, err := hands(call[0], call[1:]...)
		if err == nil || !strings.Contains(err.Error(), "org.freedesktop.DBus.Error.AccessDenied") {
			t.Errorf("%s from another client: got %q, %v; want org.freedesktop.DBus.Error.AccessDenied", call[0], out, err)
		}
		if strings.Contains(out, "Bank statement") || err != nil && strings.Contains(err.Error(), "Bank statement") {
			t.Errorf("%s from another client: got %q %v, want no window title in it", call[0], out, err)
		}
	}
	if got := g.EvalString(t, "String(global.display.focus_window?.minimized)"); got != "false" {
		t.Fatalf("the window's minimized after another client's Minimize: got %s, want false", got)
	}

	// The daemon is answered: its Minimize of a drifting window works.
	g.StartNotifications(t)
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "pay the bills", "the transfer is sent", "uint64 600", "block", "['org.mozilla.firefox']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	g.OpenWindow(t, "com.valvesoftware.Steam", "Steam")
	gnomeWaitProp(t, k, "MinimizeCount", uint32(1))

	// Trust ends with the name: without the daemon, a connection that owns
	// org.antidrift is answered, and refused once it has released it.
	k.daemon.Stop()
	conn := g.Bus.Dial(t)
	if reply, err := conn.RequestName("org.antidrift", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.antidrift: %v %v", reply, err)
	}
	shell := conn.Object("org.gnome.Shell", "/org/antidrift/Shell")
	var h, class, title string
	if err := shell.Call("org.antidrift.Shell1.Focus", 0).Store(&h, &class, &title); err != nil {
		t.Fatalf("Focus from the owner of org.antidrift: %v", err)
	}
	if class != "org.mozilla.firefox" {
		t.Errorf("Focus's class answered to the owner of org.antidrift: got %q, want %q", class, "org.mozilla.firefox")
	}
	if _, err := conn.ReleaseName("org.antidrift"); err != nil {
		t.Fatal(err)
	}
	err := shell.Call("org.antidrift.Shell1.Focus", 0).Store(&h, &class, &title)
	var dbusErr dbus.Error
	if !errors.As(err, &dbusErr) || dbusErr.Name != "org.freedesktop.DBus.Error.AccessDenied" {
		t.Fatalf("Focus right after releasing org.antidrift: got %v, want org.freedesktop.DBus.Error.AccessDenied", err)
	}
	if strings.Contains(g.Log(), "antidrift@") {
		t.Fatalf("GNOME Shell's log: got\n%s\nwant nothing about the extension", g.Log())
	}
}
