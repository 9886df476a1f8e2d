package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// startQuietDaemon starts antidriftd as the Shell's user with the Shell's
// own XDG_CONFIG_HOME (so gsettings, on the keyfile backend, writes the
// file the Shell reads) holding antidrift/config.toml.
func (k *gnomeDesktop) startQuietDaemon(t *testing.T, config string) {
	t.Helper()
	dir := filepath.Join(k.g.Home, ".config", "antidrift")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "config.toml")} {
		if err := os.Chown(p, testenv.ShellUID, testenv.ShellUID); err != nil {
			t.Fatal(err)
		}
	}
	k.restartQuietDaemon(t)
}

func (k *gnomeDesktop) restartQuietDaemon(t *testing.T) {
	t.Helper()
	k.daemon = k.g.StartProgram(t, nil, k.bin, "--state-dir", k.stateDir)
	testenv.WaitUntil(t, wait, "antidriftd to own org.antidrift (NameHasOwner true)", func() bool {
		if k.daemon.Exited() {
			t.Fatalf("antidriftd exited\n%s", k.daemon.Output())
		}
		var has bool
		err := k.g.Conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.antidrift").Store(&has)
		return err == nil && has
	})
}

// showBanners is org.gnome.desktop.notifications show-banners read back
// with gsettings as the Shell's user.
func (k *gnomeDesktop) showBanners(t *testing.T) string {
	t.Helper()
	out, err := k.g.RunProgram("gsettings", "get", "org.gnome.desktop.notifications", "show-banners")
	if err != nil {
		t.Fatalf("gsettings get: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

func (k *gnomeDesktop) waitBanners(t *testing.T, want string) {
	t.Helper()
	testenv.WaitForValue(t, wait, "show-banners", want, func() string { return k.showBanners(t) })
}

// bannersSeen installs, once, a record of every notification the Shell
// takes for a banner (into its banner queue, or shown as one), and returns
// the titles so far, joined by "|". A banner waits in the queue while
// another is shown: headless, nobody's activity ever expires one.
const bannersSeen = `(() => {
	const mt = Main.messageTray;
	if (!global._antidriftBanners) {
		const seen = global._antidriftBanners = new Set();
		const note = () => {
			for (const n of mt._notificationQueue)
				seen.add(n.title);
			if (mt._notification)
				seen.add(mt._notification.title);
		};
		mt.connect('queue-changed', note);
		const show = mt._showNotification.bind(mt);
		mt._showNotification = function () {
			const r = show();
			note();
			return r;
		};
		note();
	}
	return [...global._antidriftBanners].join('|');
})()`

// Do Not Disturb on GNOME Shell 48, 50 and 51: a quiet session turns
// show-banners off while it is active and puts it back after, exactly; another
// app's notification makes no banner while antidrift's nudge does; kill -9 of
// the daemon mid-session and a restart leave the setting as it was.
func TestGnomeQuietSession(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeQuietSession)
}

func testGnomeQuietSession(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	g.OpenWindow(t, "org.antidrift.Work", "main.go - editor")
	g.StartNotifications(t)
	k.startQuietDaemon(t, gnomeConfig+"quiet = true\n")
	k.waitBanners(t, "true")

	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write code", "tests pass", "uint64 600", "warn", "['org.antidrift.Work']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	k.waitBanners(t, "false")
	g.EvalString(t, bannersSeen) // from here on
	if !k.props().Bool(t, "Quiet") {
		t.Fatal("Quiet during the session: got false, want true")
	}

	// Another app's notification: in the tray, but no banner.
	if out, err := g.RunProgram("gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
		"--method", "org.freedesktop.Notifications.Notify", "chat", "0", "", "Chat message", "someone wrote", "[]", "{}", "5000"); err != nil {
		t.Fatalf("another app's Notify: %v\n%s", err, out)
	}
	testenv.WaitUntil(t, wait, "the other app's notification in the tray", func() bool {
		out, err := g.Eval("Main.messageTray.getSources().flatMap(s => s.notifications).some(n => n.title === 'Chat message')")
		return err == nil && out == "true"
	})
	// antidrift's nudge: a banner all the same (critical).
	g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
	seen := testenv.WaitFor(t, wait, "antidrift's nudge as a banner", func() string { return g.EvalString(t, bannersSeen) },
		func(s string) bool { return strings.Contains(s, "Drifting") })
	if strings.Contains(seen, "Chat message") {
		t.Fatalf("banners during the quiet session: got %q, want none for the other app's notification", seen)
	}

	// kill -9 of the daemon mid-session: the session is still quiet when it
	// starts again, so banners stay off, and come back after it.
	k.daemon.Kill9()
	k.restartQuietDaemon(t)
	k.waitBanners(t, "false")
	// The Shell killed mid-session changes nothing either: the setting is
	// the desktop's, and comes back with the session's end.
	g.Kill9()
	g.Start(t)
	g.StartNotifications(t) // its notification service went with it; activation would start it again
	k.waitBanners(t, "false")
	if _, err := k.gdbus(t, "org.antidrift.Session1.Complete"); err != nil {
		t.Fatalf("Complete: %v\n%s", err, k.daemon.Output())
	}
	k.waitBanners(t, "true")
	if _, err := k.gdbus(t, "org.antidrift.Session1.End"); err != nil {
		t.Fatal(err)
	}

	// Banners the person had turned off stay off, and antidrift says so.
	if out, err := g.RunProgram("gsettings", "set", "org.gnome.desktop.notifications", "show-banners", "false"); err != nil {
		t.Fatalf("gsettings set: %v\n%s", err, out)
	}
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write more", "tests pass", "uint64 600", "warn", "['org.antidrift.Work']"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "QuietNote to say banners were already off", func() string { return k.props().String(t, "QuietNote") },
		func(n string) bool { return strings.Contains(n, "already off") })
	if _, err := k.gdbus(t, "org.antidrift.Session1.Complete"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitForValue(t, wait, "State", "review", func() string { return k.props().String(t, "State") })
	if got := k.showBanners(t); got != "false" {
		t.Fatalf("show-banners after a session that found it off: got %s, want false", got)
	}
	if _, err := k.gdbus(t, "org.antidrift.Session1.End"); err != nil {
		t.Fatal(err)
	}

	// The start dialog's switch: checked as config's quiet says; unchecked,
	// the session it starts is not quiet.
	if out, err := g.RunProgram("gsettings", "set", "org.gnome.desktop.notifications", "show-banners", "true"); err != nil {
		t.Fatalf("gsettings set: %v\n%s", err, out)
	}
	dialog := indicator + "._dialog"
	mustEval(t, g, indicator+"._openStart()")
	if got := g.EvalString(t, "String("+dialog+"._quiet.buttons[0].checked)"); got != "true" {
		t.Fatalf("the dialog's Do Not Disturb with quiet = true: checked %s, want true", got)
	}
	mustEval(t, g, dialog+"._next.set_text('read mail')")
	mustEval(t, g, dialog+"._done.set_text('inbox empty')")
	mustEval(t, g, dialog+"._duration.set_text('10m')")
	mustEval(t, g, dialog+"._quiet.buttons[0].checked = false")
	mustEval(t, g, dialog+"._start()")
	testenv.WaitForValue(t, wait, "State", "active", func() string { return k.props().String(t, "State") })
	if k.props().Bool(t, "Quiet") {
		t.Fatal("Quiet after the dialog's Start with Do Not Disturb unchecked: got true, want false")
	}
	if got := k.showBanners(t); got != "true" {
		t.Fatalf("show-banners in a session started without Do Not Disturb: got %s, want true", got)
	}
}
