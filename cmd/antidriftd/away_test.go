package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

func TestIdleIsAwayAndInputBringsYouBack(t *testing.T) {
	k := startDesktop(t, false, "idle_after = \"2s\"\n")
	call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "warn", "1", "Editor")
	k.waitProp(t, "Drift", `s "away"`) // no input for 2 s
	if got := k.prop(t, "DriftReason"); got != `s "away: no input for 2s"` {
		t.Fatalf("DriftReason %s", got)
	}
	k.x.Run(t, "xdotool", "mousemove", "100", "200")
	k.waitProp(t, "Drift", `s "on_task"`)
	k.x.Run(t, "xdotool", "mousemove", "300", "400")
	testenv.WaitUntil(t, wait, "time away to show in the buckets", func() bool {
		return strings.Contains(k.prop(t, "Buckets"), `"" "(away)"`)
	})
}

// fakeScreenSaver owns org.freedesktop.ScreenSaver on the bus, as a
// desktop's screen locker does, and says when the screen locks.
type fakeScreenSaver struct{ conn *dbus.Conn }

func (f *fakeScreenSaver) GetActive() (bool, *dbus.Error) { return false, nil }

func startScreenSaver(t *testing.T, bus *testenv.Bus) *fakeScreenSaver {
	t.Helper()
	conn, err := dbus.Connect(bus.Address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeScreenSaver{conn: conn}
	if err := conn.Export(f, "/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.freedesktop.ScreenSaver", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.freedesktop.ScreenSaver: %v %v", reply, err)
	}
	return f
}

func (f *fakeScreenSaver) lock(t *testing.T, active bool) {
	t.Helper()
	if err := f.conn.Emit("/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", active); err != nil {
		t.Fatal(err)
	}
}

func TestScreenLockPausesDrift(t *testing.T) {
	k := startDesktop(t, false, driftConfig)
	saver := startScreenSaver(t, k.bus)
	k.d.Stop(t) // restart so the daemon finds the screensaver at start
	k.d.Start(t)
	call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "warn", "1", "Editor")
	k.x.Activate(t, k.distraction)
	k.waitProp(t, "Drift", `s "drifting"`)
	saver.lock(t, true)
	k.waitProp(t, "Drift", `s "away"`)
	if got := k.prop(t, "DriftReason"); got != `s "away: the screen is locked"` {
		t.Fatalf("DriftReason %s", got)
	}
	saver.lock(t, false)
	k.waitProp(t, "Drift", `s "drifting"`) // back on the distraction: judged again at once
}

// A planted title of a private class is found nowhere: not in any file
// under the state directory, not in the daemon's log, not in any property
// or signal it emitted.
func TestPrivateTitleIsRecordedNowhere(t *testing.T) {
	const secret = "PLANTED-SECRET-TITLE-7f3a"
	k := startDesktop(t, false, "private_classes = [\"Secretive\"]\nredact_titles = ['\\d{4}-\\d{4}']\n")
	mon := testenv.StartMonitor(t, k.bus, "sender='org.antidrift'")
	vault := k.x.XTerm(t, "Secretive", secret)
	call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "block", "1", "Editor")
	k.x.Activate(t, vault)
	k.waitProp(t, "CurrentClass", `s "Secretive"`)
	k.x.SetTitle(t, k.editor, "card 1234-5678 - editor")
	k.x.Activate(t, k.editor)
	testenv.WaitUntil(t, wait, "the redacted title", func() bool {
		return gdbusProp(t, k.d, "CurrentTitle") == "(<'card … - editor'>,)"
	})
	call(t, k.d, "Complete")
	call(t, k.d, "End")
	k.d.Stop(t)

	var places []string
	filepath.Walk(k.d.StateDir, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) || strings.Contains(string(b), "1234-5678") {
				places = append(places, path)
			}
		}
		return nil
	})
	for name, text := range map[string]string{"the daemon's log": k.d.Output(), "the bus": mon.Output()} {
		if strings.Contains(text, secret) || strings.Contains(text, "1234-5678") {
			places = append(places, name)
		}
	}
	if len(places) > 0 {
		t.Fatalf("a private or redacted title was recorded in %v", places)
	}
	if !strings.Contains(mon.Output(), "Secretive") {
		t.Fatal("the monitor saw nothing of the private window at all: the check proves nothing")
	}
}
