package wayland

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/antidrift/antidrift/internal/testenv"
	"github.com/antidrift/antidrift/service"
)

// startKWin runs KWin 6 headless (--virtual) in the rootfs, with a session
// bus of its own, and returns its XDG_RUNTIME_DIR and WAYLAND_DISPLAY. KWin
// is the compositor here that offers ext_idle_notifier_v1 but not the
// wlroots window list.
func startKWin(t *testing.T) (runtimeDir, display string) {
	r := testenv.NeedRootfs(t)
	dir := r.TempDir(t)
	runtimeDir, display = filepath.Join(dir, "run"), "wayland-kwin"
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := r.Start(t, dir, 0, []string{"HOME=" + dir, "XDG_RUNTIME_DIR=" + runtimeDir},
		"dbus-run-session", "kwin_wayland", "--virtual", "--no-lockscreen", "--socket", display)
	testenv.WaitUntil(t, waitTimeout, "KWin's socket", func() bool {
		if p.Exited() {
			t.Fatalf("kwin_wayland exited:\n%s", p.Output())
		}
		_, err := os.Stat(filepath.Join(runtimeDir, display))
		return err == nil
	})
	return runtimeDir, display
}

// On KWin the sensor says why it sees nothing, Probe says what is there,
// and the idle watcher works. (KWin offers ordinary clients no virtual
// keyboard, so input to end idleness is driven on sway only.)
func TestKWin(t *testing.T) {
	runtimeDir, display := startKWin(t)

	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	g, err := Probe(guardCtx(t), display)
	if err != nil {
		t.Fatal(err)
	}
	if g.ForeignToplevel || !g.IdleNotifier {
		t.Fatalf("KWin: %+v, want the idle notifier only", g)
	}

	s := NewSensor(display, testenv.Logger())
	w := runSensor(t, s)
	if got := w.waitFor(t, "a report", func(win service.Window) bool { return win.Reason != "" }); got.Reason != reasonNoManager {
		t.Errorf("sensor on KWin: %+v, want %q", got, reasonNoManager)
	}

	iw := NewIdleWatcher(display, 0, testenv.Logger()) // the shortest threshold, a second
	states := make(chan bool, 4)
	runIdle(t, iw, states)
	if idle := next(t, states); !idle {
		t.Fatal("first report on KWin is active, want idle")
	}
}
