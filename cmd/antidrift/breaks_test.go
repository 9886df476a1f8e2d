package main

import (
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// GNOME's break reminders, end to end through the daemon and the CLI,
// against a stand-in for GNOME Shell's org.gnome.Shell.ScreenTime on the
// daemon's bus (not the real Shell): a break the desktop asked for reads
// "break" in status, a due break is shown, and after the break drift is
// judged again.
func TestStatusSaysBreakDuringTheDesktopsBreak(t *testing.T) {
	s := startDaemon(t, "")
	shell := testenv.StartStandInScreenTime(t, s.d.Bus, testenv.ScreenTimeActive)
	s.ok(t, "start", "write the intro", "--done-when", "intro is committed", "--for", "25m")
	s.waitForStatus(t, "no break yet", map[string]any{"drift": "unknown", "break_due": false})

	// Another client says a break began, straight to the daemon: it is not
	// the Shell, the daemon says so in its log and nothing changes.
	forger := s.d.Bus.Dial(t)
	var daemon string
	if err := forger.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, "org.antidrift").Store(&daemon); err != nil {
		t.Fatal(err)
	}
	testenv.SendSignalTo(t, forger, daemon, "/org/gnome/Shell/ScreenTime", "org.freedesktop.DBus.Properties.PropertiesChanged",
		"org.gnome.Shell.ScreenTime", map[string]dbus.Variant{"State": dbus.MakeVariant(testenv.ScreenTimeInBreak)}, []string{})
	testenv.WaitUntil(t, wait, "the daemon to log the forged break as not the Shell's", func() bool {
		out := s.d.Output()
		return strings.Contains(out, busname.LogForeignSignal) && strings.Contains(out, forger.Names()[0])
	})
	s.waitForStatus(t, "no break after a forged one", map[string]any{"drift": "unknown"})

	shell.Set(testenv.ScreenTimeBreakDue)
	s.waitForStatus(t, "a break is due", map[string]any{"break_due": true})
	contains(t, "status while a break is due", s.ok(t, "status"), "the desktop says a break is due")

	shell.Set(testenv.ScreenTimeInBreak)
	s.waitForStatus(t, "in the desktop's break", map[string]any{"drift": "break", "break_due": false})
	text := s.ok(t, "status")
	contains(t, "status during the break", text, "drift        break: the desktop asked for a break;")
	contains(t, "status --format polybar during the break", s.ok(t, "status", "--format", "polybar"), "break")

	shell.Set(testenv.ScreenTimeActive)
	s.waitForStatus(t, "back from the break", map[string]any{"drift": "unknown", "break_due": false})
}
