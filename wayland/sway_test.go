package wayland

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// waitTimeout is how long a test waits for an expected snapshot or state. It
// is generous on purpose: it only matters when something is broken.
const waitTimeout = 30 * time.Second

// watched is a sensor running until the test ends, with what it reported.
type watched struct {
	mu   sync.Mutex
	seen []service.Window
	s    *Sensor
}

// watch runs a sensor on sway's display until the test ends.
func watch(t *testing.T, sw *testenv.Sway) *watched {
	return watchDisplay(t, sw.Display, sw.RuntimeDir)
}

// watchDisplay runs a sensor on a compositor's display (a socket in
// runtimeDir) until the test ends.
func watchDisplay(t *testing.T, display, runtimeDir string) *watched {
	s := NewSensor(display, testenv.Logger())
	s.runtimeDir = runtimeDir
	return runSensor(t, s)
}

func runSensor(t *testing.T, s *Sensor) *watched {
	w := &watched{s: s}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx, func(win service.Window) {
			w.mu.Lock()
			w.seen = append(w.seen, win)
			w.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Error("Run did not return after cancel")
		}
	})
	return w
}

// last is the latest report (zero before the first).
func (w *watched) last() service.Window {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) == 0 {
		return service.Window{}
	}
	return w.seen[len(w.seen)-1]
}

// count is how many reports there were so far.
func (w *watched) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

// since is the reports after the first n.
func (w *watched) since(n int) []service.Window {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]service.Window(nil), w.seen[n:]...)
}

// waitFor waits until the latest report satisfies ok, and returns it.
func (w *watched) waitFor(t *testing.T, what string, ok func(service.Window) bool) service.Window {
	t.Helper()
	return testenv.WaitForWindow(t, waitTimeout, what, w.last, ok)
}

func (w *watched) waitClass(t *testing.T, class, title string) service.Window {
	t.Helper()
	return w.waitFor(t, "focus on "+class+" "+title, func(win service.Window) bool {
		return win.Available && win.Class == class && win.Title == title
	})
}

// Focus and title changes of native Wayland windows are reported with the
// app_id as the class, and a handle that stays the same for a window.
func TestSwayReportsFocusAndTitles(t *testing.T) {
	testenv.EachRelease(t, testenv.SwayReleases, testSwayReportsFocusAndTitles)
}

func testSwayReportsFocusAndTitles(t *testing.T, rel testenv.Release) {
	sw := testenv.StartSwayRelease(t, rel)
	w := watch(t, sw)
	w.waitFor(t, "no focus on an empty desktop", func(win service.Window) bool {
		return !win.Available && win.Reason == service.ReasonNoFocus
	})

	editorTitle := sw.Foot(t, "Editor", "notes.txt")
	editor := w.waitClass(t, "Editor", "notes.txt")
	sw.Foot(t, "Browser", "news")
	browser := w.waitClass(t, "Browser", "news")
	if editor.ID == browser.ID || editor.ID == "" {
		t.Fatalf("handles: got editor %q, browser %q, want two different ones", editor.ID, browser.ID)
	}
	if browser.Instance != "" {
		t.Errorf("the browser's Instance: got %q, want empty (Wayland has only the app_id)", browser.Instance)
	}

	// Focus moving from one window to another is one report: never the
	// moment in between when sway has taken it from one and not yet
	// given it to the other.
	from := w.count()
	sw.Msg(t, "[app_id=Editor] focus")
	if again := w.waitClass(t, "Editor", "notes.txt"); again.ID != editor.ID {
		t.Errorf("the editor's handle when it has focus again: got %q, want %q as before", again.ID, editor.ID)
	}
	if between := w.since(from); len(between) != 1 {
		t.Errorf("a focus change was reported as %+v, want the editor alone", between)
	}
	editorTitle("draft.txt")
	w.waitClass(t, "Editor", "draft.txt")

	// An empty workspace: nothing has focus.
	sw.Msg(t, "workspace 2")
	w.waitFor(t, "no focus on an empty workspace", func(win service.Window) bool {
		return !win.Available && win.Reason == service.ReasonNoFocus
	})
	sw.Msg(t, "workspace 1")
	w.waitFor(t, "focus back on workspace 1", func(win service.Window) bool { return win.Available })
}

