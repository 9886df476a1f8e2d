package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// desktop is a private bus, an X server with openbox, two xterms and, when
// asked, dunst, with antidriftd watching the display.
type desktop struct {
	bus         *testenv.Bus
	x           *testenv.Display
	dunst       *testenv.Dunst
	d           *testenv.Daemon
	editor      uint32
	distraction uint32
}

func startDesktop(t *testing.T, withDunst bool, configTOML string) *desktop {
	t.Helper()
	var dunst func(testing.TB, *testenv.Bus, *testenv.Display) *testenv.Dunst
	if withDunst {
		dunst = testenv.StartDunst
	}
	return startDesktopWith(t, dunst, configTOML)
}

// startDesktopWith is startDesktop with the dunst startDunst starts
// (testenv.StartDunst, testenv.StartRootfsDunst), or none if nil.
func startDesktopWith(t *testing.T, startDunst func(testing.TB, *testenv.Bus, *testenv.Display) *testenv.Dunst, configTOML string) *desktop {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "busctl", "dbus-send", "dbus-monitor", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	k := &desktop{bus: testenv.StartBus(t), x: testenv.StartX(t)}
	if startDunst != nil {
		k.dunst = startDunst(t, k.bus, k.x)
	}
	k.editor = k.x.XTerm(t, "Editor", "main.go - editor")
	k.distraction = k.x.XTerm(t, "Distraction", "cat videos")
	k.x.Activate(t, k.editor)
	k.d = testenv.StartDaemon(t, k.bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+k.x.Name, "XDG_CONFIG_HOME="+configHome(t, configTOML))
	waitProp(t, k.d, "CurrentClass", "Editor") // antidriftd sees the Editor window
	return k
}

// waitWMState waits until window id's WM_STATE reads want (Iconic, Normal).
func (k *desktop) waitWMState(t *testing.T, id uint32, want string) {
	t.Helper()
	testenv.WaitForValue(t, wait, fmt.Sprintf("WM_STATE of window %#x", id), want, func() string { return k.x.WMState(t, id) })
}

