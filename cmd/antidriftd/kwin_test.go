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
	p.waitProp(t, "CurrentClass", `s "`+editorApp+`"`)
	return p
}

func (p *plasmaDesktop) waitProp(t *testing.T, name, want string) {
	t.Helper()
	testenv.WaitForValue(t, wait, name, busctlText(want), func() busctlText { return busctlText(mustProp(t, p.d, name)) })
}

// focusScriptLoaded asks KWin whether antidrift's script is loaded.
func (p *plasmaDesktop) focusScriptLoaded(t *testing.T) bool {
	t.Helper()
	out, err := p.bus.Run(t, "busctl", "--user", "call", "org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting", "isScriptLoaded", "s", "antidrift-focus")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out) == "b true"
}

// On Plasma, auto chooses KWin; native windows' focus and titles reach the
// session and its buckets; a forged focus report is refused; at stop the
// script leaves KWin.
func TestKWinEvidenceReachesTheSession(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWinEvidenceReachesTheSession)
}

func testKWinEvidenceReachesTheSession(t *testing.T, rel testenv.Release) {
	p := startPlasmaDesktop(t, rel, false, "") // evidence = "auto", the default
	if got := mustProp(t, p.d, "EvidenceSource"); got != `s "kwin"` {
		t.Fatalf("EvidenceSource on Plasma with evidence = auto: %s", got)
	}
	if !strings.Contains(p.d.Output(), "org.kde.KWin is on the session bus") {
		t.Errorf("the start-up log does not say why kwin was chosen:\n%s", p.d.Output())
	}
	call(t, p.d, "Start", "sstsas", "write code", "tests pass", "600", "observe", "1", editorApp)
	p.kwin.Activate(t, p.distraction)
	p.waitProp(t, "CurrentClass", `s "`+distractionApp+`"`)
	p.waitProp(t, "Drift", `s "drifting"`)
	p.kwin.Activate(t, p.editor)
	p.waitProp(t, "CurrentClass", `s "`+editorApp+`"`)
	p.editor.SetTitle(t, "other.go - editor")
	p.waitProp(t, "CurrentTitle", `s "other.go - editor"`)
	buckets := mustProp(t, p.d, "Buckets")
	for _, want := range []string{`"` + editorApp + `" "main.go - editor"`, `"` + distractionApp + `" "cat videos"`} {
		if !strings.Contains(buckets, want) {
			t.Errorf("Buckets lacks %s: %s", want, buckets)
		}
	}

	// Anyone but KWin is refused, and the session did not move.
	out, err := p.bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift", "--object-path", "/org/antidrift/Session1",
		"--method", "org.antidrift.Evidence1.ReportFocus", "{00000000-0000-4000-8000-000000000000}", "steam", "a game")
	if err == nil || !strings.Contains(err.Error(), "org.freedesktop.DBus.Error.AccessDenied") {
		t.Fatalf("a forged ReportFocus: %s %v", out, err)
	}
	if got := mustProp(t, p.d, "CurrentClass"); got != `s "`+editorApp+`"` {
		t.Fatalf("CurrentClass after a forged report: %s", got)
	}
	if strings.Contains(p.d.Output(), "other.go") || strings.Contains(p.d.Output(), "cat videos") {
		t.Fatalf("a window title reached the log:\n%s", p.d.Output())
	}

	if !p.focusScriptLoaded(t) {
		t.Fatal("antidrift's script is not loaded in KWin while the daemon runs")
	}
	p.d.Stop(t)
	if p.focusScriptLoaded(t) {
		t.Fatalf("antidrift's script is still loaded in KWin after the daemon stopped\n%s", p.d.Output())
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
	call(t, p.d, "Start", "sstsas", "write code", "tests pass", "600", "block", "1", editorApp)
	p.kwin.Activate(t, p.distraction)

	testenv.WaitUntil(t, wait, "KWin to have minimized the distraction", func() bool { return p.kwin.Info(t, p.distraction).Minimized })
	testenv.WaitUntil(t, wait, "the editor to be active again", func() bool { return p.kwin.Info(t, p.editor).Active })
	p.waitProp(t, "MinimizeCount", "u 1")
	p.waitProp(t, "CurrentClass", `s "`+editorApp+`"`)
	mon.WaitFor(t, "Drifting: "+distractionApp, wait)
	if p.kwin.Info(t, p.editor).Minimized {
		t.Fatal("the on-task window was minimized")
	}
}

// KWin gone: no evidence, and a reason a person understands. KWin back:
// the script is loaded into it again and evidence returns.
func TestKWinRestartLosesAndRegainsEvidence(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWinRestartLosesAndRegainsEvidence)
}

func testKWinRestartLosesAndRegainsEvidence(t *testing.T, rel testenv.Release) {
	p := startPlasmaDesktop(t, rel, false, `evidence = "kwin"`)
	p.waitProp(t, "EvidenceAvailable", "b true")
	p.kwin.Kill(t)
	p.waitProp(t, "EvidenceAvailable", "b false")
	p.waitProp(t, "EvidenceReason", `s "KWin left the session bus; waiting for it to come back"`)

	p.kwin.Start(t)
	p.waitProp(t, "EvidenceReason", `s "no window has focus"`) // said by the reloaded script
	p.kwin.Window(t, editorApp, "main.go - editor")
	p.waitProp(t, "EvidenceAvailable", "b true")
	p.waitProp(t, "CurrentClass", `s "`+editorApp+`"`)
	if p.d.ExitCode() != -1 {
		t.Fatalf("the daemon died with KWin\n%s", p.d.Output())
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
		t.Fatal("the crashed daemon's script is gone from KWin: this test proves nothing")
	}
	p.d.Start(t)
	p.waitProp(t, "EvidenceAvailable", "b true")
	p.waitProp(t, "CurrentClass", `s "`+editorApp+`"`)
	p.kwin.Activate(t, p.distraction)
	p.waitProp(t, "CurrentClass", `s "`+distractionApp+`"`)
	if strings.Contains(p.d.Output(), "did not load") {
		t.Fatalf("the new daemon could not load its script:\n%s", p.d.Output())
	}
}