// swayView is how sway's own tree shows a window.
type swayView struct {
	Type       string `json:"type"` // con (tiled) or floating_con
	Focused    bool   `json:"focused"`
	Visible    bool   `json:"visible"`
	Scratchpad string `json:"scratchpad_state"` // none, or fresh/changed once in the scratchpad
}

// view finds the window with appID in sway's tree, as swaymsg prints it.
func view(t *testing.T, sw *testenv.Sway, appID string) swayView {
	t.Helper()
	type node struct {
		swayView
		AppID    string `json:"app_id"`
		Nodes    []node `json:"nodes"`
		Floating []node `json:"floating_nodes"`
	}
	var root node
	if err := json.Unmarshal([]byte(sw.Msg(t, "-t", "get_tree")), &root); err != nil {
		t.Fatal(err)
	}
	stack := []node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], append(n.Nodes, n.Floating...)...)
		if n.AppID == appID {
			return n.swayView
		}
	}
	t.Fatalf("sway's tree: got no window %s, want one", appID)
	return swayView{}
}

// withGuard is a sensor and its guard on sway, with sway's IPC as the
// guard's fallback, as NewGuard finds it from SWAYSOCK.
func withGuard(t *testing.T, sw *testenv.Sway) (*watched, *Guard) {
	w := watch(t, sw)
	g := NewGuard(w.s, testenv.Logger())
	g.hider = swayIPC{path: sw.SwaySock}
	t.Cleanup(func() { g.Close() })
	return w, g
}

func guardCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// sway ignores set_minimized; the guard hides the focused window in the
// scratchpad instead, and activating it puts it back in the layout with
// focus. A window that no longer has focus is left alone.
func TestSwayGuardHidesAndRestores(t *testing.T) {
	testenv.EachRelease(t, testenv.SwayReleases, testSwayGuardHidesAndRestores)
}

func testSwayGuardHidesAndRestores(t *testing.T, rel testenv.Release) {
	sw := testenv.StartSwayRelease(t, rel)
	w, g := withGuard(t, sw)
	sw.Foot(t, "Editor", "notes.txt")
	editor := w.waitClass(t, "Editor", "notes.txt")
	sw.Foot(t, "Browser", "news")
	browser := w.waitClass(t, "Browser", "news")
	testenv.WaitUntil(t, waitTimeout, "the guard to be available", g.Available)

	if err := g.MinimizeWindow(guardCtx(t), browser.ID); err != nil {
		t.Fatalf("MinimizeWindow(focused browser): %v", err)
	}
	if v := view(t, sw, "Browser"); v.Visible || v.Scratchpad == "none" {
		t.Fatalf("the browser after MinimizeWindow: got %+v, want hidden in the scratchpad", v)
	}
	w.waitClass(t, "Editor", "notes.txt")

	if err := g.ActivateWindow(guardCtx(t), browser.ID); err != nil {
		t.Fatalf("ActivateWindow(hidden browser): %v", err)
	}
	if v := view(t, sw, "Browser"); !v.Visible || !v.Focused || v.Type != "con" || v.Scratchpad != "none" {
		t.Fatalf("the browser after ActivateWindow: got %+v, want tiled, visible and focused as before", v)
	}
	w.waitClass(t, "Browser", "news")

	// The person moves on to the editor before the guard acts on the
	// browser: the browser stays.
	if err := g.ActivateWindow(guardCtx(t), editor.ID); err != nil {
		t.Fatalf("ActivateWindow(editor): %v", err)
	}
	w.waitClass(t, "Editor", "notes.txt")
	if v := view(t, sw, "Editor"); !v.Focused {
		t.Fatalf("the editor after ActivateWindow(editor): got %+v, want it focused", v)
	}
	if err := g.MinimizeWindow(guardCtx(t), browser.ID); !errors.Is(err, service.ErrNotActive) {
		t.Fatalf("MinimizeWindow(unfocused browser) = %v, want ErrNotActive", err)
	}
	if v := view(t, sw, "Browser"); !v.Visible || v.Scratchpad != "none" {
		t.Fatalf("the unfocused browser after MinimizeWindow: got %+v, want it untouched (visible, in no scratchpad)", v)
	}

	// Handles that are not this connection's are refused.
	for _, h := range []string{"0x1234", "wl:0:" + strings.TrimPrefix(browser.ID, "wl:1:")} {
		if err := g.MinimizeWindow(guardCtx(t), h); err == nil {
			t.Errorf("MinimizeWindow(%q): got nil, want a refusal of a handle not this connection's", h)
		}
	}
}

