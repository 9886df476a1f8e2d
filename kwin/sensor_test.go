package kwin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// Native windows' focus and title changes reach the sensor, with KWin's
// internalId as the handle and the Wayland app id as the class.
func TestSensorFollowsFocusAndTitlesOnKWin(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testSensorFollowsFocusAndTitlesOnKWin)
}

func testSensorFollowsFocusAndTitlesOnKWin(t *testing.T, rel testenv.Release) {
	p := startPlasma(t, rel)
	p.waitReason(t, service.ReasonNoFocus) // the script's first report: nothing has focus yet
	editor := p.kwin.Window(t, "org.example.Editor", "main.go - editor")
	p.waitWindow(t, editor, "main.go - editor")
	if !validHandle(editor.ID) {
		t.Fatalf("KWin's handle: got %q, want a UUID in braces", editor.ID)
	}
	distraction := p.kwin.Window(t, "org.example.Distraction", "cat videos")
	p.waitWindow(t, distraction, "cat videos")
	p.kwin.Activate(t, editor)
	p.waitWindow(t, editor, "main.go - editor")
	editor.SetTitle(t, "other.go - editor")
	p.waitWindow(t, editor, "other.go - editor")
	// A title change of a window without focus is not news.
	distraction.SetTitle(t, "more cat videos")
	testenv.WaitForValue(t, wait, "KWin's title of the distraction", "more cat videos", func() string { return p.kwin.Info(t, distraction).Title })
	p.kwin.Activate(t, distraction)
	p.waitWindow(t, distraction, "more cat videos")
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.seen {
		if w.Available && w.Class == "org.example.Editor" && w.Title == "more cat videos" {
			t.Fatalf("a background title: got it as the editor's among %+v, want it never reported as the editor's", p.seen)
		}
	}
}

// KWin going away is said in words; the KWin that comes back gets the
// script again, which reports from its first moment.
func TestSensorReloadsTheScriptWhenKWinRestarts(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testSensorReloadsTheScriptWhenKWinRestarts)
}

func testSensorReloadsTheScriptWhenKWinRestarts(t *testing.T, rel testenv.Release) {
	p := startPlasma(t, rel)
	editor := p.kwin.Window(t, "org.example.Editor", "main.go - editor")
	p.waitWindow(t, editor, "main.go - editor")
	p.kwin.Kill(t)
	p.waitReason(t, reasonGone)

	p.kwin.Start(t)
	p.waitReason(t, service.ReasonNoFocus) // only the reloaded script can say so
	if !p.scriptLoaded(t, focusScript) {
		t.Fatal("the script is not loaded in the new KWin")
	}
	again := p.kwin.Window(t, "org.example.Editor", "main.go - editor")
	p.waitWindow(t, again, "main.go - editor")
}

// At stop the script leaves KWin and its file leaves the disk.
func TestSensorUnloadsItsScriptAtStop(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testSensorUnloadsItsScriptAtStop)
}

func testSensorUnloadsItsScriptAtStop(t *testing.T, rel testenv.Release) {
	p := startPlasma(t, rel)
	p.waitReason(t, service.ReasonNoFocus)
	if got := p.scriptFiles(t); strings.Join(got, " ") != focusFile {
		t.Fatalf("the script directory while running: got %q, want only %s", got, focusFile)
	}
	if !p.scriptLoaded(t, focusScript) {
		t.Fatal("the script is not loaded while the sensor runs")
	}
	p.stopSensor()
	if p.scriptLoaded(t, focusScript) {
		t.Fatal("the script is still loaded in KWin after Run returned")
	}
	if got := p.scriptFiles(t); len(got) != 0 {
		t.Fatalf("the script directory after Run returned: got %q, want it empty", got)
	}
}

// Before KWin is there, the sensor says so; when it comes, the script
// goes in.
func TestSensorWaitsForKWin(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testSensorWaitsForKWin)
}

func testSensorWaitsForKWin(t *testing.T, rel testenv.Release) {
	p := startPlasma(t, rel)
	p.waitReason(t, service.ReasonNoFocus)
	p.kwin.Kill(t)
	p.waitReason(t, reasonGone)
	p.stopSensor()

	// A new sensor while KWin is away.
	q := &plasma{bus: p.bus, kwin: p.kwin, conn: p.conn}
	sensor := NewSensor(p.conn, p.kwin.RuntimeDir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	q.stop, q.done = cancel, make(chan struct{})
	go func() {
		defer close(q.done)
		sensor.Run(ctx, func(w service.Window) { q.mu.Lock(); q.seen = append(q.seen, w); q.mu.Unlock() })
	}()
	t.Cleanup(q.stopSensor)
	q.waitReason(t, reasonAbsent)
	p.kwin.Start(t)
	testenv.WaitUntil(t, wait, "the script to be loaded into the KWin that came", func() bool { return q.scriptLoaded(t, focusScript) })
}

// Without a private place for the script, nothing goes into KWin and the
// reason says why.
func TestSensorWithoutARuntimeDirSaysWhy(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testSensorWithoutARuntimeDirSaysWhy)
}

func testSensorWithoutARuntimeDirSaysWhy(t *testing.T, rel testenv.Release) {
	p := startPlasma(t, rel)
	p.waitReason(t, service.ReasonNoFocus)
	p.stopSensor()
	sensor := NewSensor(p.conn, "", nil)
	got := make(chan service.Window, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sensor.Run(ctx, func(w service.Window) { got <- w })
	}()
	defer func() { cancel(); <-done }()
	select {
	case w := <-got:
		if w.Available || !strings.Contains(w.Reason, "XDG_RUNTIME_DIR is not set") {
			t.Fatalf("the sensor without a runtime dir: got %+v, want unavailable, saying XDG_RUNTIME_DIR is not set", w)
		}
	case <-time.After(wait):
		t.Fatal("the sensor without a runtime dir: got no report, want one saying XDG_RUNTIME_DIR is not set")
	}
	if p.scriptLoaded(t, focusScript) {
		t.Fatal("a script went into KWin")
	}
}
