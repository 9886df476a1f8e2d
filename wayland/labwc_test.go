package wayland

import (
	"errors"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// labwcMinimized says whether labwc says the window with appID is
// minimized, as wlrctl (another foreign-toplevel client) reads it.
func labwcMinimized(t *testing.T, l *testenv.Labwc, appID string) bool {
	t.Helper()
	_, err := l.Run("wlrctl", "toplevel", "find", "app_id:"+appID, "state:minimized")
	return err == nil
}

// On labwc, the wlroots source reports focus and titles, and its guard
// minimizes the focused window with the protocol's own set_minimized (no
// compositor IPC to fall back on: labwc has none), which labwc honours;
// focus goes back to the other window, activating brings it back, and a
// window without focus is left alone. Idle comes and goes with a key.
func TestLabwc(t *testing.T) {
	testenv.EachRelease(t, testenv.LabwcReleases, testLabwc)
}

func testLabwc(t *testing.T, rel testenv.Release) {
	l := testenv.StartLabwc(t, rel)
	w := watchDisplay(t, l.Display, l.RuntimeDir)
	w.waitFor(t, "no focus on an empty desktop", func(win service.Window) bool {
		return !win.Available && win.Reason == service.ReasonNoFocus
	})
	editorTitle := l.Foot(t, "Editor", "notes.txt")
	editor := w.waitClass(t, "Editor", "notes.txt")
	editorTitle("draft.txt")
	w.waitClass(t, "Editor", "draft.txt")
	l.Foot(t, "Browser", "news")
	browser := w.waitClass(t, "Browser", "news")
	if editor.ID == browser.ID || editor.ID == "" {
		t.Fatalf("handles: got editor %q, browser %q, want two different non-empty handles", editor.ID, browser.ID)
	}
	if out, err := l.Run("wlrctl", "toplevel", "focus", "app_id:Editor"); err != nil {
		t.Fatalf("wlrctl toplevel focus: %v\n%s", err, out)
	}
	w.waitClass(t, "Editor", "draft.txt")
	if out, err := l.Run("wlrctl", "toplevel", "focus", "app_id:Browser"); err != nil {
		t.Fatalf("wlrctl toplevel focus: %v\n%s", err, out)
	}
	w.waitClass(t, "Browser", "news")

	g := NewGuard(w.s, testenv.Logger())
	t.Cleanup(func() { g.Close() })
	if g.hider != nil {
		t.Fatalf("the guard's fallback on labwc: got %s, want none (else set_minimized is not what is proven)", g.hiderName())
	}
	testenv.WaitUntil(t, waitTimeout, "the guard to be available", g.Available)
	if err := g.MinimizeWindow(guardCtx(t), browser.ID); err != nil {
		t.Fatalf("MinimizeWindow(focused browser): %v", err)
	}
	if !labwcMinimized(t, l, "Browser") {
		t.Fatal("MinimizeWindow returned nil but labwc does not say the browser is minimized")
	}
	w.waitClass(t, "Editor", "draft.txt")
	if err := g.MinimizeWindow(guardCtx(t), browser.ID); !errors.Is(err, service.ErrNotActive) {
		t.Fatalf("MinimizeWindow(the minimized browser) = %v, want ErrNotActive", err)
	}
	if err := g.ActivateWindow(guardCtx(t), browser.ID); err != nil {
		t.Fatalf("ActivateWindow(minimized browser): %v", err)
	}
	w.waitClass(t, "Browser", "news")
	if labwcMinimized(t, l, "Browser") {
		t.Fatal("activated, the browser is still minimized")
	}

	keyEndsIdle(t, idleOn(t, l.Display, l.RuntimeDir), l.Run)
}
