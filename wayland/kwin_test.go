package wayland

import (
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// On KWin the sensor says why it sees nothing, Probe says what is there,
// and the idle watcher works. (KWin offers ordinary clients no virtual
// keyboard, so input to end idleness is driven on sway only.)
func TestKWin(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWin)
}

func testKWin(t *testing.T, rel testenv.Release) {
	k := testenv.StartKWin(t, testenv.NeedKWinRootfs(t, rel), testenv.StartBus(t))
	runtimeDir, display := k.RuntimeDir, k.Socket

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
