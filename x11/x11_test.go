package x11

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// waitTimeout is how long a test waits for an expected snapshot or state. It
// is generous on purpose: it only matters when something is broken.
const waitTimeout = 30 * time.Second

// runUntilCleanup runs a watcher's Run until the test ends, delivering its
// reports on ch, and fails the test if Run does not return once cancelled.
func runUntilCleanup[T any](t *testing.T, what string, ch chan T, run func(context.Context, func(T))) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx, func(v T) {
			select {
			case ch <- v:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Errorf("%s did not return after its context was cancelled", what)
		}
	})
}

// snapshots runs a sensor on display until the test ends and returns the
// channel its reports arrive on.
type snapshots struct {
	ch   chan service.Window
	seen []service.Window // everything taken from ch so far, for failure messages
}

func startSensor(t *testing.T, display string) *snapshots {
	t.Helper()
	s := &snapshots{ch: make(chan service.Window, 1024)}
	runUntilCleanup(t, "Sensor.Run", s.ch, NewSensor(display, testenv.Logger()).Run)
	return s
}

// next waits for the first snapshot satisfying match, skipping others.
func (s *snapshots) next(t *testing.T, what string, match func(service.Window) bool) service.Window {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		select {
		case w := <-s.ch:
			s.seen = append(s.seen, w)
			if match(w) {
				return w
			}
		case <-timeout:
			t.Fatalf("timed out waiting for a snapshot of %s; seen so far:\n%s", what, s.dump())
		}
	}
}

func (s *snapshots) dump() string {
	var b strings.Builder
	for _, w := range s.seen {
		fmt.Fprintf(&b, "  %+v\n", w)
	}
	return b.String()
}

// xh is the sensor's handle of X window id.
func xh(id uint32) string { return handle(xproto.Window(id)) }

func isWindow(id uint32) func(service.Window) bool {
	return func(w service.Window) bool { return w.Available && w.ID == xh(id) }
}

func TestSensorFollowsFocusAndTitles(t *testing.T) {
	testenv.EachRelease(t, testenv.XWMReleases, testSensorFollowsFocusAndTitles)
}

func testSensorFollowsFocusAndTitles(t *testing.T, rel testenv.Release) {
	testenv.Need(t, "Xvfb", "xterm", "xdotool", "xprop")
	d := testenv.StartXRelease(t, rel)
	editor := d.XTerm(t, "Editor", "main.go - editor")
	distraction := d.XTerm(t, "Distraction", "cat videos")
	s := startSensor(t, d.Name)

	// Whatever is active at start is reported first.
	first := s.next(t, "the window active at start", func(service.Window) bool { return true })
	if !first.Available || (first.ID != xh(editor) && first.ID != xh(distraction)) {
		t.Errorf("first snapshot = %+v, want one of the two xterms", first)
	}

	d.Activate(t, editor)
	w := s.next(t, "the editor", isWindow(editor))
	want := service.Window{ID: xh(editor), Class: "Editor", Instance: "xterm", Title: "main.go - editor", Available: true}
	if w != want {
		t.Errorf("editor snapshot = %+v, want %+v", w, want)
	}

	d.Activate(t, distraction)
	// openbox publishes _NET_ACTIVE_WINDOW = None for a moment between two
	// windows, so "no window has focus" may come in between.
	w = s.next(t, "the distraction", isWindow(distraction))
	want = service.Window{ID: xh(distraction), Class: "Distraction", Instance: "xterm", Title: "cat videos", Available: true}
	if w != want {
		t.Errorf("distraction snapshot = %+v, want %+v", w, want)
	}

	// A title change on the active window (a browser switching tabs).
	d.SetTitle(t, distraction, "more cat videos — ünïcode")
	w = s.next(t, "the new title", func(w service.Window) bool { return w.Available && w.Title != "cat videos" })
	want.Title = "more cat videos — ünïcode"
	if w != want {
		t.Errorf("after SetTitle, snapshot = %+v, want %+v", w, want)
	}

	// A title change on a window that is not active is not news. The marker
	// title set afterwards on the active window proves the sensor got past it.
	d.SetTitle(t, editor, "editor in the background")
	d.SetTitle(t, distraction, "marker")
	mark := len(s.seen)
	s.next(t, "the marker title", func(w service.Window) bool { return w.Title == "marker" })
	for _, w := range s.seen[mark:] {
		if w.Title == "editor in the background" {
			t.Errorf("a background window's title change: got reported as %+v, want not reported", w)
		}
	}
	d.Activate(t, editor)
	w = s.next(t, "the editor again", isWindow(editor))
	if w.Title != "editor in the background" {
		t.Errorf("after reactivating the editor: got snapshot %+v, want Title %q", w, "editor in the background")
	}

	// Destroy the active window: the sensor must carry on, reporting either
	// that nothing has focus or the window that inherits it.
	d.Activate(t, distraction)
	s.next(t, "the distraction again", isWindow(distraction))
	if _, err := d.Run(t, "xdotool", "windowkill", fmt.Sprint(distraction)); err != nil {
		t.Fatal(err)
	}
	w = s.next(t, "whatever follows the destroyed window", func(w service.Window) bool { return w.ID != xh(distraction) })
	if w.Available && w.ID != xh(editor) {
		t.Errorf("after destroying the active window: got snapshot %+v, want the editor %s or no window", w, xh(editor))
	}
	if !w.Available && w.Reason == "" {
		t.Errorf("unavailable snapshot: got %+v, want a Reason", w)
	}

	// Still alive: focus and titles are still followed.
	d.Activate(t, editor)
	d.SetTitle(t, editor, "still watching")
	s.next(t, "the editor's new title", func(w service.Window) bool {
		return w.ID == xh(editor) && w.Title == "still watching"
	})
}

