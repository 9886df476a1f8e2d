package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The nudge names the app by its desktop entry (a test XDG_DATA_HOME's),
// not by its window class, on a real notification server (dunst); its
// "Allow" button says the name too.
func TestNudgesNameTheApp(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "busctl", "dbus-send", "dbus-monitor", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	data := t.TempDir()
	entry := "[Desktop Entry]\nType=Application\nExec=true\nName=Cat Videos\nName[de]=Katzenvideos\nStartupWMClass=Distraction\n"
	if err := os.MkdirAll(filepath.Join(data, "applications"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "applications", "cats.desktop"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	bus, x := testenv.StartBus(t), testenv.StartX(t)
	testenv.StartDunst(t, bus, x)
	editor := x.XTerm(t, "Editor", "main.go - editor")
	distraction := x.XTerm(t, "Distraction", "cat videos")
	x.Activate(t, editor)
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name,
		"XDG_CONFIG_HOME="+configHome(t, driftConfig), "XDG_DATA_HOME="+data, "LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=")
	waitProp(t, d, "CurrentClass", "Editor")
	mon := testenv.StartMonitor(t, bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	startSession(t, d.Session(t), "write code", "tests pass", 600, "warn", "Editor")
	x.Activate(t, distraction)
	waitProp(t, d, "CurrentAppName", "Cat Videos")
	notify := mon.WaitFor(t, "Drifting: Cat Videos", wait)
	if !strings.Contains(notify, `"Allow Cat Videos"`) || strings.Contains(notify, "Drifting: Distraction") {
		t.Errorf("Notify: got\n%s\nwant the app's name in the summary and on Allow, not the class", notify)
	}
}
