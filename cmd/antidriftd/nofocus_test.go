package main

import (
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The evidence contract (service/evidence.go) end to end on the modern
// desktops: when the only window closes, no window has focus, and that is
// no evidence, never drift: no nudge, no minimize, Drift not "drifting".
// GNOME Shell once reported that moment as a window without a class, which
// the core judged, nudged and tried to minimize.

// noFocusConfig confirms drift the moment an off-task window has focus
// (no grace), so whatever the core makes of a moment shows in the same
// change of its properties that shows the moment itself.
const noFocusConfig = `drift_grace = "0s"
nudge_repeat = "10m"
idle_after = "1h"
`

const notifyRule = "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"

// noFocusScene is one desktop with one window, whose class the session
// (at block) allows, as checkOnlyWindowClosed drives it.
type noFocusScene struct {
	props           propReader         // the daemon's properties, decoded
	closeTheOnly    func(t *testing.T) // closes the only window, which has focus
	openDistraction func(t *testing.T) // opens a window the session does not allow; it takes focus
	distraction     string             // that window's class
	nudges          *testenv.Monitor   // Notify calls on the session bus
}

// propReader reads the daemon's properties as Go values: a
// *testenv.Session, or gnomeProps where the daemon serves only the Shell's
// user.
type propReader interface {
	String(t testing.TB, name string) string
	Uint32(t testing.TB, name string) uint32
	Bool(t testing.TB, name string) bool
}

func checkOnlyWindowClosed(t *testing.T, s noFocusScene) {
	t.Helper()
	s.closeTheOnly(t)
	testenv.WaitFor(t, wait, "EvidenceReason to say no window has focus", func() string { return s.props.String(t, "EvidenceReason") },
		func(reason string) bool { return strings.Contains(reason, "no window has focus") })
	if got := s.props.Bool(t, "EvidenceAvailable"); got {
		t.Fatalf("EvidenceAvailable with no window: got %v, want false", got)
	}
	if got := s.props.String(t, "Drift"); got == "drifting" {
		t.Fatalf("Drift with no window having focus: got %q (DriftReason %q), want anything but drifting", got, s.props.String(t, "DriftReason"))
	}
	if got := s.props.Uint32(t, "MinimizeCount"); got != 0 {
		t.Fatalf("MinimizeCount with no window: got %d, want 0", got)
	}

	// The fence, and proof the checks above could fail: a distraction now
	// is drift, nudged and minimized at once (its Drift may be over by the
	// time a client looks: minimized, it has no focus), and its nudge is the
	// only one.
	s.openDistraction(t)
	s.nudges.WaitFor(t, "Drifting: "+s.distraction, wait)
	testenv.WaitForValue(t, wait, "MinimizeCount (the distraction minimized)", uint32(1), func() uint32 { return s.props.Uint32(t, "MinimizeCount") })
	for _, m := range s.nudges.Messages() {
		if strings.Contains(m, "Drifting") && !strings.Contains(m, "Drifting: "+s.distraction) {
			t.Fatalf("a nudge: got\n%s\nwant only nudges for %s", m, s.distraction)
		}
	}
}

func TestKWinOnlyWindowClosedIsNotDrift(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWinOnlyWindowClosedIsNotDrift)
}

func testKWinOnlyWindowClosedIsNotDrift(t *testing.T, rel testenv.Release) {
	p := startPlasmaDesktop(t, rel, true, `evidence = "kwin"`+"\n"+noFocusConfig)
	p.distraction.Close()
	testenv.WaitFor(t, wait, "KWin to have one window left", func() int { return len(p.kwin.Windows(t)) }, func(n int) bool { return n == 1 })
	nudges := testenv.StartMonitor(t, p.bus, notifyRule)
	startSession(t, p.d.Session(t), "write code", "tests pass", 600, "block", editorApp)
	checkOnlyWindowClosed(t, noFocusScene{
		props:        p.d.Session(t),
		closeTheOnly: func(*testing.T) { p.editor.Close() },
		openDistraction: func(t *testing.T) {
			p.kwin.Window(t, distractionApp, "cat videos") // a new window takes focus; at block it is minimized at once
		},
		distraction: distractionApp,
		nudges:      nudges,
	})
}

func TestSwayOnlyWindowClosedIsNotDrift(t *testing.T) {
	testenv.EachRelease(t, testenv.SwayReleases, testSwayOnlyWindowClosedIsNotDrift)
}

func testSwayOnlyWindowClosedIsNotDrift(t *testing.T, rel testenv.Release) {
	s := startSwayDesktop(t, rel, noFocusConfig)
	waitProp(t, s.d, "CurrentClass", "Editor")
	s.sway.Msg(t, "[app_id=Distraction]", "kill")
	testenv.WaitUntil(t, wait, "sway's Distraction window to be gone from its tree", func() bool { return s.window(t, "Distraction") == nil })
	nudges := testenv.StartMonitor(t, s.bus, notifyRule)
	startSession(t, s.d.Session(t), "write code", "tests pass", 600, "block", "Editor")
	checkOnlyWindowClosed(t, noFocusScene{
		props:        s.d.Session(t),
		closeTheOnly: func(t *testing.T) { s.sway.Msg(t, "[app_id=Editor]", "kill") },
		openDistraction: func(t *testing.T) {
			s.sway.Foot(t, "Distraction", "cat videos")
		},
		distraction: "Distraction",
		nudges:      nudges,
	})
}

func TestGnomeShellOnlyWindowClosedIsNotDrift(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeShellOnlyWindowClosedIsNotDrift)
}

func testGnomeShellOnlyWindowClosedIsNotDrift(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	work := g.OpenWindow(t, "org.antidrift.Work", "main.go - editor")
	k.startDaemon(t, `evidence = "gnome-shell"`+"\n"+noFocusConfig)
	gnomeWaitProp(t, k, "CurrentClass", "org.antidrift.Work")
	g.StartNotifications(t)
	nudges := testenv.StartMonitor(t, g.Bus, notifyRule)
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write code", "tests pass", "uint64 600", "block", "['org.antidrift.Work']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	checkOnlyWindowClosed(t, noFocusScene{
		props:        k.props(),
		closeTheOnly: func(*testing.T) { work.Close() },
		openDistraction: func(t *testing.T) {
			g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
		},
		distraction: "org.antidrift.Drift",
		nudges:      nudges,
	})
}