func TestSensorNoDisplay(t *testing.T) {
	s := startSensor(t, "")
	w := s.next(t, "unavailable", func(service.Window) bool { return true })
	if w.Available || !strings.Contains(w.Reason, "DISPLAY is not set") {
		t.Errorf("snapshot = %+v, want unavailable because DISPLAY is not set", w)
	}
}

func TestSensorCannotConnect(t *testing.T) {
	// A display number nobody serves.
	display := filepath.Join(t.TempDir(), "nothing") + ":0"
	s := startSensor(t, display)
	w := s.next(t, "unavailable", func(service.Window) bool { return true })
	if w.Available || !strings.Contains(w.Reason, "cannot connect to the X display "+display) {
		t.Errorf("snapshot = %+v, want unavailable because it cannot connect", w)
	}
}

func TestSensorReconnectsAfterXServerLoss(t *testing.T) {
	testenv.Need(t, "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	d := testenv.StartX(t)
	before := d.XTerm(t, "Before", "before the crash")
	s := startSensor(t, d.Name)
	d.Activate(t, before)
	s.next(t, "the xterm", isWindow(before))

	d.Kill()
	w := s.next(t, "the loss of the X server", func(w service.Window) bool { return !w.Available })
	if want := "lost the X server at " + d.Name + "; reconnecting"; w.Reason != want {
		t.Errorf("reason = %q, want %q", w.Reason, want)
	}

	d.Restart(t)
	after := d.XTerm(t, "After", "after the crash")
	d.Activate(t, after)
	w = s.next(t, "the xterm on the restarted server", isWindow(after))
	if w.Class != "After" || w.Title != "after the crash" {
		t.Errorf("after reconnecting: got snapshot %+v, want Class %q, Title %q", w, "After", "after the crash")
	}
}

// wedgedDisplay returns a display string for a socket that accepts
// connections and never answers, like a stopped X server.
func wedgedDisplay(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "x11wedge")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "x:0"))
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for c := range accepted {
			c.Close()
		}
	})
	return filepath.Join(dir, "x") + ":0"
}

func TestSensorWedgedServer(t *testing.T) {
	display := wedgedDisplay(t)
	sensor := NewSensor(display, testenv.Logger())
	sensor.slowDial = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := make(chan service.Window, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sensor.Run(ctx, func(w service.Window) { reports <- w })
	}()

	select {
	case w := <-reports:
		if want := "the X server at " + display + " does not answer; still waiting"; w.Available || w.Reason != want {
			t.Errorf("snapshot = %+v, want unavailable with reason %q", w, want)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no snapshot while the X server never answered")
	}

	cancel()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return after cancel while the X server never answered")
	}
}

func TestTextDecoding(t *testing.T) {
	latin1 := &xproto.GetPropertyReply{Type: xproto.AtomString, Format: 8, Value: []byte("caf\xe9")}
	if got := text(latin1); got != "café" {
		t.Errorf("STRING %q decoded as %q, want café", latin1.Value, got)
	}
	broken := &xproto.GetPropertyReply{Type: 999, Format: 8, Value: []byte("ok\xff")}
	if got := text(broken); got != "ok\uFFFD" {
		t.Errorf("invalid UTF-8 decoded: got %q, want %q", got, "ok\uFFFD")
	}
}

