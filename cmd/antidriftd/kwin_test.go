package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// plasmaDesktop is KWin 6 headless with two native Wayland windows and
// antidriftd on the same private bus, with XDG_RUNTIME_DIR and
// WAYLAND_DISPLAY as a Plasma session's user manager has them.
type plasmaDesktop struct {
	bus                 *testenv.Bus
	kwin                *testenv.KWin
	dunst               *testenv.Dunst
	d                   *testenv.Daemon
	editor, distraction *testenv.Window
}

const (
	editorApp      = "org.example.Editor"
	distractionApp = "org.example.Distraction"
)

func startPlasmaDesktop(t *testing.T, rel testenv.Release, withDunst bool, configTOML string) *plasmaDesktop {
	t.Helper()
	r := testenv.NeedKWinRootfs(t, rel)
	testenv.Need(t, "dbus-daemon", "busctl", "gdbus", "dbus-monitor")
	p := &plasmaDesktop{bus: testenv.StartBus(t)}
	p.kwin = testenv.StartKWin(t, r, p.bus)
	if withDunst {
		testenv.Need(t, "Xvfb", "openbox")
		p.dunst = testenv.StartDunst(t, p.bus, testenv.StartX(t)) // X only gives dunst somewhere to draw
	}
	p.distraction = p.kwin.Window(t, distractionApp, "cat videos")
	p.editor = p.kwin.Window(t, editorApp, "main.go - editor")
	p.kwin.Activate(t, p.editor)
	p.d = testenv.StartDaemon(t, p.bus, filepath.Join(t.TempDir(), "state"),
		"WAYLAND_DISPLAY="+p.kwin.Socket, "XDG_RUNTIME_DIR="+p.kwin.RuntimeDir, "XDG_CONFIG_HOME="+configHome(t, configTOML))
	waitProp(t, p.d, "CurrentClass", editorApp)
	return p
}

// focusScriptLoaded asks KWin whether antidrift's script is loaded.
func (p *plasmaDesktop) focusScriptLoaded(t *testing.T) bool {
	t.Helper()
	var loaded bool
	if err := p.bus.Dial(t).Object("org.kde.KWin", "/Scripting").Call("org.kde.kwin.Scripting.isScriptLoaded", 0, "antidrift-focus").Store(&loaded); err != nil {
		t.Fatalf("asking KWin whether antidrift-focus is loaded: %v", err)
	}
	return loaded
}

// On Plasma, auto chooses KWin; native windows' focus and titles reach the
// session and its buckets; a forged focus report is refused; at stop the
// script leaves KWin.
func TestKWinEvidenceReachesTheSession(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWinEvidenceReachesTheSession)
}

func testKWinEvidenceReachesTheSession(t *testing.T, rel testenv.Release) {
	p := startPlasmaDesktop(t, rel, false, "") // evidence = "auto", the default
	s := p.d.Session(t)
	if got := s.String(t, "EvidenceSource"); got != "kwin" {
		t.Fatalf("EvidenceSource on Plasma with evidence = auto: got %q, want %q", got, "kwin")
	}
	if !strings.Contains(p.d.Output(), "org.kde.KWin is on the session bus") {
		t.Errorf("the start-up log: got\n%s\nwant it to say why kwin was chosen (org.kde.KWin is on the session bus)", p.d.Output())
	}
	startSession(t, s, "write code", "tests pass", 600, "observe", editorApp)
	p.kwin.Activate(t, p.distraction)
	waitProp(t, p.d, "CurrentClass", distractionApp)
	waitProp(t, p.d, "Drift", "drifting")
	p.kwin.Activate(t, p.editor)
	waitProp(t, p.d, "CurrentClass", editorApp)
	p.editor.SetTitle(t, "other.go - editor")
	waitProp(t, p.d, "CurrentTitle", "other.go - editor")
	got := buckets(t, p.d)
	for _, want := range []bucketProp{{Class: editorApp, Title: "main.go - editor"}, {Class: distractionApp, Title: "cat videos"}} {
		if !hasBucket(got, want.Class, want.Title) {
			t.Errorf("Buckets: got %v, want one of %s %q", got, want.Class, want.Title)
		}
	}

	// Anyone but KWin is refused, and the session did not move.
	checkRefusedAccess(t, "a forged ReportFocus", forgeFocus(t, p.bus, "{00000000-0000-4000-8000-000000000000}", "steam", "a game"))
	if got := s.String(t, "CurrentClass"); got != editorApp {
		t.Fatalf("CurrentClass after a forged report: got %q, want %q", got, editorApp)
	}
	if strings.Contains(p.d.Output(), "other.go") || strings.Contains(p.d.Output(), "cat videos") {
		t.Fatalf("the daemon's log: got\n%s\nwant it without window titles", p.d.Output())
	}

	if !p.focusScriptLoaded(t) {
		t.Fatal("antidrift's script in KWin while the daemon runs: got not loaded, want loaded")
	}
	p.d.Stop(t)
	if p.focusScriptLoaded(t) {
		t.Fatalf("antidrift's script in KWin after the daemon stopped: got loaded, want unloaded\n%s", p.d.Output())
	}
}

