package main

import (
	"regexp"
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
	prop            func(t *testing.T, name string) string // a property of the daemon's, as a client prints it
	closeTheOnly    func(t *testing.T)                     // closes the only window, which has focus
	openDistraction func(t *testing.T)                     // opens a window the session does not allow; it takes focus
	distraction     string                                 // that window's class
	nudges          *testenv.Monitor                       // Notify calls on the session bus
}

// count matches a number property printed as busctl ("u 1") or gdbus
// ("(<uint32 1>,)") prints it.
func count(n string) *regexp.Regexp { return regexp.MustCompile(`(^u |uint32 )` + n + `\b`) }

func checkOnlyWindowClosed(t *testing.T, s noFocusScene) {
	t.Helper()
	s.closeTheOnly(t)
	testenv.WaitUntil(t, wait, "EvidenceReason to say no window has focus", func() bool {
		return strings.Contains(s.prop(t, "EvidenceReason"), "no window has focus")
	})
	if got := s.prop(t, "EvidenceAvailable"); !strings.Contains(got, "false") {
		t.Fatalf("EvidenceAvailable with no window: %s", got)
	}
	if got := s.prop(t, "Drift"); strings.Contains(got, "drifting") {
		t.Fatalf("no window having focus is drift: Drift %s, DriftReason %s", got, s.prop(t, "DriftReason"))
	}
	if got := s.prop(t, "MinimizeCount"); !count("0").MatchString(got) {
		t.Fatalf("MinimizeCount with no window: %s", got)
	}

	// The fence, and proof the checks above could fail: a distraction now
	// is drift, nudged and minimized at once (its Drift may be over by the
	// time a client looks: minimized, it has no focus), and its nudge is the
	// only one.
	s.openDistraction(t)
	s.nudges.WaitFor(t, "Drifting: "+s.distraction, wait)
	testenv.WaitUntil(t, wait, "the distraction to be minimized", func() bool { return count("1").MatchString(s.prop(t, "MinimizeCount")) })
	for _, m := range s.nudges.Messages() {
		if strings.Contains(m, "Drifting") && !strings.Contains(m, "Drifting: "+s.distraction) {
			t.Fatalf("a nudge for something other than the distraction:\n%s", m)
		}
	}
}

func TestKWinOnlyWindowClosedIsNotDrift(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testKWinOnlyWindowClosedIsNotDrift)
}

func testKWinOnlyWindowClosedIsNotDrift(t *testing.T, rel testenv.Release) {
	p := startPlasmaDesktop(t, rel, true, `evidence = "kwin"`+"\n"+noFocusConfig)
	p.distraction.Close()
	testenv.WaitUntil(t, wait, "KWin to have one window left", func() bool { return len(p.kwin.Windows(t)) == 1 })
	nudges := testenv.StartMonitor(t, p.bus, notifyRule)
	call(t, p.d, "Start", "sstsas", "write code", "tests pass", "600", "block", "1", editorApp)
	checkOnlyWindowClosed(t, noFocusScene{
		prop:         func(t *testing.T, name string) string { return mustProp(t, p.d, name) },
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
	s.waitProp(t, "CurrentClass", `s "Editor"`)
	s.sway.Msg(t, "[app_id=Distraction]", "kill")
	testenv.WaitUntil(t, wait, "sway to have one window left", func() bool { return s.window(t, "Distraction") == nil })
	nudges := testenv.StartMonitor(t, s.bus, notifyRule)
	call(t, s.d, "Start", "sstsas", "write code", "tests pass", "600", "block", "1", "Editor")
	checkOnlyWindowClosed(t, noFocusScene{
		prop:         func(t *testing.T, name string) string { return mustProp(t, s.d, name) },
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
	k.waitProp(t, "CurrentClass", "(<'org.antidrift.Work'>,)", false)
	g.StartNotifications(t)
	nudges := testenv.StartMonitor(t, g.Bus, notifyRule)
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write code", "tests pass", "uint64 600", "block", "['org.antidrift.Work']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	checkOnlyWindowClosed(t, noFocusScene{
		prop:         func(t *testing.T, name string) string { return k.prop(t, name) },
		closeTheOnly: func(*testing.T) { work.Close() },
		openDistraction: func(t *testing.T) {
			g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
		},
		distraction: "org.antidrift.Drift",
		nudges:      nudges,
	})
}