// --- Guard ---

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func newGuard(t *testing.T, display string) *Guard {
	g := NewGuard(display, testenv.Logger())
	t.Cleanup(func() { g.Close() })
	return g
}

// windowState is what the X server says of window id and of the active
// window, as a wait for the guard's work shows it.
type windowState struct {
	id         uint32
	active     uint32 // _NET_ACTIVE_WINDOW
	wmState    string // WM_STATE
	netWMState []string
}

func stateOf(t *testing.T, d *testenv.Display, id uint32) windowState {
	t.Helper()
	return windowState{id: id, active: d.ActiveWindow(t), wmState: d.WMState(t, id), netWMState: d.NetWMState(t, id)}
}

func (s windowState) String() string {
	return fmt.Sprintf("window %#x: WM_STATE %s, _NET_WM_STATE %v; the active window %#x", s.id, s.wmState, s.netWMState, s.active)
}

func TestGuardMinimizeAndActivate(t *testing.T) {
	testenv.EachRelease(t, testenv.XWMReleases, testGuardMinimizeAndActivate)
}

func testGuardMinimizeAndActivate(t *testing.T, rel testenv.Release) {
	testenv.Need(t, "Xvfb", "xterm", "xdotool", "xprop")
	d := testenv.StartXRelease(t, rel)
	editor := d.XTerm(t, "Editor", "editor")
	distraction := d.XTerm(t, "Distraction", "distraction")
	g := newGuard(t, d.Name)
	if !g.Available() {
		t.Fatal("Available() on a running display: got false, want true")
	}
	d.Activate(t, distraction)

	// Not the active window: left alone.
	if err := g.MinimizeWindow(callCtx(t), xh(editor)); !errors.Is(err, service.ErrNotActive) {
		t.Errorf("MinimizeWindow(inactive) = %v, want ErrNotActive", err)
	}
	if st := d.WMState(t, editor); st != "Normal" {
		t.Errorf("the inactive window's WM_STATE after a refused minimize: got %s, want Normal", st)
	}

	// The active window: iconified.
	if err := g.MinimizeWindow(callCtx(t), xh(distraction)); err != nil {
		t.Fatalf("MinimizeWindow(active) = %v", err)
	}
	testenv.WaitFor(t, waitTimeout, "the distraction to be iconic and hidden", func() windowState { return stateOf(t, d, distraction) },
		func(s windowState) bool {
			return s.wmState == "Iconic" && slices.Contains(s.netWMState, "_NET_WM_STATE_HIDDEN")
		})

	// Activate brings a window forward, even an iconified one.
	if err := g.ActivateWindow(callCtx(t), xh(editor)); err != nil {
		t.Fatalf("ActivateWindow(editor) = %v", err)
	}
	testenv.WaitFor(t, waitTimeout, "the editor to be active", func() windowState { return stateOf(t, d, editor) },
		func(s windowState) bool { return s.active == editor })
	if err := g.ActivateWindow(callCtx(t), xh(distraction)); err != nil {
		t.Fatalf("ActivateWindow(iconified) = %v", err)
	}
	testenv.WaitFor(t, waitTimeout, "the iconified distraction to be active and normal", func() windowState { return stateOf(t, d, distraction) },
		func(s windowState) bool { return s.active == distraction && s.wmState == "Normal" })

	// A destroyed window.
	if _, err := d.Run(t, "xdotool", "windowkill", fmt.Sprint(distraction)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitUntil(t, waitTimeout, "the distraction to be destroyed", func() bool {
		_, err := d.Run(t, "xprop", "-id", fmt.Sprintf("%#x", distraction), "WM_NAME")
		return err != nil
	})
	err := g.ActivateWindow(callCtx(t), xh(distraction))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("window %s no longer exists", xh(distraction))) {
		t.Errorf("ActivateWindow(destroyed) = %v, want \"no longer exists\"", err)
	}
	// The connection survives an X error.
	if err := g.ActivateWindow(callCtx(t), xh(editor)); err != nil {
		t.Errorf("ActivateWindow after an error = %v", err)
	}
}

