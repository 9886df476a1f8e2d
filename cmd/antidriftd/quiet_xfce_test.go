package main

import (
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Do Not Disturb on xfce4-notifyd: its do-not-disturb setting (xfconf) is
// on while a quiet session is active, and after it is as it was: unset
// again when the person never set it, kept on when they had.
func TestQuietSessionXfceNotifyd(t *testing.T) {
	k := startDesktop(t, false, "quiet = true\nidle_after = \"1h\"\ndrift_grace = \"0s\"\n")
	bus, x := k.bus, k.x
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
	// xfce4-notifyd's popups are windows of class Xfce4-notifyd.
	popups := func() int {
		out, _ := x.Run(t, "xdotool", "search", "--onlyvisible", "--class", "xfce4-notifyd")
		return len(strings.Fields(out))
	}
	waitDND("unset")
	d := k.d
	s := d.Session(t)
	startSession(t, s, "write code", "tests pass", 3600, "warn", "Editor")
	waitDND("true")
	// Another app's notification: no popup; antidrift's nudge, sent after
	// it: a popup all the same (critical).
	if out, err := bus.Run(t, "notify-send", "-t", "0", "Chat message", "someone wrote"); err != nil {
		t.Fatalf("notify-send: %v\n%s", err, out)
	}
	x.Activate(t, k.distraction)
	waitProp(t, d, "Drift", "drifting")
	testenv.WaitUntil(t, wait, "the nudge's popup", func() bool { return popups() > 0 })
	if n := popups(); n != 1 {
		t.Fatalf("popups during the quiet session: got %d, want 1 (antidrift's nudge only)", n)
	}
	x.Activate(t, k.editor)
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
