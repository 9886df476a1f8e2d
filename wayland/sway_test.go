package wayland

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testenv"
	"github.com/antidrift/antidrift/service"
)

// waitTimeout is how long a test waits for an expected snapshot or state. It
// is generous on purpose: it only matters when something is broken.
const waitTimeout = 30 * time.Second

func testLogger() *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// watched is a sensor running until the test ends, with what it reported.
type watched struct {
	mu   sync.Mutex
	seen []service.Window
	s    *Sensor
}

// watch runs a sensor on sway's display until the test ends.
func watch(t *testing.T, sw *testenv.Sway) *watched {
	s := NewSensor(sw.Display, testLogger())
	s.runtimeDir = sw.RuntimeDir
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

// waitFor waits until the latest report satisfies ok, and returns it.
func (w *watched) waitFor(t *testing.T, what string, ok func(service.Window) bool) service.Window {
	t.Helper()
	testenv.WaitUntil(t, waitTimeout, what, func() bool { return ok(w.last()) })
	return w.last()
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
	sw := testenv.StartSway(t)
	w := watch(t, sw)
	w.waitFor(t, "no focus on an empty desktop", func(win service.Window) bool {
		return !win.Available && win.Reason == reasonNoFocus
	})

	editorTitle := sw.Foot(t, "Editor", "notes.txt")
	editor := w.waitClass(t, "Editor", "notes.txt")
	sw.Foot(t, "Browser", "news")
	browser := w.waitClass(t, "Browser", "news")
	if editor.ID == browser.ID || editor.ID == "" {
		t.Fatalf("handles: editor %q, browser %q", editor.ID, browser.ID)
	}
	if browser.Instance != "" {
		t.Errorf("Instance = %q, want empty (Wayland has only the app_id)", browser.Instance)
	}

	sw.Msg(t, "[app_id=Editor] focus")
	if again := w.waitClass(t, "Editor", "notes.txt"); again.ID != editor.ID {
		t.Errorf("the editor's handle changed from %q to %q", editor.ID, again.ID)
	}
	editorTitle("draft.txt")
	w.waitClass(t, "Editor", "draft.txt")

	// An empty workspace: nothing has focus.
	sw.Msg(t, "workspace 2")
	w.waitFor(t, "no focus on an empty workspace", func(win service.Window) bool {
		return !win.Available && win.Reason == reasonNoFocus
	})
	sw.Msg(t, "workspace 1")
	w.waitFor(t, "focus back on workspace 1", func(win service.Window) bool { return win.Available })
}