func TestGuardExpiredContext(t *testing.T) {
	testenv.Need(t, "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	d := testenv.StartX(t)
	w := d.XTerm(t, "Editor", "editor")
	d.Activate(t, w)
	g := newGuard(t, d.Name)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.MinimizeWindow(ctx, xh(w)); !errors.Is(err, context.Canceled) {
		t.Errorf("MinimizeWindow(cancelled ctx) = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	if err := g.ActivateWindow(ctx, xh(w)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ActivateWindow(expired ctx) = %v, want context.DeadlineExceeded", err)
	}
	if st := d.WMState(t, w); st != "Normal" {
		t.Errorf("WM_STATE = %s after calls with a dead context, want Normal", st)
	}
}

func TestGuardWedgedServer(t *testing.T) {
	g := newGuard(t, wedgedDisplay(t))
	for i := range 2 { // the second call must not be stuck behind the first
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := g.MinimizeWindow(ctx, "0x1")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("call %d: MinimizeWindow on a wedged server = %v, want DeadlineExceeded", i, err)
		}
	}
}

func TestGuardNoDisplay(t *testing.T) {
	g := newGuard(t, "")
	if g.Available() {
		t.Error("Available() = true with no display")
	}
	if err := g.MinimizeWindow(context.Background(), "0x1"); err == nil || !strings.Contains(err.Error(), "DISPLAY is not set") {
		t.Errorf("MinimizeWindow with no display = %v", err)
	}
}

func TestGuardSurvivesXServerRestart(t *testing.T) {
	testenv.Need(t, "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	d := testenv.StartX(t)
	g := newGuard(t, d.Name)
	if !g.Available() {
		t.Fatal("Available() = false on a running display")
	}
	d.Restart(t)
	w := d.XTerm(t, "After", "after")
	d.Activate(t, w)
	if err := g.MinimizeWindow(callCtx(t), xh(w)); err != nil {
		t.Fatalf("MinimizeWindow after the X server restarted = %v", err)
	}
	testenv.WaitForValue(t, waitTimeout, "the window's WM_STATE", "Iconic", func() string { return d.WMState(t, w) })
}

func TestGuardClosed(t *testing.T) {
	g := NewGuard(":0", testenv.Logger())
	g.Close()
	if err := g.ActivateWindow(context.Background(), "0x1"); !errors.Is(err, errGuardClosed) {
		t.Errorf("ActivateWindow after Close = %v", err)
	}
}

// BenchmarkSensorTitleChange measures the sensor's event path: a title set
// by another client, through PropertyNotify, to report.
func BenchmarkSensorTitleChange(b *testing.B) {
	testenv.Need(b, "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	d := testenv.StartX(b)
	id := d.XTerm(b, "Bench", "bench")
	d.Activate(b, id)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := make(chan service.Window, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		NewSensor(d.Name, nil).Run(ctx, func(w service.Window) {
			select {
			case reports <- w:
			case <-ctx.Done():
			}
		})
	}()
	defer func() { cancel(); <-done }()
	for w := range reports {
		if w.ID == xh(id) && w.Title == "bench" {
			break
		}
	}

	c, err := dial(d.Name)
	if err != nil {
		b.Fatal(err)
	}
	defer c.x.Close()
	b.ResetTimer()
	for i := range b.N {
		title := fmt.Sprint("title ", i)
		xproto.ChangeProperty(c.x, xproto.PropModeReplace, xproto.Window(id), c.netWMName,
			xproto.AtomString, 8, uint32(len(title)), []byte(title))
		for w := range reports {
			if w.Title == title {
				break
			}
		}
	}
}

// The evidence contract's scenarios on a real X server with each window
// manager: an xterm of the scenario's class and title activated, then
// closed, the only window there was.
func TestEvidenceContract(t *testing.T) {
	testenv.EachRelease(t, testenv.XWMReleases, testEvidenceContract)
}

func testEvidenceContract(t *testing.T, rel testenv.Release) {
	testenv.Need(t, "Xvfb", "xterm", "xdotool", "xprop")
	for _, sc := range testenv.EvidenceScenarios {
		t.Run(sc.Name, func(t *testing.T) {
			d := testenv.StartXRelease(t, rel)
			id := d.XTerm(t, sc.App, "xterm")
			d.SetTitle(t, id, sc.Title) // xterm's -title is not UTF-8
			d.Activate(t, id)
			s := startSensor(t, d.Name)
			got := s.next(t, "the xterm", func(w service.Window) bool { return isWindow(id)(w) && w.Title == sc.Title })
			if sc.Closed {
				// The person closes it: the program ends.
				xid := strconv.FormatUint(uint64(id), 10)
				if _, err := d.Run(t, "sh", "-c", "kill $(xdotool getwindowpid "+xid+")"); err != nil {
					t.Fatal(err)
				}
				got = s.next(t, "what the closing left", func(w service.Window) bool { return !isWindow(id)(w) })
			}
			testenv.CheckEvidence(t, sc, got)
		})
	}
}
