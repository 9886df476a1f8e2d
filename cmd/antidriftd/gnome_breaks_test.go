package main

import (
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// breakWait bounds a wait for GNOME's break manager: the break below is due
// 20 s after reminders are turned on, and lasts 30 s.
const breakWait = 120 * time.Second

// GNOME's own break reminders on the real GNOME Shell (48, 50, 51), headless,
// not a stand-in: movement breaks every 20 s lasting 30 s
// (org.gnome.desktop.break-reminders, set with gsettings). Nobody touches
// the keyboard or the pointer, so the Shell finds the person idle when the
// break is due and counts it as taken: ScreenTime's State goes to IN_BREAK.
// The daemon then reads Drift "break" (never drift, not enforced), the
// indicator says "Break", and when GNOME leaves IN_BREAK drift is judged
// again.
func TestGnomeBreakReminderIsABreak(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeBreakReminderIsABreak)
}

func testGnomeBreakReminderIsABreak(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
	k.startDaemon(t, gnomeConfig) // idle_after 1h: only the break makes us away
	gnomeWaitProp(t, k, "CurrentClass", "org.antidrift.Drift")
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write code", "tests pass", "uint64 600", "warn", "['org.antidrift.Work']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	gnomeWaitProp(t, k, "Drift", "drifting")

	screenTime := g.Conn.Object("org.gnome.Shell", "/org/gnome/Shell/ScreenTime")
	state := func() uint32 {
		v, err := screenTime.GetProperty("org.gnome.Shell.ScreenTime.State")
		if err != nil {
			t.Fatalf("reading the Shell's ScreenTime State: %v", err)
		}
		s, _ := v.Value().(uint32)
		return s
	}
	if got := state(); got != testenv.ScreenTimeDisabled {
		t.Fatalf("ScreenTime State before break reminders are on: got %d, want %d (DISABLED)", got, testenv.ScreenTimeDisabled)
	}
	for _, set := range [][]string{
		{"org.gnome.desktop.break-reminders.movement", "interval-seconds", "20"},
		{"org.gnome.desktop.break-reminders.movement", "duration-seconds", "30"},
		{"org.gnome.desktop.break-reminders", "selected-breaks", "['movement']"},
	} {
		if out, err := g.RunProgram(append([]string{"gsettings", "set"}, set...)...); err != nil {
			t.Fatalf("gsettings set %v: %v\n%s", set, err, out)
		}
	}
	testenv.WaitForValue(t, breakWait, "the Shell's ScreenTime State", testenv.ScreenTimeInBreak, state)
	gnomeWaitProp(t, k, "Drift", "break")
	if reason := k.props().String(t, "DriftReason"); !strings.HasPrefix(reason, "the desktop asked for a break") {
		t.Fatalf("DriftReason during GNOME's break: got %q, want it to start %q", reason, "the desktop asked for a break")
	}
	if k.props().Bool(t, "Enforced") {
		t.Fatal("Enforced during GNOME's break: got true, want false")
	}
	testenv.WaitFor(t, wait, `the indicator's drift line to say "Break"`, func() string {
		return g.EvalString(t, indicator+"._drift.label.text")
	}, func(text string) bool { return strings.HasPrefix(text, "Break — ") })

	// Input during the break (or the break's end, on a slow machine): GNOME
	// leaves IN_BREAK, and drift is judged again at once.
	resetIdle(t, g)
	testenv.WaitFor(t, breakWait, "the Shell's ScreenTime State to leave IN_BREAK", state, func(s uint32) bool { return s != testenv.ScreenTimeInBreak })
	gnomeWaitProp(t, k, "Drift", "drifting")
	// Whether GNOME counts the break as taken depends on how long the Shell
	// had been idle before it; either way the daemon follows.
	if s := state(); s == testenv.ScreenTimeBreakDue {
		t.Log("after input: GNOME says the break is still due")
		gnomeWaitProp(t, k, "BreakDue", true)
	} else {
		t.Logf("after input: GNOME's State is %d", s)
		gnomeWaitProp(t, k, "BreakDue", false)
	}
}

