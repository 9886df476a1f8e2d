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
	s := k.d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "warn", "Editor")
	waitProp(t, k.d, "Drift", "away") // no input for 2 s
	if got, want := s.String(t, "DriftReason"), "away: no input for 2s"; got != want {
		t.Fatalf("DriftReason: got %q, want %q", got, want)
	}
	k.x.Run(t, "xdotool", "mousemove", "100", "200")
	waitProp(t, k.d, "Drift", "on_task")
	k.x.Run(t, "xdotool", "mousemove", "300", "400")
	testenv.WaitFor(t, wait, `Buckets to hold time away ("" "(away)")`, func() []bucketProp { return buckets(t, k.d) },
		func(got []bucketProp) bool { return hasBucket(got, "", "(away)") })
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
	s := k.d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "warn", "Editor")
	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "Drift", "drifting")
	saver.lock(t, true)
	waitProp(t, k.d, "Drift", "away")
	if got, want := s.String(t, "DriftReason"), "away: the screen is locked"; got != want {
		t.Fatalf("DriftReason: got %q, want %q", got, want)
	}
	saver.lock(t, false)
	waitProp(t, k.d, "Drift", "drifting") // back on the distraction: judged again at once
}

// A planted title of a private class is found nowhere: not in any file
// under the state directory, not in the daemon's log, not in any property
// or signal it emitted.
func TestPrivateTitleIsRecordedNowhere(t *testing.T) {
	const secret = "PLANTED-SECRET-TITLE-7f3a"
	k := startDesktop(t, false, "private_classes = [\"Secretive\"]\nredact_titles = ['\\d{4}-\\d{4}']\n")
	mon := testenv.StartMonitor(t, k.bus, "sender='org.antidrift'")
	vault := k.x.XTerm(t, "Secretive", secret)
	s := k.d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "block", "Editor")
	k.x.Activate(t, vault)
	waitProp(t, k.d, "CurrentClass", "Secretive")
	k.x.SetTitle(t, k.editor, "card 1234-5678 - editor")
	k.x.Activate(t, k.editor)
	waitProp(t, k.d, "CurrentTitle", "card … - editor") // redacted
	completeAndEnd(t, s)
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
		t.Fatalf("a private or redacted title was recorded: got it in %v, want it nowhere", places)
	}
	if !strings.Contains(mon.Output(), "Secretive") {
		t.Fatal("the bus monitor: got nothing of the private window, want its class Secretive seen (else the check proves nothing)")
	}
}