// configHome is an XDG_CONFIG_HOME whose antidrift/config.toml is configTOML.
func configHome(t *testing.T, configTOML string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "antidrift"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "antidrift", "config.toml"), []byte(configTOML), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestWindowSwitchesAreAccounted(t *testing.T) {
	k := startDesktop(t, false, "")
	mon := testenv.StartMonitor(t, k.bus, "type='signal',member='PropertiesChanged',path='/org/antidrift/Session1'")
	s := k.d.Session(t)
	if got, want := s.String(t, "CurrentTitle"), "main.go - editor"; got != want {
		t.Fatalf("CurrentTitle outside a session: got %q, want %q", got, want)
	}
	id := startSession(t, s, "write code", "tests pass", 600, "observe", "Editor")
	k.x.Activate(t, k.distraction)
	mon.WaitFor(t, `"Distraction"`, wait)
	k.x.Activate(t, k.editor)
	waitProp(t, k.d, "SwitchCount", uint32(2))
	k.x.SetTitle(t, k.editor, "other.go - editor")
	waitProp(t, k.d, "CurrentTitle", "other.go - editor")
	got := buckets(t, k.d)
	for _, want := range []bucketProp{{Class: "Editor", Title: "main.go - editor"}, {Class: "Distraction", Title: "cat videos"}} {
		if !hasBucket(got, want.Class, want.Title) {
			t.Errorf("Buckets: got %v, want one of %s %q", got, want.Class, want.Title)
		}
	}

	// The raw log has every switch, in order, with full titles (and the
	// moments of no focus the window manager passes through in between).
	var classes []string
	f, err := os.Open(filepath.Join(k.d.StateDir, "sessions", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var e struct {
			Class, Title string
			Available    bool
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Available {
			classes = append(classes, e.Class+"/"+e.Title)
		}
	}
	f.Close()
	want := "Editor/main.go - editor Distraction/cat videos Editor/main.go - editor Editor/other.go - editor"
	if got := strings.Join(classes, " "); got != want {
		t.Fatalf("raw log: got  %q\n          want %q", got, want)
	}

	completeAndEnd(t, s)
	data, err := os.ReadFile(filepath.Join(k.d.StateDir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var entry struct {
		SwitchCount int `json:"switch_count"`
		Buckets     []struct{ Class string }
	}
	if err := json.Unmarshal(data, &entry); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, b := range entry.Buckets {
		names[b.Class] = true
	}
	if !names["Editor"] || !names["Distraction"] || entry.SwitchCount != 3 {
		t.Fatalf("sealed summary: got %s, want buckets of Editor and Distraction and switch_count 3", data)
	}
}

const driftConfig = `drift_grace = "1s"
nudge_repeat = "10m"
break_glass_hold = "2s"
`

func TestBlockIconifiesDistractionAndAllowFromTheNotification(t *testing.T) {
	k := startDesktop(t, true, driftConfig)
	mon := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	s := k.d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "block", "Editor")
	k.x.Activate(t, k.distraction)

	k.waitWMState(t, k.distraction, "Iconic")
	testenv.WaitForValue(t, wait, "the active window (the Editor's is "+fmt.Sprint(k.editor)+")", k.editor, func() uint32 { return k.x.ActiveWindow(t) })
	waitProp(t, k.d, "MinimizeCount", uint32(1))
	notify := mon.WaitFor(t, "Drifting: Distraction", wait)
	for _, want := range []string{`"antidrift"`, `"refocus"`, `"Back to work"`, `"allow"`, `"Allow Distraction"`, `"desktop-entry"`} {
		if !strings.Contains(notify, want) {
			t.Errorf("Notify: got\n%s\nwant it to carry %s", notify, want)
		}
	}
	if strings.Contains(notify, "cat videos") {
		t.Fatalf("Notify: got\n%s\nwant it without the window title %q", notify, "cat videos")
	}

	// Choose "Allow Distraction" in dunst's menu: the class is allowed and
	// the window no longer counts as drift.
	k.dunst.ChooseNext("Allow Distraction")
	k.dunst.OpenMenu(t)
	testenv.WaitFor(t, wait, `AllowedClasses to be ["Editor" "Distraction"]`, func() []string { return s.Strings(t, "AllowedClasses") },
		func(got []string) bool { return slices.Equal(got, []string{"Editor", "Distraction"}) })
	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "CurrentClass", "Distraction")
	if got := s.String(t, "Drift"); got != "on_task" {
		t.Fatalf("Drift on an allowed class: got %q, want %q", got, "on_task")
	}
}

func TestWarnNudgesAndObserveStaysQuiet(t *testing.T) {
	for _, level := range []string{"warn", "observe"} {
		t.Run(level, func(t *testing.T) {
			k := startDesktop(t, true, driftConfig)
			mon := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
			s := k.d.Session(t)
			startSession(t, s, "write code", "tests pass", 600, level, "Editor")
			k.x.Activate(t, k.distraction)
			waitProp(t, k.d, "Drift", "drifting")
			if level == "warn" {
				mon.WaitFor(t, "Drifting: Distraction", wait)
			} else if strings.Contains(mon.Output(), "Drifting") {
				t.Fatalf("observe: got a notification, want none:\n%s", mon.Output())
			}
			if got := k.x.WMState(t, k.distraction); got != "Normal" {
				t.Fatalf("%s: the window's WM_STATE: got %s, want Normal", level, got)
			}
			if got := s.Uint32(t, "MinimizeCount"); got != 0 {
				t.Fatalf("MinimizeCount: got %d, want 0", got)
			}
		})
	}
}

func TestLockedRefusesWayOutsUntilBreakGlassHoldElapses(t *testing.T) {
	k := startDesktop(t, false, driftConfig)
	s := k.d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "locked", "Editor")
	for _, c := range [][]string{{"Abandon", "bored"}, {"Allow", "Distraction"}, {"SetEnforcement", "warn"}} {
		err := s.Try(c[0], testenv.Args(c[1]))
		if err == nil {
			t.Fatalf("%s at locked: got success, want org.antidrift.Error.NotPermitted", c[0])
		}
		if name, msg := testenv.Refused(t, err); name != "org.antidrift.Error.NotPermitted" {
			t.Fatalf("%s at locked: got %s %q, want org.antidrift.Error.NotPermitted", c[0], name, msg)
		}
	}
	var hold uint64
	s.Call(t, "BreakGlass", testenv.Args("family emergency"), &hold)
	if hold != 2 {
		t.Fatalf("BreakGlass's wait: got %d s, want 2 s", hold)
	}
	testenv.WaitFor(t, wait, "Abandon to be permitted after the 2 s hold", func() error { return s.Try("Abandon", testenv.Args("emergency")) },
		func(err error) bool { return err == nil })
	var hash string
	s.Call(t, "End", nil, &hash)
	data, err := os.ReadFile(filepath.Join(k.d.StateDir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"outcome":"abandoned"`) || !strings.Contains(string(data), `"break_glass":true`) {
		t.Fatalf("sealed summary: got %s, want outcome abandoned with break_glass", data)
	}
}

func TestNotificationServerComingAndGoing(t *testing.T) {
	k := startDesktop(t, true, driftConfig)
	mon := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	startSession(t, k.d.Session(t), "write code", "tests pass", 600, "warn", "Editor")
	k.dunst.Kill()
	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "Drift", "drifting")
	k.x.Activate(t, k.editor)
	waitProp(t, k.d, "Drift", "on_task")
	if code := k.d.ExitCode(); code != -1 {
		t.Fatalf("the daemon without a notification server: got exit code %d, want it running\n%s", code, k.d.Output())
	}
	k.dunst.Restart(t)
	k.x.Activate(t, k.distraction)
	mon.WaitFor(t, "Drifting: Distraction", wait)
	testenv.WaitFor(t, wait, "dunst to display the resumed nudge (dunstctl count displayed above 0)", func() string {
		out, err := k.bus.Run(t, "dunstctl", "count", "displayed")
		if err != nil {
			return err.Error()
		}
		return strings.TrimSpace(out)
	}, func(n string) bool { n2, err := strconv.Atoi(n); return err == nil && n2 > 0 })
}