// At block, the drifting window is minimized (as KWin says) and the last
// on-task window gets focus back, with a nudge through the notification
// server.
func TestKWinBlockMinimizesTheDriftingWindow(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWinBlockMinimizesTheDriftingWindow)
}

func testKWinBlockMinimizesTheDriftingWindow(t *testing.T, rel testenv.Release) {
	p := startPlasmaDesktop(t, rel, true, `evidence = "kwin"`+"\n"+driftConfig)
	mon := testenv.StartMonitor(t, p.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	startSession(t, p.d.Session(t), "write code", "tests pass", 600, "block", editorApp)
	p.kwin.Activate(t, p.distraction)

	testenv.WaitForValue(t, wait, "Minimized of the distraction in KWin", true, func() bool { return p.kwin.Info(t, p.distraction).Minimized })
	testenv.WaitForValue(t, wait, "Active of the editor in KWin", true, func() bool { return p.kwin.Info(t, p.editor).Active })
	waitProp(t, p.d, "MinimizeCount", uint32(1))
	waitProp(t, p.d, "CurrentClass", editorApp)
	mon.WaitFor(t, "Drifting: "+distractionApp, wait)
	if p.kwin.Info(t, p.editor).Minimized {
		t.Fatal("Minimized of the on-task window in KWin: got true, want false")
	}
}

// KWin gone: no evidence, and a reason a person understands. KWin back:
// the script is loaded into it again and evidence returns.
func TestKWinRestartLosesAndRegainsEvidence(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWinRestartLosesAndRegainsEvidence)
}

func testKWinRestartLosesAndRegainsEvidence(t *testing.T, rel testenv.Release) {
	p := startPlasmaDesktop(t, rel, false, `evidence = "kwin"`)
	waitProp(t, p.d, "EvidenceAvailable", true)
	p.kwin.Kill(t)
	waitProp(t, p.d, "EvidenceAvailable", false)
	waitProp(t, p.d, "EvidenceReason", "KWin left the session bus; waiting for it to come back")

	p.kwin.Start(t)
	waitProp(t, p.d, "EvidenceReason", "no window has focus") // said by the reloaded script
	p.kwin.Window(t, editorApp, "main.go - editor")
	waitProp(t, p.d, "EvidenceAvailable", true)
	waitProp(t, p.d, "CurrentClass", editorApp)
	if code := p.d.ExitCode(); code != -1 {
		t.Fatalf("the daemon after KWin's restart: got exit code %d, want it running\n%s", code, p.d.Output())
	}
}

// A daemon that crashed left its script running in KWin; the next one
// replaces it rather than failing to load, and evidence flows again.
func TestKWinDaemonAfterACrashReplacesItsScript(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWinDaemonAfterACrashReplacesItsScript)
}

func testKWinDaemonAfterACrashReplacesItsScript(t *testing.T, rel testenv.Release) {
	p := startPlasmaDesktop(t, rel, false, `evidence = "kwin"`)
	p.d.Kill9(t)
	if !p.focusScriptLoaded(t) {
		t.Fatal("the crashed daemon's script in KWin: got gone, want still loaded (else this test proves nothing)")
	}
	p.d.Start(t)
	waitProp(t, p.d, "EvidenceAvailable", true)
	waitProp(t, p.d, "CurrentClass", editorApp)
	p.kwin.Activate(t, p.distraction)
	waitProp(t, p.d, "CurrentClass", distractionApp)
	if strings.Contains(p.d.Output(), "did not load") {
		t.Fatalf("the new daemon's log: got\n%s\nwant no \"did not load\" (its script replaced the old one)", p.d.Output())
	}
}
