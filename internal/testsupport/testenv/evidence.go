package testenv

import (
	"testing"

	"github.com/antidrift/antidrift/service"
)

// EvidenceScenario is one moment of the evidence contract
// (service/evidence.go) that every source's adapter is run through, each
// against its own world: a real X server, toplevel events as a wlroots
// compositor sends them, ReportFocus as the KWin script and the GNOME Shell
// extension send it.
type EvidenceScenario struct {
	Name  string
	App   string // the window's class or app id
	Title string
	// Closed: the window is closed after it had focus; it was the only one.
	Closed bool
}

// EvidenceScenarios are the moments every source must report alike.
var EvidenceScenarios = []EvidenceScenario{
	{Name: "a window has focus", App: "org.example.Editor", Title: "main.go - editor"},
	{Name: "a window with a long unicode title has focus", App: "org.example.Browser", Title: "cat videos — ünïcode ✓"},
	{Name: "the only window closed", App: "org.example.Editor", Title: "main.go - editor", Closed: true},
}

// CheckEvidence fails t unless got is what the contract says a source
// reports for sc: the window, with a handle of the source's, or "no window
// has focus", which is no evidence (never an Available window without a
// class, which the core would judge as drift).
func CheckEvidence(t *testing.T, sc EvidenceScenario, got service.Window) {
	t.Helper()
	if sc.Closed {
		if got != service.NoFocus() {
			t.Fatalf("%s: reported %+v, want %+v", sc.Name, got, service.NoFocus())
		}
		return
	}
	if !got.Available || got.ID == "" || got.Class != sc.App || got.Title != sc.Title || got.Reason != "" {
		t.Fatalf("%s: reported %+v, want an available window %s %q with a handle", sc.Name, got, sc.App, sc.Title)
	}
}

// CheckPushed runs the scenarios through a source that takes
// ReportFocus(handle, app, title) pushes, as the KWin script and the GNOME
// Shell extension send them ("" for each when no window has focus).
// source makes a fresh source: push hands it a report, next is the window
// it makes of it.
func CheckPushed(t *testing.T, handle string, source func() (push func(handle, app, title string), next func() service.Window)) {
	for _, sc := range EvidenceScenarios {
		t.Run(sc.Name, func(t *testing.T) {
			push, next := source()
			push(handle, sc.App, sc.Title)
			got := next()
			if sc.Closed {
				push("", "", "")
				got = next()
			}
			CheckEvidence(t, sc, got)
		})
	}
}
