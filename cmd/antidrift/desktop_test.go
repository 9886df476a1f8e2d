package main

import (
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// On a real (virtual) desktop, status shows the window you are in, drift
// with its reason, and where the time went as a bar chart.
func TestStatusShowsWindowsDriftAndWhereTheTimeWent(t *testing.T) {
	x, editor, distraction, s := onDesktop(t, "Distraction", "cat videos")

	s.ok(t, "start", "write code", "--done-when", "tests pass", "--for", "10m", "--allow", "Editor", "--enforce", "observe")
	x.Activate(t, distraction)
	s.waitForStatus(t, "drift on the Distraction window", map[string]any{"drift": "drifting"})
	text := s.ok(t, "status")
	contains(t, "status while drifting", text, "window       Distraction: cat videos", "drifting")
	if line := lineWith(text, "drift "); !strings.Contains(line, "Distraction") {
		t.Errorf("the drift line: got %q, want it to say why (Distraction)", line)
	}

	x.Activate(t, editor)
	s.waitForStatus(t, "the switch back to Editor", map[string]any{"current_class": "Editor", "switch_count": 2.0})
	text = s.ok(t, "status")
	t.Logf("antidrift status:\n%s", text)
	contains(t, "status after switching back", text, "window       Editor: main.go - editor", "switches     2", "time spent")
	// Distraction held focus longest (the drift grace and more), so its bar
	// is the full width; Editor has a row too.
	chart := text[strings.Index(text, "time spent"):]
	if line := lineWith(chart, "cat videos"); !strings.HasPrefix(strings.TrimSpace(line), "Distraction") || !strings.Contains(line, "████████████████") {
		t.Errorf("status: got\n%s\nwant a full bar for Distraction", text)
	}
	if line := lineWith(chart, "main.go - editor"); !strings.HasPrefix(strings.TrimSpace(line), "Editor") {
		t.Errorf("status: got\n%s\nwant a row for Editor", text)
	}
}

// onDesktop is a daemon with a drift grace of 1 s on a virtual desktop
// (Xvfb, openbox) with two xterms, an Editor ("main.go - editor"), which
// has focus, and another of class and title.
func onDesktop(t *testing.T, class, title string) (x *testenv.Display, editor, other uint32, s *session) {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "dbus-send", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	x = testenv.StartX(t)
	editor = x.XTerm(t, "Editor", "main.go - editor")
	other = x.XTerm(t, class, title)
	x.Activate(t, editor)
	s = startDaemon(t, "drift_grace = \"1s\"\n", "DISPLAY="+x.Name)
	s.waitForStatus(t, "antidriftd to see the Editor window", map[string]any{"current_class": "Editor"})
	return x, editor, other, s
}

// lineWith is the first line of text containing substr, or "".
func lineWith(text, substr string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			return l
		}
	}
	return ""
}
