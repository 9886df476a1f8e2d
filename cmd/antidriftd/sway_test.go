package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// swayDesktop is sway 1.10 headless with two native Wayland windows (foot)
// and antidriftd beside it, with the environment a sway session's user
// manager has (Debian's sway imports WAYLAND_DISPLAY and SWAYSOCK).
type swayDesktop struct {
	sway *testenv.Sway
	bus  *testenv.Bus
	d    *testenv.Daemon
}

func startSwayDesktop(t *testing.T, rel testenv.Release, configTOML string) *swayDesktop {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "busctl", "gdbus", "dbus-monitor", "dunst", "Xvfb")
	s := &swayDesktop{sway: testenv.StartSwayRelease(t, rel)}
	s.sway.Foot(t, "Distraction", "cat videos")
	s.waitFocused(t, "Distraction")
	s.sway.Foot(t, "Editor", "main.go - editor")
	s.waitFocused(t, "Editor")
	bus := testenv.StartBus(t)
	s.bus = bus
	// The notification server: dunst, which draws on an X display of its own.
	testenv.StartDunst(t, bus, testenv.StartX(t))
	s.d = testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"),
		append(s.sway.Env(), "XDG_CONFIG_HOME="+configHome(t, configTOML))...)
	return s
}

// swayNode is what swaymsg -t get_tree says of a window.
type swayNode struct {
	AppID   string     `json:"app_id"`
	Focused bool       `json:"focused"`
	Visible bool       `json:"visible"`
	Name    string     `json:"name"`
	Nodes   []swayNode `json:"nodes"`
	Float   []swayNode `json:"floating_nodes"`
}

// window finds the window with appID in sway's tree (nil when gone).
func (s *swayDesktop) window(t *testing.T, appID string) *swayNode {
	t.Helper()
	return s.find(t, func(n *swayNode) bool { return n.AppID == appID })
}

// find is the first node of sway's tree that is, or nil.
func (s *swayDesktop) find(t *testing.T, is func(*swayNode) bool) *swayNode {
	t.Helper()
	var root swayNode
	if err := json.Unmarshal([]byte(s.sway.Msg(t, "-t", "get_tree")), &root); err != nil {
		t.Fatal(err)
	}
	var find func(n *swayNode) *swayNode
	find = func(n *swayNode) *swayNode {
		if is(n) {
			return n
		}
		for _, list := range [][]swayNode{n.Nodes, n.Float} {
			for i := range list {
				if w := find(&list[i]); w != nil {
					return w
				}
			}
		}
		return nil
	}
	return find(&root)
}

func (s *swayDesktop) waitFocused(t *testing.T, appID string) {
	t.Helper()
	testenv.WaitUntil(t, wait, appID+" to have focus in sway", func() bool {
		w := s.window(t, appID)
		return w != nil && w.Focused
	})
}

func (s *swayDesktop) focus(t *testing.T, appID string) {
	t.Helper()
	s.sway.Msg(t, "[app_id="+appID+"]", "focus")
	s.waitFocused(t, appID)
}

func (s *swayDesktop) waitProp(t *testing.T, name, want string) {
	t.Helper()
	testenv.WaitForValue(t, wait, name, busctlText(want), func() busctlText { return busctlText(mustProp(t, s.d, name)) })
}

// On sway, auto chooses wlroots; native windows' focus and titles reach the
// session; drift is nudged, and at block the drifting window leaves the screen (sway's
// scratchpad) and the editor gets focus back; idle is away and input ends
// it; sway killed is a reason and sway restarted is evidence again; a
// focus report over the bus is refused, since the compositor speaks for
// itself here.
func TestSwayEndToEnd(t *testing.T) {
	testenv.EachRelease(t, testenv.SwayReleases, testSwayEndToEnd)
}

func testSwayEndToEnd(t *testing.T, rel testenv.Release) {
	s := startSwayDesktop(t, rel, "drift_grace = \"1s\"\nnudge_repeat = \"10m\"\nidle_after = \"2s\"\n")
	if got := mustProp(t, s.d, "EvidenceSource"); got != `s "wlroots"` {
		t.Fatalf("EvidenceSource on sway with evidence = auto: %s\n%s", got, s.d.Output())
	}
	s.waitProp(t, "CurrentClass", `s "Editor"`)
	s.waitProp(t, "CurrentTitle", `s "main.go - editor"`)

	// A forged report is refused: wlroots evidence comes from the compositor itself.
	_, err := s.d.Bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift", "--object-path", "/org/antidrift/Session1",
		"--method", "org.antidrift.Evidence1.ReportFocus", "1", "Steam", "a game")
	if err == nil || !strings.Contains(err.Error(), "org.freedesktop.DBus.Error.AccessDenied") || !strings.Contains(err.Error(), "evidence source is wlroots") {
		t.Fatalf("forged ReportFocus on sway: %v", err)
	}

	nudges := testenv.StartMonitor(t, s.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	call(t, s.d, "Start", "sstsas", "write code", "tests pass", "600", "block", "1", "Editor")
	s.focus(t, "Distraction")
	nudges.WaitFor(t, "Drifting: Distraction", wait)
	s.waitProp(t, "MinimizeCount", "u 1")
	testenv.WaitUntil(t, wait, "the distraction to leave the screen and the editor to have focus", func() bool {
		d, e := s.window(t, "Distraction"), s.window(t, "Editor")
		return d != nil && !d.Visible && e != nil && e.Focused
	})
	s.waitProp(t, "CurrentClass", `s "Editor"`)

	// Idle after 2 s without input is away; a key press (wtype) ends it.
	s.waitProp(t, "Drift", `s "away"`)
	if out, err := s.sway.Run("wtype", "x"); err != nil {
		t.Fatalf("wtype: %v\n%s", err, out)
	}
	testenv.WaitUntil(t, wait, "input to end the away time", func() bool { return mustProp(t, s.d, "Drift") != `s "away"` })

	// sway gone: a reason; sway back: evidence again.
	s.sway.Kill()
	s.waitProp(t, "EvidenceAvailable", "b false")
	if reason := mustProp(t, s.d, "EvidenceReason"); !strings.Contains(reason, "Wayland compositor") {
		t.Errorf("EvidenceReason with sway gone: %s", reason)
	}
	s.sway.Restart(t)
	s.sway.Foot(t, "Editor", "after the restart")
	s.waitProp(t, "CurrentTitle", `s "after the restart"`)
	for _, line := range strings.Split(s.d.Output(), "\n") {
		if strings.Contains(line, "main.go - editor") || strings.Contains(line, "cat videos") {
			t.Errorf("a window title reached the log: %s", line)
		}
	}
}
