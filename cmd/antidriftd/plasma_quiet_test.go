package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Do Not Disturb on KDE Plasma 6.3 and 6.7: Plasma's notification server
// (its notifications applet) on a real KWin; a quiet session inhibits notifications
// (Inhibited reads true) while it is active, releases the inhibition after
// it, and kill -9 of the daemon releases it too (Plasma drops the
// inhibitions of a caller that left the bus).
func TestPlasmaQuietSession(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaQuietSession)
}

func testPlasmaQuietSession(t *testing.T, rel testenv.Release) {
	r := testenv.NeedKWinRootfs(t, rel)
	testenv.Need(t, "dbus-daemon", "busctl")
	bus := testenv.StartBus(t)
	k := testenv.StartKWin(t, r, bus)
	home := r.TempDir(t)
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_RUNTIME_DIR=" + k.RuntimeDir, "DBUS_SESSION_BUS_ADDRESS=" + bus.Address, "WAYLAND_DISPLAY=" + k.Socket,
		"QT_QPA_PLATFORM=wayland", "QT_QUICK_BACKEND=software", "XDG_CURRENT_DESKTOP=KDE", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}
	// Plasma's notification server is its notifications applet's
	// (libnotificationmanager): plasmawindowed runs it as plasmashell's
	// system tray would, without a desktop shell package.
	startServer := func() *testenv.Process {
		t.Helper()
		shell := r.Start(t, home, 0, env, "plasmawindowed", "org.kde.plasma.notifications")
		testenv.WaitUntil(t, 2*time.Minute, "Plasma's notifications applet to own org.freedesktop.Notifications", func() bool {
			if shell.Exited() {
				t.Fatalf("plasmawindowed exited\n%s", shell.Output())
			}
			return bus.OwnerPID(t, testenv.NotificationsName) != 0
		})
		return shell
	}
	shell := startServer()
	conn := bus.Dial(t)
	inhibited := func() bool {
		v, err := conn.Object(testenv.NotificationsName, "/org/freedesktop/Notifications").GetProperty("org.freedesktop.Notifications.Inhibited")
		if err != nil {
			t.Fatalf("reading Inhibited: %v", err)
		}
		b, _ := v.Value().(bool)
		return b
	}
	waitInhibited := func(want bool) {
		t.Helper()
		testenv.WaitForValue(t, wait, "org.freedesktop.Notifications Inhibited", want, inhibited)
	}
	waitInhibited(false)

	distraction := k.Window(t, distractionApp, "cat videos")
	editor := k.Window(t, editorApp, "main.go - editor")
	k.Activate(t, editor)
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "WAYLAND_DISPLAY="+k.Socket, "XDG_RUNTIME_DIR="+k.RuntimeDir,
		"XDG_CONFIG_HOME="+configHome(t, "quiet = true\nidle_after = \"1h\"\ndrift_grace = \"0s\"\n"))
	s := d.Session(t)
	waitProp(t, d, "CurrentClass", editorApp)
	startSession(t, s, "write code", "tests pass", 3600, "warn", editorApp)
	waitInhibited(true)
	// Another app's notification: held back, no popup.
	if out, err := bus.Run(t, "gdbus", "call", "--session", "--dest", testenv.NotificationsName, "--object-path", "/org/freedesktop/Notifications",
		"--method", "org.freedesktop.Notifications.Notify", "chat", "0", "", "Chat message", "someone wrote", "[]", "{}", "0"); err != nil {
		t.Fatalf("another app's Notify: %v\n%s", err, out)
	}
	// antidrift's nudge: critical, so Plasma pops it up all the same.
	k.Activate(t, distraction)
	waitProp(t, d, "Drift", "drifting")
	// A popup is a window of plasmawindowed's besides the applet's own
	// ("Notifications"). The other app's came first, so it would be there
	// by the time the nudge's is.
	popups := func() int {
		n := 0
		for _, w := range k.Windows(t) {
			if w.AppID == "org.kde.plasmawindowed" && w.Title != "Notifications" {
				n++
			}
		}
		return n
	}
	testenv.WaitUntil(t, wait, "the nudge's popup among KWin's windows", func() bool { return popups() > 0 })
	if n := popups(); n != 1 {
		t.Fatalf("popups during the quiet session: got %d, want 1 (antidrift's nudge only)\n%+v", n, k.Windows(t))
	}
	if note := s.String(t, "QuietNote"); note != "" {
		t.Fatalf("QuietNote on Plasma: got %q, want none", note)
	}
	// Plasma's notification server killed and started again mid-session:
	// the new one is inhibited again.
	shell.Kill9()
	testenv.WaitUntil(t, wait, "org.freedesktop.Notifications to be gone", func() bool { return bus.OwnerPID(t, testenv.NotificationsName) == 0 })
	shell = startServer()
	waitInhibited(true)
	s.Call(t, "Complete", nil)
	waitInhibited(false)
	var hash string
	s.Call(t, "End", nil, &hash)

	startSession(t, s, "write more", "tests pass", 3600, "warn")
	waitInhibited(true)
	d.Kill9(t)
	waitInhibited(false)
	// The next daemon recovers the quiet session and inhibits again.
	d.Start(t)
	waitInhibited(true)
}