// GNOME's break reminders on the real GNOME Shell, with a person at work
// when the break comes due: Mutter's idle time is reset every 2 s (as
// input would), so the Shell never finds the person idle for its 10 s
// minimum break and, once the 20 s movement interval is up, says
// BREAK_DUE (4) — which the Shell's interface XML does not list. The
// daemon shows it (BreakDue, the DriftReason's note) and still judges
// drift; when the person then leaves the keyboard, GNOME counts the break
// (IN_BREAK) and the daemon says "break", the break no longer due.
func TestGnomeBreakDue(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeBreakDue)
}

func testGnomeBreakDue(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
	k.startDaemon(t, gnomeConfig)
	gnomeWaitProp(t, k, "CurrentClass", "org.antidrift.Drift")
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write code", "tests pass", "uint64 600", "warn", "['org.antidrift.Work']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	gnomeWaitProp(t, k, "Drift", "drifting")

	// The person at work: input every 2 s, until the break is due.
	resetIdle(t, g)
	idle := g.Conn.Object("org.gnome.Mutter.IdleMonitor", dbus.ObjectPath("/org/gnome/Mutter/IdleMonitor/Core"))
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				idle.Call("org.gnome.Mutter.IdleMonitor.ResetIdletime", 0)
			}
		}
	}()
	atWork := true
	leave := func() {
		if atWork {
			close(stop)
			<-stopped
			atWork = false
		}
	}
	defer leave()

	screenTime := g.Conn.Object("org.gnome.Shell", "/org/gnome/Shell/ScreenTime")
	state := func() uint32 {
		v, err := screenTime.GetProperty("org.gnome.Shell.ScreenTime.State")
		if err != nil {
			t.Fatalf("reading the Shell's ScreenTime State: %v", err)
		}
		s, _ := v.Value().(uint32)
		return s
	}
	for _, set := range [][]string{
		{"org.gnome.desktop.break-reminders.movement", "interval-seconds", "20"},
		{"org.gnome.desktop.break-reminders.movement", "duration-seconds", "30"},
		{"org.gnome.desktop.break-reminders", "selected-breaks", "['movement']"},
	} {
		if out, err := g.RunProgram(append([]string{"gsettings", "set"}, set...)...); err != nil {
			t.Fatalf("gsettings set %v: %v\n%s", set, err, out)
		}
	}
	testenv.WaitForValue(t, breakWait, "the Shell's ScreenTime State (at work when the break comes due)", testenv.ScreenTimeBreakDue, state)
	gnomeWaitProp(t, k, "BreakDue", true)
	if drift := k.props().String(t, "Drift"); drift != "drifting" {
		t.Fatalf("Drift with a break due (not taken): got %q, want %q", drift, "drifting")
	}
	if reason := k.props().String(t, "DriftReason"); !strings.HasSuffix(reason, "the desktop says a break is due") {
		t.Fatalf("DriftReason with a break due: got %q, want it to end %q", reason, "the desktop says a break is due")
	}

	// The person leaves the keyboard: GNOME counts the break.
	leave()
	testenv.WaitForValue(t, breakWait, "the Shell's ScreenTime State (idle with a break due)", testenv.ScreenTimeInBreak, state)
	gnomeWaitProp(t, k, "Drift", "break")
	gnomeWaitProp(t, k, "BreakDue", false)
}

// resetIdle ends the session's idleness as input would (Mutter's
// ResetIdletime, which MUTTER_DEBUG_RESET_IDLETIME enables).
func resetIdle(t *testing.T, g *testenv.GnomeShell) {
	t.Helper()
	err := g.Conn.Object("org.gnome.Mutter.IdleMonitor", dbus.ObjectPath("/org/gnome/Mutter/IdleMonitor/Core")).
		Call("org.gnome.Mutter.IdleMonitor.ResetIdletime", 0).Err
	if err != nil {
		t.Fatalf("ResetIdletime: %v", err)
	}
}
