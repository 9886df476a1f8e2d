package main

import (
	"encoding/json"
	"fmt"
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
	testenv.WaitFor(t, wait, appID+" to have focus in sway", func() *swayNode { return s.window(t, appID) },
		func(w *swayNode) bool { return w != nil && w.Focused })
}

func (s *swayDesktop) focus(t *testing.T, appID string) {
	t.Helper()
	s.sway.Msg(t, "[app_id="+appID+"]", "focus")
	s.waitFocused(t, appID)
}

// swayScreen is what a person sees of the two windows after a block.
type swayScreen struct{ distractionHidden, editorFocused bool }

func (w swayScreen) String() string {
	return fmt.Sprintf("distraction hidden %v, editor focused %v", w.distractionHidden, w.editorFocused)
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
	api := s.d.Session(t)
	if got := api.String(t, "EvidenceSource"); got != "wlroots" {
		t.Fatalf("EvidenceSource on sway with evidence = auto: got %q, want %q\n%s", got, "wlroots", s.d.Output())
	}
	waitProp(t, s.d, "CurrentClass", "Editor")
	waitProp(t, s.d, "CurrentTitle", "main.go - editor")

	// A forged report is refused: wlroots evidence comes from the compositor itself.
	err := forgeFocus(t, s.bus, "1", "Steam", "a game")
	checkRefusedAccess(t, "a forged ReportFocus on sway", err)
	if _, msg := testenv.Refused(t, err); !strings.Contains(msg, "evidence source is wlroots") {
		t.Fatalf("a forged ReportFocus on sway: got %q, want a refusal saying the evidence source is wlroots", msg)
	}

	nudges := testenv.StartMonitor(t, s.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	startSession(t, api, "write code", "tests pass", 600, "block", "Editor")
	s.focus(t, "Distraction")
	nudges.WaitFor(t, "Drifting: Distraction", wait)
	waitProp(t, s.d, "MinimizeCount", uint32(1))
	testenv.WaitFor(t, wait, "the distraction to leave the screen and the editor to have focus", func() swayScreen {
		d, e := s.window(t, "Distraction"), s.window(t, "Editor")
		return swayScreen{distractionHidden: d != nil && !d.Visible, editorFocused: e != nil && e.Focused}
	}, func(w swayScreen) bool { return w.distractionHidden && w.editorFocused })
	waitProp(t, s.d, "CurrentClass", "Editor")

	// Idle after 2 s without input is away; a key press (wtype) ends it.
	waitProp(t, s.d, "Drift", "away")
	if out, err := s.sway.Run("wtype", "x"); err != nil {
		t.Fatalf("wtype: %v\n%s", err, out)
	}
	testenv.WaitFor(t, wait, "input to end the away time (Drift other than away)", func() string { return api.String(t, "Drift") },
		func(drift string) bool { return drift != "away" })

	// sway gone: a reason; sway back: evidence again.
	s.sway.Kill()
	waitProp(t, s.d, "EvidenceAvailable", false)
	if reason := api.String(t, "EvidenceReason"); !strings.Contains(reason, "Wayland compositor") {
		t.Errorf("EvidenceReason with sway gone: got %q, want it to name the Wayland compositor", reason)
	}
	s.sway.Restart(t)
	s.sway.Foot(t, "Editor", "after the restart")
	waitProp(t, s.d, "CurrentTitle", "after the restart")
	for _, line := range strings.Split(s.d.Output(), "\n") {
		if strings.Contains(line, "main.go - editor") || strings.Contains(line, "cat videos") {
			t.Errorf("the daemon's log: got %q, want no window titles", line)
		}
	}
}
