package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Do Not Disturb on xfce4-notifyd: its do-not-disturb setting (xfconf) is
// on while a quiet session is active, and after it is as it was: unset
// again when the person never set it, kept on when they had.
func TestQuietSessionXfceNotifyd(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "busctl", "Xvfb")
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	xfce := testenv.StartXfceNotifyd(t, bus, x)
	dnd := func() string {
		out, err := bus.Run(t, "env", append(xfce.Env(), "xfconf-query", "-c", "xfce4-notifyd", "-p", "/do-not-disturb")...)
		if err != nil {
			return "unset"
		}
		return strings.TrimSpace(out)
	}
	waitDND := func(want string) {
		t.Helper()
		testenv.WaitForValue(t, wait, "xfce4-notifyd /do-not-disturb", want, dnd)
	}
	waitDND("unset")
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "XDG_CONFIG_HOME="+configHome(t, "quiet = true\nidle_after = \"1h\"\n"))
	s := d.Session(t)
	startSession(t, s, "write code", "tests pass", 3600, "warn")
	waitDND("true")
	s.Call(t, "Complete", nil)
	waitDND("unset")
	var hash string
	s.Call(t, "End", nil, &hash)

	// The person's own Do Not Disturb stays on, and antidrift says so.
	if out, err := bus.Run(t, "env", append(xfce.Env(), "xfconf-query", "-c", "xfce4-notifyd", "-p", "/do-not-disturb", "-n", "-t", "bool", "-s", "true")...); err != nil {
		t.Fatalf("xfconf-query -s true: %v\n%s", err, out)
	}
	startSession(t, s, "write more", "tests pass", 3600, "warn")
	testenv.WaitFor(t, wait, "QuietNote to say Do Not Disturb was already on", func() string { return s.String(t, "QuietNote") },
		func(n string) bool { return strings.Contains(n, "already on") })
	s.Call(t, "Complete", nil)
	testenv.WaitForProp(t, wait, s, "State", "review")
	if got := dnd(); got != "true" {
		t.Fatalf("do-not-disturb after a session that found it on: got %s, want true", got)
	}
}