// A watcher on sway says idle once nothing happened for the threshold, and
// active again on the first key.
func TestSwayIdleAndResume(t *testing.T) {
	testenv.EachRelease(t, testenv.SwayReleases, testSwayIdleAndResume)
}

func testSwayIdleAndResume(t *testing.T, rel testenv.Release) {
	sw := testenv.StartSwayRelease(t, rel)
	keyEndsIdle(t, idleOnSway(t, sw), sw.Run)
}

// keyEndsIdle types a key with wtype (run on the compositor) after the
// idle report states has brought, and checks the watcher says active, then
// idle again.
func keyEndsIdle(t *testing.T, states chan bool, run func(argv ...string) (string, error)) {
	t.Helper()
	if out, err := run("wtype", "x"); err != nil {
		t.Fatalf("wtype: %v\n%s", err, out)
	}
	if idle := next(t, states); idle {
		t.Fatal("after a key the report is idle, want active")
	}
	if idle := next(t, states); !idle {
		t.Fatal("no idle report after the key")
	}
}

// idleOnSway runs an idle watcher with a one-second threshold on sway until
// the test ends, and returns its reports once the first, idle, has come.
func idleOnSway(t *testing.T, sw *testenv.Sway) chan bool {
	return idleOn(t, sw.Display, sw.RuntimeDir)
}

// idleOn is idleOnSway on any compositor's display (a socket in runtimeDir).
func idleOn(t *testing.T, display, runtimeDir string) chan bool {
	iw := NewIdleWatcher(display, time.Second, testenv.Logger())
	iw.runtimeDir = runtimeDir
	states := make(chan bool, 16)
	runIdle(t, iw, states)
	if idle := next(t, states); !idle {
		t.Fatal("first report is active, want idle")
	}
	return states
}

func runIdle(t *testing.T, iw *IdleWatcher, states chan bool) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		iw.Run(ctx, func(idle bool) { states <- idle })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func next(t *testing.T, states chan bool) bool {
	t.Helper()
	select {
	case idle := <-states:
		return idle
	case <-time.After(waitTimeout):
		t.Fatal("no idle report")
		return false
	}
}

// Probe tells sway's interfaces apart from a compositor's that lacks them.
func TestSwayProbe(t *testing.T) {
	testenv.EachRelease(t, testenv.SwayReleases, testSwayProbe)
}

func testSwayProbe(t *testing.T, rel testenv.Release) {
	sw := testenv.StartSwayRelease(t, rel)
	t.Setenv("XDG_RUNTIME_DIR", sw.RuntimeDir)
	g, err := Probe(guardCtx(t), sw.Display)
	if err != nil {
		t.Fatal(err)
	}
	if !g.ForeignToplevel || !g.IdleNotifier {
		t.Fatalf("sway %s: %+v, want both", rel.Version, g)
	}
}

// Idle when sway goes away, and input on the new sway: the watcher says
// active, though the new sway never said idle first.
func TestSwayIdleAcrossRestart(t *testing.T) {
	testenv.EachRelease(t, testenv.SwayReleases, testSwayIdleAcrossRestart)
}

func testSwayIdleAcrossRestart(t *testing.T, rel testenv.Release) {
	sw := testenv.StartSwayRelease(t, rel)
	states := idleOnSway(t, sw)
	sw.Restart(t)
	// Keep typing, so the new sway never sees a second without input.
	stop := make(chan struct{})
	typed := make(chan struct{})
	go func() {
		defer close(typed)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				sw.Run("wtype", "x")
			}
		}
	}()
	defer func() { close(stop); <-typed }()
	if idle := next(t, states); idle {
		t.Fatal("after input on the new sway the report is idle, want active")
	}
}
