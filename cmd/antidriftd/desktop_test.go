package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
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
	testenv.Need(t, "dbus-daemon", "busctl", "dbus-send", "dbus-monitor", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	k := &desktop{bus: testenv.StartBus(t), x: testenv.StartX(t)}
	if withDunst {
		k.dunst = testenv.StartDunst(t, k.bus, k.x)
	}
	k.editor = k.x.XTerm(t, "Editor", "main.go - editor")
	k.distraction = k.x.XTerm(t, "Distraction", "cat videos")
	k.x.Activate(t, k.editor)
	k.d = testenv.StartDaemon(t, k.bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+k.x.Name, "XDG_CONFIG_HOME="+configHome(t, configTOML))
	testenv.WaitUntil(t, wait, "antidriftd to see the Editor window", func() bool {
		return mustProp(t, k.d, "CurrentClass") == `s "Editor"`
	})
	return k
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

func (k *desktop) prop(t *testing.T, name string) string { return mustProp(t, k.d, name) }

func (k *desktop) waitProp(t *testing.T, name, want string) {
	t.Helper()
	testenv.WaitForValue(t, wait, name, busctlText(want), func() busctlText { return busctlText(k.prop(t, name)) })
}

// busctlText is a property as busctl get-property prints it (s "away"): a
// failure shows it as printed, not quoted again.
type busctlText string

func (b busctlText) String() string { return string(b) }

func TestWindowSwitchesAreAccounted(t *testing.T) {
	k := startDesktop(t, false, "")
	mon := testenv.StartMonitor(t, k.bus, "type='signal',member='PropertiesChanged',path='/org/antidrift/Session1'")
	if got := k.prop(t, "CurrentTitle"); got != `s "main.go - editor"` {
		t.Fatalf("CurrentTitle outside a session: %s", got)
	}
	id := unquote(t, call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "observe", "1", "Editor"))
	k.x.Activate(t, k.distraction)
	mon.WaitFor(t, `"Distraction"`, wait)
	k.x.Activate(t, k.editor)
	k.waitProp(t, "SwitchCount", "u 2")
	k.x.SetTitle(t, k.editor, "other.go - editor")
	k.waitProp(t, "CurrentTitle", `s "other.go - editor"`)
	buckets := k.prop(t, "Buckets")
	for _, want := range []string{`"Editor" "main.go - editor"`, `"Distraction" "cat videos"`} {
		if !strings.Contains(buckets, want) {
			t.Errorf("Buckets lacks %s: %s", want, buckets)
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
		t.Fatalf("raw log %q\nwant     %q", got, want)
	}

	call(t, k.d, "Complete")
	call(t, k.d, "End")
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
		t.Fatalf("sealed summary %s", data)
	}
}

const driftConfig = `drift_grace = "1s"
nudge_repeat = "10m"
break_glass_hold = "2s"
`

func TestBlockIconifiesDistractionAndAllowFromTheNotification(t *testing.T) {
	k := startDesktop(t, true, driftConfig)
	mon := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "block", "1", "Editor")
	k.x.Activate(t, k.distraction)

	testenv.WaitUntil(t, wait, "the Distraction window to be iconified", func() bool { return k.x.WMState(t, k.distraction) == "Iconic" })
	testenv.WaitUntil(t, wait, "the Editor to be active again", func() bool { return k.x.ActiveWindow(t) == k.editor })
	k.waitProp(t, "MinimizeCount", "u 1")
	notify := mon.WaitFor(t, "Drifting: Distraction", wait)
	for _, want := range []string{`"antidrift"`, `"refocus"`, `"Back to work"`, `"allow"`, `"Allow Distraction"`, `"desktop-entry"`} {
		if !strings.Contains(notify, want) {
			t.Errorf("Notify lacks %s:\n%s", want, notify)
		}
	}
	if strings.Contains(notify, "cat videos") {
		t.Fatal("the notification carries the window title")
	}

	// Choose "Allow Distraction" in dunst's menu: the class is allowed and
	// the window no longer counts as drift.
	k.dunst.ChooseNext("Allow Distraction")
	k.dunst.OpenMenu(t)
	k.waitProp(t, "AllowedClasses", `as 2 "Editor" "Distraction"`)
	k.x.Activate(t, k.distraction)
	k.waitProp(t, "CurrentClass", `s "Distraction"`)
	if got := k.prop(t, "Drift"); got != `s "on_task"` {
		t.Fatalf("Drift on an allowed class: %s", got)
	}
}

func TestWarnNudgesAndObserveStaysQuiet(t *testing.T) {
	for _, level := range []string{"warn", "observe"} {
		t.Run(level, func(t *testing.T) {
			k := startDesktop(t, true, driftConfig)
			mon := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
			call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", level, "1", "Editor")
			k.x.Activate(t, k.distraction)
			k.waitProp(t, "Drift", `s "drifting"`)
			if level == "warn" {
				mon.WaitFor(t, "Drifting: Distraction", wait)
			} else if strings.Contains(mon.Output(), "Drifting") {
				t.Fatal("observe sent a notification")
			}
			if got := k.x.WMState(t, k.distraction); got != "Normal" {
				t.Fatalf("%s iconified the window: %s", level, got)
			}
			if got := k.prop(t, "MinimizeCount"); got != "u 0" {
				t.Fatalf("MinimizeCount %s", got)
			}
		})
	}
}

func TestLockedRefusesWayOutsUntilBreakGlassHoldElapses(t *testing.T) {
	k := startDesktop(t, false, driftConfig)
	call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "locked", "1", "Editor")
	for _, c := range [][]string{{"Abandon", "s", "bored"}, {"Allow", "s", "Distraction"}, {"SetEnforcement", "s", "warn"}} {
		out, err := k.bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift", "--object-path", "/org/antidrift/Session1",
			"--method", "org.antidrift.Session1."+c[0], "'"+c[2]+"'")
		if err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.NotPermitted") {
			t.Fatalf("%s at locked: %s %v", c[0], out, err)
		}
	}
	if out := call(t, k.d, "BreakGlass", "s", "family emergency"); out != "t 2" {
		t.Fatalf("BreakGlass: %s", out)
	}
	testenv.WaitUntil(t, wait, "Abandon to be permitted after the 2 s hold", func() bool {
		_, err := k.d.Busctl(t, "call", "Abandon", "s", "emergency")
		return err == nil
	})
	call(t, k.d, "End")
	data, err := os.ReadFile(filepath.Join(k.d.StateDir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"outcome":"abandoned"`) || !strings.Contains(string(data), `"break_glass":true`) {
		t.Fatalf("summary %s", data)
	}
}

func TestNotificationServerComingAndGoing(t *testing.T) {
	k := startDesktop(t, true, driftConfig)
	mon := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "warn", "1", "Editor")
	k.dunst.Kill()
	k.x.Activate(t, k.distraction)
	k.waitProp(t, "Drift", `s "drifting"`)
	k.x.Activate(t, k.editor)
	k.waitProp(t, "Drift", `s "on_task"`)
	if k.d.ExitCode() != -1 {
		t.Fatalf("the daemon died without a notification server\n%s", k.d.Output())
	}
	k.dunst.Restart(t)
	k.x.Activate(t, k.distraction)
	mon.WaitFor(t, "Drifting: Distraction", wait)
	testenv.WaitUntil(t, wait, "dunst to display the resumed nudge", func() bool {
		out, err := k.bus.Run(t, "dunstctl", "count", "displayed")
		return err == nil && strings.TrimSpace(out) != "0"
	})
}
